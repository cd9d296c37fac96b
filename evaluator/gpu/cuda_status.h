// absl::Status for the CUDA runtime, cuBLAS and cuSPARSE: every call's return code becomes a Status
// whose message names the call (its source text) and the library's own name for the error.
//
// Codes: out of memory -> ResourceExhausted; "not supported" -> FailedPrecondition (the combination
// of format, type and layout does not apply: a baseline reports it as absent); invalid value ->
// InvalidArgument; everything else -> Internal.
// Thread-safe (pure functions).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "evaluator/gpu/nvidia_driver.h"

namespace sparseditto::gpu {

// CUDA's errors when it finds no driver (cudaErrorInsufficientDriver, cudaErrorNoDevice) say "CUDA driver
// version is insufficient" on a machine that has no NVIDIA driver at all; CudaStatus then says that no
// driver was found instead (FailedPrecondition; MissingNvidiaDriver, nvidia_driver.h), with CUDA's words
// after it.
absl::Status CudaStatus(cudaError_t error, const char* call);


absl::Status CublasStatus(cublasStatus_t status, const char* call);
absl::Status CusparseStatus(cusparseStatus_t status, const char* call);

}  // namespace sparseditto::gpu

// Each evaluates `expr` once and returns from the enclosing function with a Status naming `expr`
// when it failed.
#define SD_CUDA_CHECK(expr) SD_RETURN_IF_ERROR(::sparseditto::gpu::CudaStatus((expr), #expr))
#define SD_CUBLAS_CHECK(expr) SD_RETURN_IF_ERROR(::sparseditto::gpu::CublasStatus((expr), #expr))
#define SD_CUSPARSE_CHECK(expr) SD_RETURN_IF_ERROR(::sparseditto::gpu::CusparseStatus((expr), #expr))
