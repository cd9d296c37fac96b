#include "evaluator/gpu/cuda_status.h"

#include "fmt/format.h"

namespace sparseditto::gpu {

absl::Status CudaStatus(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      fmt::format("{} failed: {} ({})", call, cudaGetErrorName(error), cudaGetErrorString(error));
  switch (error) {
    case cudaErrorMemoryAllocation: return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue: return absl::InvalidArgumentError(message);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      if (std::optional<std::string> missing = MissingNvidiaDriver()) {
        return absl::FailedPreconditionError(fmt::format("{} failed: {} (CUDA said: {}, {})", call, *missing,
                                                         cudaGetErrorName(error), cudaGetErrorString(error)));
      }
      return absl::FailedPreconditionError(message);
    default: return absl::InternalError(message);
  }
}

absl::Status CublasStatus(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message = fmt::format("{} failed: {}", call, cublasGetStatusString(status));
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED: return absl::ResourceExhaustedError(message);
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return absl::FailedPreconditionError(message);
    case CUBLAS_STATUS_INVALID_VALUE: return absl::InvalidArgumentError(message);
    default: return absl::InternalError(message);
  }
}

absl::Status CusparseStatus(cusparseStatus_t status, const char* call) {
  if (status == CUSPARSE_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message = fmt::format("{} failed: {} ({})", call, cusparseGetErrorName(status),
                                          cusparseGetErrorString(status));
  switch (status) {
    case CUSPARSE_STATUS_ALLOC_FAILED:
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return absl::ResourceExhaustedError(message);
    case CUSPARSE_STATUS_NOT_SUPPORTED:
    case CUSPARSE_STATUS_ARCH_MISMATCH: return absl::FailedPreconditionError(message);
    case CUSPARSE_STATUS_INVALID_VALUE: return absl::InvalidArgumentError(message);
    default: return absl::InternalError(message);
  }
}

}  // namespace sparseditto::gpu
