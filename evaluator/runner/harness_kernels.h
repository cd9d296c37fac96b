// Kernels of the harness itself: seeded random inputs drawn on the device, and the stream gate.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>


namespace sparseditto {

// dtype holds a v1::Dtype value (kept out of the signature so nvcc never parses protobuf headers).
// dst[i] = uniform in [-1, 1) from a counter-based hash of (seed, i), rounded to `dtype`; with
// `absolute`, |that value| (for the |A|·|B| tolerance product). count elements of dtype.
cudaError_t FillUniform(void* dst, int64_t count, int32_t dtype, uint64_t seed, bool absolute, cudaStream_t stream);

// Enqueues a one-thread kernel on `stream` that holds the stream closed until the host writes a
// nonzero value to *open_flag (mapped pinned memory) or `timeout_ns` passes. It writes 1 to
// *released_by_host when the host opened it, 0 when it timed out. Work the candidate enqueues on
// `stream` behind the gate cannot run while it is closed; work on any other stream can. The host side
// (the mapped flags, closing and opening): StreamGate, evaluator/runner/stream_gate.h.
cudaError_t LaunchStreamGate(const volatile int* open_flag, int* released_by_host, int64_t timeout_ns,
                             cudaStream_t stream);

}  // namespace sparseditto
