// A device buffer with guard zones on both sides that reveal writes outside it, and the test for a
// lost CUDA context. Not thread-safe; the current CUDA device is used.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/gpu/device_buffer.h"

namespace sparseditto {

// True for the errors after which the CUDA context is unusable (illegal address, launch failure...):
// the process must exit and be replaced.
bool IsStickyCudaError(cudaError_t error);

// [guard | payload | guard]; the guards hold kGuardByte.
class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 64 * 1024;
  static constexpr unsigned char kGuardByte = 0xA5;

  static absl::StatusOr<GuardedBuffer> Allocate(size_t payload_bytes);
  void* payload() const { return storage_.as<char>() + kGuardBytes; }
  size_t payload_bytes() const { return payload_bytes_; }
  // The whole cudaMalloc allocation (for CUDA IPC: the payload is at kGuardBytes within it).
  void* allocation() const { return storage_.get(); }

  // Rewrites both guards (synchronous).
  absl::Status ResetGuards();
  // OK if both guards are intact; otherwise DataLoss saying how many bytes before/after changed.
  absl::Status CheckGuards() const;

 private:
  gpu::DeviceBuffer storage_;
  size_t payload_bytes_ = 0;
};

}  // namespace sparseditto
