#include "evaluator/gpu/cusparse_spmm_baseline.h"

#include <numeric>

#include "common/dtype.h"
#include "evaluator/gpu/cuda_status.h"
#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

// Prefixes a status's message with the baseline's name, keeping its code.
absl::Status Named(const absl::Status& status, const std::string& name) {
  if (status.ok()) return status;
  return absl::Status(status.code(), fmt::format("{}: {}", name, std::string(status.message())));
}

}  // namespace

absl::Status CusparseSpmmBaseline::Prepare(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                                           const std::vector<int64_t>& n_values, v1::Layout layout) {
  absl::Status s = PrepareImpl(a, dtype, pattern, n_values, layout);
  // A format whose algorithm takes only row-major B and C may answer "invalid value" rather than "not
  // supported": in NK that is the layout refused, an absent baseline, not a harness failure.
  if (layout == v1::LAYOUT_NK && absl::IsInvalidArgument(s) && s.message().find("cusparse") != std::string_view::npos) {
    s = absl::FailedPreconditionError(
        fmt::format("layout nk (column-major B and C) refused: {}", std::string(s.message())));
  }
  return Named(s, name());
}

absl::Status CusparseSpmmBaseline::Run(const void* b, void* c, int64_t n, cudaStream_t stream) {
  return Named(Multiply(b, c, n, stream), name());
}

absl::Status CusparseSpmmBaseline::PrepareImpl(const CsrMatrix& a, v1::Dtype dtype,
                                               const v1::PatternSpec& pattern,
                                               const std::vector<int64_t>& n_values, v1::Layout layout) {
  if (DtypeBytes(dtype) == 0) return absl::InvalidArgumentError("dtype unspecified");
  if (layout != v1::LAYOUT_KN && layout != v1::LAYOUT_NK) {
    return absl::InvalidArgumentError(fmt::format("bad layout {}", static_cast<int>(layout)));
  }
  const bool nk = layout == v1::LAYOUT_NK;
  if (n_values.empty()) return absl::InvalidArgumentError("no n values");
  for (int64_t n : n_values) {
    if (n < 1) return absl::InvalidArgumentError(fmt::format("bad n {}", n));
  }
  rows_ = a.rows;
  cols_ = a.cols;
  dtype_ = dtype;
  const cudaDataType_t type = CudaDataType(dtype);
  std::string format_note;  // BuildMatrix first: a format that does not apply is refused before any GPU call
  SD_ASSIGN_OR_RETURN(matrix_, BuildMatrix(a, dtype, pattern, &storage_, &format_note));
  SD_ASSIGN_OR_RETURN(handle_, MakeCusparseHandle());
  SD_ASSIGN_OR_RETURN(placeholder_, DeviceBuffer::Allocate(256, "dense placeholder"));

  const float alpha = 1.0f, beta = 0.0f;
  size_t workspace_bytes = 0;
  for (int64_t n : n_values) {
    if (dense_.count(n) > 0) continue;
    Dense d;
    SD_ASSIGN_OR_RETURN(d.b, nk ? MakeColMajorDnMat(cols_, n, placeholder_.get(), type)
                                : MakeRowMajorDnMat(cols_, n, placeholder_.get(), type));
    SD_ASSIGN_OR_RETURN(d.c, nk ? MakeColMajorDnMat(rows_, n, placeholder_.get(), type)
                                : MakeRowMajorDnMat(rows_, n, placeholder_.get(), type));
    size_t bytes = 0;
    SD_CUSPARSE_CHECK(cusparseSpMM_bufferSize(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                              CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix_.get(),
                                              d.b.get(), &beta, d.c.get(), CUDA_R_32F, algorithm(), &bytes));
    workspace_bytes = std::max(workspace_bytes, bytes);
    dense_.emplace(n, std::move(d));
  }
  SD_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::Allocate(workspace_bytes, "cuSPARSE SpMM workspace"));

  // One real product for the smallest n, so a combination refused only at run time shows here.
  const int64_t n_min = dense_.begin()->first;
  const size_t element = DtypeBytes(dtype);
  SD_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(cols_ * n_min * element, "trial B"));
  SD_ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Allocate(rows_ * n_min * element, "trial C"));
  SD_CUDA_CHECK(cudaMemset(b.get(), 0, b.size()));
  SD_RETURN_IF_ERROR(Multiply(b.get(), c.get(), n_min, nullptr));
  SD_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  note_ = fmt::format("{}; workspace {} bytes{}", format_note, workspace_bytes,
                      nk ? "; layout nk (B and C CUSPARSE_ORDER_COL)" : "");
  return absl::OkStatus();
}

absl::Status CusparseSpmmBaseline::Multiply(const void* b, void* c, int64_t n, cudaStream_t stream) {
  if (matrix_ == nullptr) return absl::FailedPreconditionError("Run before Prepare");
  auto it = dense_.find(n);
  if (it == dense_.end()) return absl::InvalidArgumentError(fmt::format("n = {} was not prepared", n));
  const float alpha = 1.0f, beta = 0.0f;
  SD_CUSPARSE_CHECK(cusparseSetStream(handle_.get(), stream));
  SD_CUSPARSE_CHECK(cusparseDnMatSetValues(it->second.b.get(), const_cast<void*>(b)));
  SD_CUSPARSE_CHECK(cusparseDnMatSetValues(it->second.c.get(), c));
  SD_CUSPARSE_CHECK(cusparseSpMM(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                 &alpha, matrix_.get(), it->second.b.get(), &beta, it->second.c.get(),
                                 CUDA_R_32F, algorithm(), workspace_.get()));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SquareBlockSize(const CsrMatrix& a, const v1::PatternSpec& pattern, const char* format) {
  if (pattern.family() != v1::PATTERN_FAMILY_BLOCK || pattern.block_rows() < 1 || pattern.block_cols() < 1) {
    return absl::FailedPreconditionError(fmt::format("{} needs a block pattern with block sizes", format));
  }
  const int64_t block = pattern.block_rows() == pattern.block_cols()
                            ? pattern.block_rows()
                            : std::gcd<int64_t>(pattern.block_rows(), pattern.block_cols());
  if (block < 2) {
    return absl::FailedPreconditionError(fmt::format(
        "{} with square blocks: block {}x{} gives block size 1", format, pattern.block_rows(), pattern.block_cols()));
  }
  if (a.rows % block != 0 || a.cols % block != 0) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: shape {}x{} is not a multiple of the block size {}", format, a.rows, a.cols, block));
  }
  return block;
}

}  // namespace sparseditto::gpu
