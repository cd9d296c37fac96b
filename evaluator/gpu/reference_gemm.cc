#include "evaluator/gpu/reference_gemm.h"

#include <climits>

#include "common/dtype.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_ops.h"
#include "fmt/format.h"

namespace sparseditto::gpu {

absl::StatusOr<std::unique_ptr<ReferenceGemm>> ReferenceGemm::Create(const CsrMatrix& a, v1::Dtype dtype) {
  if (DtypeBytes(dtype) == 0) {
    return absl::InvalidArgumentError(fmt::format("ReferenceGemm: unsupported dtype {}", static_cast<int>(dtype)));
  }
  if (a.rows < 1 || a.cols < 1 || a.rows > INT_MAX || a.cols > INT_MAX) {
    return absl::InvalidArgumentError(fmt::format("ReferenceGemm: bad shape {}x{}", a.rows, a.cols));
  }
  std::unique_ptr<ReferenceGemm> ref(new ReferenceGemm());
  ref->rows_ = a.rows;
  ref->cols_ = a.cols;
  ref->dtype_ = dtype;
  SD_ASSIGN_OR_RETURN(ref->dense_a_, DensifyOnDevice(a, v1::DTYPE_FP32, "reference dense A (fp32)"));
  SD_ASSIGN_OR_RETURN(ref->cublas_, MakeCublasHandle());
  SD_CUBLAS_CHECK(cublasSetMathMode(ref->cublas_.get(), CUBLAS_PEDANTIC_MATH));
  return ref;
}

absl::Status ReferenceGemm::Compute(const void* b_device, int64_t n, float* c_ref_device, cudaStream_t stream,
                                    v1::Layout layout) {
  if (n < 1 || n > INT_MAX) return absl::InvalidArgumentError(fmt::format("ReferenceGemm: bad n {}", n));
  if (layout != v1::LAYOUT_KN && layout != v1::LAYOUT_NK) {
    return absl::InvalidArgumentError(fmt::format("ReferenceGemm: bad layout {}", static_cast<int>(layout)));
  }
  const float* b = static_cast<const float*>(b_device);
  if (dtype_ != v1::DTYPE_FP32) {
    const size_t bytes = static_cast<size_t>(cols_) * n * sizeof(float);
    if (b_fp32_.get() == nullptr || b_fp32_.size() < bytes) {
      b_fp32_ = DeviceBuffer();  // free first so the two never coexist
      SD_ASSIGN_OR_RETURN(b_fp32_, DeviceBuffer::Allocate(bytes, "reference B (fp32)"));
    }
    SD_RETURN_IF_ERROR(ConvertToFloatOnDevice(b_device, dtype_, cols_ * n, b_fp32_.as<float>(), stream));
    b = b_fp32_.as<float>();
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int m = static_cast<int>(n), rows = static_cast<int>(rows_), k = static_cast<int>(cols_);
  SD_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream));
  if (layout == v1::LAYOUT_NK) {
    // Column-major, Y^T = C (rows x n, ld rows) = op(A^T as stored)^T * X^T = A * B.
    SD_CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, rows, m, k, &alpha, dense_a_.as<float>(), k,
                                b, k, &beta, c_ref_device, rows));
    return absl::OkStatus();
  }
  SD_CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, rows, k, &alpha, b, m,
                              dense_a_.as<float>(), k, &beta, c_ref_device, m));
  return absl::OkStatus();
}

}  // namespace sparseditto::gpu
