#include "evaluator/runner/stream_gate.h"

#include <utility>

#include "evaluator/gpu/cuda_status.h"
#include "evaluator/runner/harness_kernels.h"

namespace sparseditto {

StreamGate::~StreamGate() {
  if (host_ != nullptr) cudaFreeHost(host_);
}

StreamGate::StreamGate(StreamGate&& other) noexcept
    : host_(std::exchange(other.host_, nullptr)), device_(std::exchange(other.device_, nullptr)) {}

StreamGate& StreamGate::operator=(StreamGate&& other) noexcept {
  if (this != &other) {
    if (host_ != nullptr) cudaFreeHost(host_);
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, nullptr);
  }
  return *this;
}

absl::StatusOr<StreamGate> StreamGate::Create(const char* what) {
  StreamGate gate;
  const cudaError_t error = cudaHostAlloc(reinterpret_cast<void**>(&gate.host_), 2 * sizeof(int), cudaHostAllocMapped);
  if (error != cudaSuccess) {
    gate.host_ = nullptr;
    return gpu::CudaStatus(error, what);
  }
  SD_RETURN_IF_ERROR(gpu::CudaStatus(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate.device_), gate.host_, 0), what));
  __atomic_store_n(&gate.host_[0], 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&gate.host_[1], -1, __ATOMIC_SEQ_CST);
  return gate;
}

absl::Status StreamGate::Close(cudaStream_t stream, int64_t timeout_ns, const char* what) {
  __atomic_store_n(&host_[0], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&host_[1], -1, __ATOMIC_SEQ_CST);
  return gpu::CudaStatus(LaunchStreamGate(device_, device_ + 1, timeout_ns, stream), what);
}

}  // namespace sparseditto
