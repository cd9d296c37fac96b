// Device-side fill for the runner: seeded random inputs (B) drawn on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>


namespace sparseditto {

// dtype holds a v1::Dtype value (kept out of the signature so nvcc never parses protobuf headers).
// dst[i] = uniform in [-1, 1) from a counter-based hash of (seed, i), rounded to `dtype`; with
// `absolute`, |that value| (for the |A|·|B| tolerance product). count elements of dtype.
cudaError_t FillUniform(void* dst, int64_t count, int32_t dtype, uint64_t seed, bool absolute, cudaStream_t stream);

}  // namespace sparseditto
