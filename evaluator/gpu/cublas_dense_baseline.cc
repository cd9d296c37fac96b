// "cublas_dense": C = densify(A) * B with cublasGemmEx (see baseline.h for the contract).
#include <climits>

#include "common/dtype.h"
#include "evaluator/gpu/baseline_impls.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_buffer.h"
#include "evaluator/gpu/device_ops.h"
#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

// cuBLAS's documented recommendation for a user workspace: 32 MiB on Hopper (sm_90) and newer, 4 MiB
// before. The architecture is read from the device.
size_t RecommendedWorkspaceBytes(int compute_major) {
  return compute_major >= 9 ? (size_t{32} << 20) : (size_t{4} << 20);
}

class CublasDenseBaseline : public Baseline {
 public:
  std::string name() const override { return "cublas_dense"; }

  absl::Status Prepare(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& /*pattern*/,
                       const std::vector<int64_t>& n_values, v1::Layout layout) override {
    if (DtypeBytes(dtype) == 0) return absl::InvalidArgumentError("cublas_dense: dtype unspecified");
    if (layout != v1::LAYOUT_KN && layout != v1::LAYOUT_NK) {
      return absl::InvalidArgumentError(fmt::format("cublas_dense: bad layout {}", static_cast<int>(layout)));
    }
    layout_ = layout;
    if (a.rows < 1 || a.cols < 1 || a.rows > INT_MAX || a.cols > INT_MAX) {
      return absl::FailedPreconditionError(fmt::format("cublas_dense: shape {}x{} beyond cuBLAS's int", a.rows, a.cols));
    }
    for (int64_t n : n_values) {
      if (n < 1 || n > INT_MAX) return absl::InvalidArgumentError(fmt::format("cublas_dense: bad n {}", n));
    }
    rows_ = a.rows;
    cols_ = a.cols;
    type_ = CudaDataType(dtype);
    auto dense = DensifyOnDevice(a, dtype, "cublas_dense dense A");
    if (absl::IsResourceExhausted(dense.status())) {
      return absl::FailedPreconditionError(std::string(dense.status().message()));
    }
    SD_RETURN_IF_ERROR(dense.status());
    dense_a_ = *std::move(dense);

    int device = 0;
    cudaDeviceProp prop;
    SD_CUDA_CHECK(cudaGetDevice(&device));
    SD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    SD_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::Allocate(RecommendedWorkspaceBytes(prop.major),
                                                           "cublas_dense workspace"));
    SD_ASSIGN_OR_RETURN(cublas_, MakeCublasHandle());
    // Default math: tensor cores for fp16/bf16 inputs; with CUBLAS_COMPUTE_32F and fp32 inputs no
    // TF32 is used (that needs CUBLAS_COMPUTE_32F_FAST_TF32 or CUBLAS_TF32_TENSOR_OP_MATH).
    SD_CUBLAS_CHECK(cublasSetMathMode(cublas_.get(), CUBLAS_DEFAULT_MATH));
    SD_RETURN_IF_ERROR(BindStream(nullptr));
    note_ = fmt::format("dense {}x{} {}, CUBLAS_COMPUTE_32F, workspace {} MiB{}", rows_, cols_, DtypeName(dtype),
                        workspace_.size() >> 20, layout == v1::LAYOUT_NK ? ", layout nk (Y = X * A^T)" : "");
    return absl::OkStatus();
  }

  absl::Status Run(const void* b, void* c, int64_t n, cudaStream_t stream) override {
    if (cublas_ == nullptr) return absl::FailedPreconditionError("cublas_dense: Run before Prepare");
    if (n < 1 || n > INT_MAX) return absl::InvalidArgumentError(fmt::format("cublas_dense: bad n {}", n));
    if (stream != stream_ || !stream_bound_) SD_RETURN_IF_ERROR(BindStream(stream));
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(n), rows = static_cast<int>(rows_), k = static_cast<int>(cols_);
    if (layout_ == v1::LAYOUT_NK) {
      // Row-major Y = X * A^T (n x rows) is column-major C = A * X^T: A's row-major storage read
      // transposed (ld cols), X's row-major storage as column-major B (ld cols), C with ld rows.
      SD_CUBLAS_CHECK(cublasGemmEx(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, rows, m, k, &alpha, dense_a_.get(), type_,
                                   k, b, type_, k, &beta, c, type_, rows, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      return absl::OkStatus();
    }
    // Row-major C = A * B is column-major C^T = B^T * A^T.
    SD_CUBLAS_CHECK(cublasGemmEx(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, rows, k, &alpha, b, type_, m,
                                 dense_a_.get(), type_, k, &beta, c, type_, m, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
    return absl::OkStatus();
  }

  std::string note() const override { return note_; }

 private:
  // cublasSetStream resets the workspace to cuBLAS's own pool, so the workspace is set again after it.
  absl::Status BindStream(cudaStream_t stream) {
    SD_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream));
    SD_CUBLAS_CHECK(cublasSetWorkspace(cublas_.get(), workspace_.get(), workspace_.size()));
    stream_ = stream;
    stream_bound_ = true;
    return absl::OkStatus();
  }

  int64_t rows_ = 0;
  int64_t cols_ = 0;
  cudaDataType_t type_ = CUDA_R_32F;
  v1::Layout layout_ = v1::LAYOUT_KN;
  DeviceBuffer dense_a_;
  DeviceBuffer workspace_;
  CublasHandle cublas_;
  cudaStream_t stream_ = nullptr;
  bool stream_bound_ = false;
  std::string note_;
};

}  // namespace

std::unique_ptr<Baseline> NewCublasDenseBaseline() { return std::make_unique<CublasDenseBaseline>(); }

}  // namespace sparseditto::gpu
