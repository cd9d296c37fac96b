// Small device kernels the reference and the baselines need: densifying a CSR matrix on the device and
// widening fp16/bf16 to fp32. Plain CUDA (no Abseil, no protobuf) so nvcc compiles it as C++17.
//
// Every launcher only enqueues on `stream` and returns the launch's cudaError_t; pointers are device
// pointers owned by the caller. Thread-safe (no state).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sparseditto::gpu {

// The same numbers as sparseditto.v1.Dtype (static_assert'ed in reference_gemm.cc).
enum class ElementType : int { kFp32 = 1, kFp16 = 2, kBf16 = 3 };

// Zeroes dense (rows x ld elements of `type`, row-major, ld >= cols) and scatters the CSR matrix into
// it, converting the fp32 values to `type` (round to nearest even; exact for values CsrMatrix holds).
cudaError_t LaunchDensify(int64_t rows, int64_t cols, int64_t ld, const int32_t* row_offsets,
                          const int32_t* col_indices, const float* values, ElementType type,
                          void* dense, cudaStream_t stream);

// out[i] = float(in[i]) for i < count, `in` holding `type` elements (fp32 is copied).
cudaError_t LaunchConvertToFloat(const void* in, ElementType type, int64_t count, float* out,
                                 cudaStream_t stream);

}  // namespace sparseditto::gpu
