// "cusparselt_2to4": C = A * B with cuSPARSELt's 2:4 structured-sparse GEMM (see baseline.h).
// A (rows x cols, row-major, non-transposed) is the structured operand: 2:4 along its rows, which is
// the N:M family's grouping (n of every m consecutive columns). B and C are dense row-major; compute
// type fp32; output in the task dtype. A is densified on the device, checked with
// cusparseLtSpMMAPruneCheck2 (a matrix cuSPARSELt does not see as 2:4 is absent, never pruned) and
// compressed once (cusparseLtSpMMACompress2, independent of n). One plan per n, default algorithm
// (no cusparseLtMatmulSearch: like the other baselines, what a user gets without tuning).
// Per-n availability: cuSPARSELt refuses some shapes (dimensions and leading dimensions must be
// multiples of 8 or 16 elements depending on version and type). Prepare is absent only when no n is
// accepted; Run of a refused n returns FailedPrecondition naming the reason.
#include <climits>
#include <map>

#include "common/dtype.h"
#include "evaluator/gpu/baseline_impls.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/cusparselt_loader.h"
#include "evaluator/gpu/device_ops.h"
#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

constexpr uint32_t kAlignment = 16;  // bytes; cudaMalloc pointers are 256-byte aligned

// A cuSPARSELt call's status; descriptor/plan refusals mean "this shape is not supported".
absl::Status LtStatus(cusparseStatus_t status, const char* call, bool refusal_is_absent) {
  absl::Status s = CusparseStatus(status, call);
  if (refusal_is_absent && (absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s))) {
    return absl::FailedPreconditionError(s.message());
  }
  return s;
}
#define SD_LT_SHAPE(expr) SD_RETURN_IF_ERROR(LtStatus((expr), #expr, true))
#define SD_LT_CHECK(expr) SD_RETURN_IF_ERROR(LtStatus((expr), #expr, false))

struct Plan {  // everything for one n; heap-allocated so the addresses cuSPARSELt keeps stay valid
  lt::Opaque b, c, matmul, alg, plan;
  bool b_ok = false, c_ok = false, alg_ok = false, plan_ok = false;
  size_t workspace = 0;
};

class CusparseLt2to4Baseline : public Baseline {
 public:
  ~CusparseLt2to4Baseline() override {
    if (api_ == nullptr) return;
    for (auto& [n, p] : plans_) {
      if (p->plan_ok) api_->MatmulPlanDestroy(&p->plan);
      if (p->alg_ok && api_->MatmulAlgSelectionDestroy != nullptr) api_->MatmulAlgSelectionDestroy(&p->alg);
      if (p->c_ok) api_->MatDescriptorDestroy(&p->c);
      if (p->b_ok) api_->MatDescriptorDestroy(&p->b);
    }
    if (a_ok_) api_->MatDescriptorDestroy(a_.get());
    if (handle_ok_) api_->Destroy(handle_.get());
  }

  std::string name() const override { return "cusparselt_2to4"; }

  absl::Status Prepare(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                       const std::vector<int64_t>& n_values, v1::Layout layout) override {
    if (layout != v1::LAYOUT_KN && layout != v1::LAYOUT_NK) {
      return absl::InvalidArgumentError(fmt::format("cusparselt_2to4: bad layout {}", static_cast<int>(layout)));
    }
    // NK: B and C column-major (ld cols and rows), the caller's X and Y row-major as they are.
    order_ = layout == v1::LAYOUT_NK ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW;
    absl::Status s = PrepareImpl(a, dtype, pattern, n_values);
    return s.ok() ? s : absl::Status(s.code(), fmt::format("cusparselt_2to4: {}", std::string(s.message())));
  }

  absl::Status Run(const void* b, void* c, int64_t n, cudaStream_t stream) override {
    if (!compressed_ready_) return absl::FailedPreconditionError("cusparselt_2to4: Run before Prepare");
    auto it = plans_.find(n);
    if (it == plans_.end()) {
      auto refused = refused_.find(n);
      if (refused != refused_.end()) return absl::FailedPreconditionError(refused->second);
      return absl::InvalidArgumentError(fmt::format("cusparselt_2to4: n = {} was not prepared", n));
    }
    const float alpha = 1.0f, beta = 0.0f;
    SD_LT_CHECK(api_->Matmul(handle_.get(), &it->second->plan, &alpha, compressed_.get(), b, &beta, c, c,
                             workspace_.get(), &stream, 1));
    return absl::OkStatus();
  }

