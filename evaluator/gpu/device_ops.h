// Host-callable device operations shared by the reference and the baselines, with Status errors:
// building a dense copy of A on the device, and widening a device array to fp32.
// Thread-safety: none beyond CUDA's own; use from one thread.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/gpu/device_buffer.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto::gpu {

// A dense row-major copy of `a` on the current device, a.rows x a.cols elements of `dtype`
// (DTYPE_UNSPECIFIED means fp32). Synchronous: it returns after the copy is complete.
// Errors: ResourceExhausted (naming the size and the device's free memory) when it does not fit;
// InvalidArgument when a.nnz() or the size overflows; Internal for other CUDA failures.
absl::StatusOr<DeviceBuffer> DensifyOnDevice(const CsrMatrix& a, v1::Dtype dtype, const char* what);

// out[i] = float(in[i]) for i < count, `in` holding `dtype` elements (device pointers); enqueued on
// `stream`. Errors: InvalidArgument for DTYPE_UNSPECIFIED or count < 0; Internal for launch failures.
absl::Status ConvertToFloatOnDevice(const void* in, v1::Dtype dtype, int64_t count, float* out,
                                    cudaStream_t stream);

}  // namespace sparseditto::gpu
