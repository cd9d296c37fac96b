#include "evaluator/runner/guarded_buffer.h"

#include <vector>

#include "evaluator/gpu/cuda_status.h"
#include "fmt/format.h"

namespace sparseditto {

bool IsStickyCudaError(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<GuardedBuffer> GuardedBuffer::Allocate(size_t payload_bytes) {
  GuardedBuffer buffer;
  auto storage = gpu::DeviceBuffer::Allocate(payload_bytes + 2 * kGuardBytes, "guarded output");
  if (!storage.ok()) return storage.status();
  buffer.storage_ = *std::move(storage);
  buffer.payload_bytes_ = payload_bytes;
  SD_RETURN_IF_ERROR(buffer.ResetGuards());
  return buffer;
}

absl::Status GuardedBuffer::ResetGuards() {
  char* base = storage_.as<char>();
  SD_CUDA_CHECK(cudaMemset(base, kGuardByte, kGuardBytes));
  SD_CUDA_CHECK(cudaMemset(base + kGuardBytes + payload_bytes_, kGuardByte, kGuardBytes));
  return absl::OkStatus();
}

absl::Status GuardedBuffer::CheckGuards() const {
  std::vector<unsigned char> before(kGuardBytes), after(kGuardBytes);
  const char* base = storage_.as<const char>();
  SD_CUDA_CHECK(cudaMemcpy(before.data(), base, kGuardBytes, cudaMemcpyDeviceToHost));
  SD_CUDA_CHECK(cudaMemcpy(after.data(), base + kGuardBytes + payload_bytes_, kGuardBytes, cudaMemcpyDeviceToHost));
  size_t changed_before = 0, changed_after = 0;
  for (unsigned char b : before) changed_before += (b != kGuardByte);
  for (unsigned char b : after) changed_after += (b != kGuardByte);
  if (changed_before + changed_after == 0) return absl::OkStatus();
  return absl::DataLossError(fmt::format("wrote outside C: {} bytes before it and {} bytes after it changed",
                                         changed_before, changed_after));
}

}  // namespace sparseditto