  std::string note() const override { return note_; }

 private:
  absl::Status PrepareImpl(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                           const std::vector<int64_t>& n_values) {
    if (dtype != v1::DTYPE_FP16 && dtype != v1::DTYPE_BF16) {
      return absl::FailedPreconditionError(fmt::format("2:4 baseline is for fp16/bf16, not {}", DtypeName(dtype)));
    }
    if (pattern.family() != v1::PATTERN_FAMILY_N_M) {
      return absl::FailedPreconditionError("not an N:M pattern");
    }
    SD_ASSIGN_OR_RETURN(api_, lt::LoadCusparseLt());
    const cudaDataType type = CudaDataType(dtype);
    SD_LT_CHECK(api_->Init(handle_.get()));
    handle_ok_ = true;
    SD_LT_SHAPE(api_->StructuredDescriptorInit(handle_.get(), a_.get(), a.rows, a.cols, a.cols, kAlignment, type,
                                               CUSPARSE_ORDER_ROW, lt::kSparsity50Percent));
    a_ok_ = true;

    size_t workspace = 0;
    for (int64_t n : n_values) {
      if (n < 1) return absl::InvalidArgumentError(fmt::format("bad n {}", n));
      if (plans_.count(n) > 0 || refused_.count(n) > 0) continue;
      auto plan = std::make_unique<Plan>();
      const absl::Status made = MakePlan(a, n, type, plan.get());
      if (absl::IsFailedPrecondition(made)) {
        refused_[n] = fmt::format("cusparselt_2to4: n = {} refused: {}", n, std::string(made.message()));
        DestroyPlan(plan.get());
        continue;
      }
      if (!made.ok()) {
        DestroyPlan(plan.get());
        return made;
      }
      workspace = std::max(workspace, plan->workspace);
      plans_.emplace(n, std::move(plan));
    }
    if (plans_.empty()) {
      std::string why = refused_.empty() ? "no n values" : refused_.begin()->second;
      return absl::FailedPreconditionError(fmt::format("no n accepted ({})", why));
    }
    SD_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::Allocate(workspace, "cuSPARSELt workspace"));
    SD_RETURN_IF_ERROR(Compress(a, dtype));

