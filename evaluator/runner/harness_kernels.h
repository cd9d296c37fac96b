// Kernels of the harness itself: seeded random inputs drawn on the device, and the stream gate.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>


namespace sparseditto {

// dtype holds a v1::Dtype value (kept out of the signature so nvcc never parses protobuf headers).
// dst[i] = uniform in [-1, 1) from a counter-based hash of (seed, i), rounded to `dtype`; with
// `absolute`, |that value| (for the |A|·|B| tolerance product). count elements of dtype.
cudaError_t FillUniform(void* dst, int64_t count, int32_t dtype, uint64_t seed, bool absolute, cudaStream_t stream);

// The gate kernel's launch: `ctas` one-thread CTAs with `shared_bytes` of dynamic shared memory each.
// {1, 0}: holds one stream. WholeGpuGateShape: one CTA a streaming multiprocessor with all the shared
// memory a CTA may have (which also holds every other stream: no other CTA fits on the GPU).
struct GateShape {
  unsigned ctas = 1;
  size_t shared_bytes = 0;
};

// Enqueues the gate kernel on `stream`: it holds the stream closed until the host writes a nonzero value
// to *open_flag (mapped pinned memory) or `timeout_ns` passes. CTA i sets resident[i] to 1 when it
// starts (resident: shape.ctas ints, mapped). CTA 0 writes 1 to *released_by_host when the host opened it, 0 when it timed out. Work the
// candidate enqueues on `stream` behind the gate cannot run while it is closed; work on another stream
// can, unless the gate fills the GPU (WholeGpuGateShape) and is resident. The host side (the mapped
// flags, closing and opening): StreamGate, evaluator/runner/stream_gate.h.
cudaError_t LaunchStreamGate(const volatile int* open_flag, int* released_by_host, volatile int* resident, int64_t timeout_ns,
                             const GateShape& shape, cudaStream_t stream);

// Writes the device's global timer (ns, %globaltimer: one clock for every context on the GPU) to
// *out when the kernel runs: the judge's own stamps around a candidate host's work.
cudaError_t LaunchStampGlobalTimer(uint64_t* out, cudaStream_t stream);

// Sets *any (device memory) to 1 when any of the `bytes` bytes at `p` (device memory, 4-byte aligned:
// else cudaErrorMisalignedAddress) is not `fill`, else 0; enqueued on `stream` (the judge's look at C
// while the candidate's stream is held: only the flag comes back, not C).
cudaError_t LaunchAnyByteDiffers(const void* p, size_t bytes, unsigned char fill, unsigned int* any, cudaStream_t stream);

// Sets *any (device memory) to 1 when the `bytes` bytes at `a` and at `b` (device memory, both 4-byte
// aligned: else cudaErrorMisalignedAddress; b null: cudaErrorInvalidValue) differ anywhere, else 0;
// enqueued on `stream` (the judge's check that a run left its input B as it was, against its own copy).
cudaError_t LaunchBytesDiffer(const void* a, const void* b, size_t bytes, unsigned int* any, cudaStream_t stream);

// The whole-GPU shape for the current device (SM count and opt-in shared memory read from it); also
// lets the gate kernel use that much shared memory. Errors: the CUDA calls'.
cudaError_t WholeGpuGateShape(GateShape* shape);

}  // namespace sparseditto