    // One real product for the smallest accepted n (zeroed scratch B, fresh C).
    const int64_t n_min = plans_.begin()->first;
    SD_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(a.cols * n_min * 2, "trial B"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Allocate(a.rows * n_min * 2, "trial C"));
    SD_CUDA_CHECK(cudaMemset(b.get(), 0, b.size()));
    SD_RETURN_IF_ERROR(Run(b.get(), c.get(), n_min, nullptr));
    SD_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    note_ = fmt::format("cuSPARSELt {}.{}.{} ({}), {}, {} of {} n values accepted, workspace {} bytes{}", api_->major,
                        api_->minor, api_->patch, api_->path, DtypeName(dtype), plans_.size(),
                        plans_.size() + refused_.size(), workspace,
                        order_ == CUSPARSE_ORDER_COL ? ", layout nk (B and C CUSPARSE_ORDER_COL)" : "");
    return absl::OkStatus();
  }

  absl::Status MakePlan(const CsrMatrix& a, int64_t n, cudaDataType type, Plan* p) {
    const bool col = order_ == CUSPARSE_ORDER_COL;
    SD_LT_SHAPE(api_->DenseDescriptorInit(handle_.get(), &p->b, a.cols, n, col ? a.cols : n, kAlignment, type, order_));
    p->b_ok = true;
    SD_LT_SHAPE(api_->DenseDescriptorInit(handle_.get(), &p->c, a.rows, n, col ? a.rows : n, kAlignment, type, order_));
    p->c_ok = true;
    SD_LT_SHAPE(api_->MatmulDescriptorInit(handle_.get(), &p->matmul, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           CUSPARSE_OPERATION_NON_TRANSPOSE, a_.get(), &p->b, &p->c, &p->c,
                                           lt::kCompute32F));
    SD_LT_SHAPE(api_->MatmulAlgSelectionInit(handle_.get(), &p->alg, &p->matmul, lt::kMatmulAlgDefault));
    p->alg_ok = true;
    SD_LT_SHAPE(api_->MatmulPlanInit(handle_.get(), &p->plan, &p->matmul, &p->alg));
    p->plan_ok = true;
    SD_LT_CHECK(api_->MatmulGetWorkspace(handle_.get(), &p->plan, &p->workspace));
    return absl::OkStatus();
  }

  void DestroyPlan(Plan* p) {
    if (p->plan_ok) api_->MatmulPlanDestroy(&p->plan);
    if (p->alg_ok && api_->MatmulAlgSelectionDestroy != nullptr) api_->MatmulAlgSelectionDestroy(&p->alg);
    if (p->c_ok) api_->MatDescriptorDestroy(&p->c);
    if (p->b_ok) api_->MatDescriptorDestroy(&p->b);
    p->plan_ok = p->alg_ok = p->c_ok = p->b_ok = false;
  }

  // Densifies A, checks that cuSPARSELt sees it as 2:4, and compresses it.
  absl::Status Compress(const CsrMatrix& a, v1::Dtype dtype) {
    auto dense = DensifyOnDevice(a, dtype, "cuSPARSELt dense A");
    if (absl::IsResourceExhausted(dense.status())) return absl::FailedPreconditionError(dense.status().message());
    SD_RETURN_IF_ERROR(dense.status());
    SD_ASSIGN_OR_RETURN(DeviceBuffer valid, DeviceBuffer::Allocate(sizeof(int), "prune check flag"));
    SD_LT_CHECK(api_->SpMMAPruneCheck2(handle_.get(), a_.get(), /*is_sparse_a=*/1, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       dense->get(), valid.as<int>(), nullptr));
    int invalid = 1;
    SD_CUDA_CHECK(cudaMemcpy(&invalid, valid.get(), sizeof(int), cudaMemcpyDeviceToHost));
    if (invalid != 0) {  // cuSPARSELt writes 0 when the matrix is correctly pruned
      return absl::FailedPreconditionError("the matrix is not 2:4 along its rows as cuSPARSELt requires");
    }
    size_t compressed_bytes = 0, buffer_bytes = 0;
    SD_LT_CHECK(api_->SpMMACompressedSize2(handle_.get(), a_.get(), &compressed_bytes, &buffer_bytes));
    SD_ASSIGN_OR_RETURN(compressed_, DeviceBuffer::Allocate(compressed_bytes, "cuSPARSELt compressed A"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(buffer_bytes, "cuSPARSELt compress buffer"));
    SD_LT_CHECK(api_->SpMMACompress2(handle_.get(), a_.get(), /*is_sparse_a=*/1, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                     dense->get(), compressed_.get(), buffer.get(), nullptr));
    SD_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    compressed_ready_ = true;
    return absl::OkStatus();
  }

  const lt::Api* api_ = nullptr;
  std::unique_ptr<lt::Opaque> handle_ = std::make_unique<lt::Opaque>();
  std::unique_ptr<lt::Opaque> a_ = std::make_unique<lt::Opaque>();
  bool handle_ok_ = false, a_ok_ = false, compressed_ready_ = false;
  cusparseOrder_t order_ = CUSPARSE_ORDER_ROW;  // of B and C: ROW for the KN layout, COL for NK
  std::map<int64_t, std::unique_ptr<Plan>> plans_;
  std::map<int64_t, std::string> refused_;
  DeviceBuffer compressed_;
  DeviceBuffer workspace_;
  std::string note_;
};

}  // namespace

std::unique_ptr<Baseline> NewCusparseLt2to4Baseline() { return std::make_unique<CusparseLt2to4Baseline>(); }

}  // namespace sparseditto::gpu
