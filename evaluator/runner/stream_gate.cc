#include "evaluator/runner/stream_gate.h"

#include <chrono>
#include <thread>
#include <utility>

#include "fmt/format.h"

#include "evaluator/gpu/cuda_status.h"
#include "evaluator/runner/harness_kernels.h"

namespace sparseditto {

StreamGate::~StreamGate() {
  if (host_ != nullptr) cudaFreeHost(host_);
}

StreamGate::StreamGate(StreamGate&& other) noexcept
    : host_(std::exchange(other.host_, nullptr)), device_(std::exchange(other.device_, nullptr)), shape_(other.shape_) {}

StreamGate& StreamGate::operator=(StreamGate&& other) noexcept {
  if (this != &other) {
    if (host_ != nullptr) cudaFreeHost(host_);
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, nullptr);
    shape_ = other.shape_;
  }
  return *this;
}

absl::StatusOr<StreamGate> StreamGate::Create(const char* what, GateScope scope) {
  StreamGate gate;
  if (scope == GateScope::kWholeGpu) SD_RETURN_IF_ERROR(gpu::CudaStatus(WholeGpuGateShape(&gate.shape_), what));
  const cudaError_t error =
      cudaHostAlloc(reinterpret_cast<void**>(&gate.host_), (2 + gate.shape_.ctas) * sizeof(int), cudaHostAllocMapped);
  if (error != cudaSuccess) {
    gate.host_ = nullptr;
    return gpu::CudaStatus(error, what);
  }
  SD_RETURN_IF_ERROR(gpu::CudaStatus(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate.device_), gate.host_, 0), what));
  __atomic_store_n(&gate.host_[0], 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&gate.host_[1], -1, __ATOMIC_SEQ_CST);
  for (unsigned i = 0; i < gate.shape_.ctas; ++i) __atomic_store_n(&gate.host_[2 + i], 0, __ATOMIC_SEQ_CST);
  return gate;
}

absl::Status StreamGate::Close(cudaStream_t stream, int64_t timeout_ns, const char* what) {
  __atomic_store_n(&host_[0], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&host_[1], -1, __ATOMIC_SEQ_CST);
  for (unsigned i = 0; i < shape_.ctas; ++i) __atomic_store_n(&host_[2 + i], 0, __ATOMIC_SEQ_CST);
  SD_RETURN_IF_ERROR(gpu::CudaStatus(LaunchStreamGate(device_, device_ + 1, device_ + 2, timeout_ns, shape_, stream), what));
  if (shape_.ctas <= 1) return absl::OkStatus();
  // The whole-GPU gate holds other streams only once every CTA is resident.
  const auto give_up = std::chrono::steady_clock::now() + kGateFillTimeout;
  for (unsigned i = 0; i < shape_.ctas;) {
    if (__atomic_load_n(&host_[2 + i], __ATOMIC_SEQ_CST) != 0) {
      ++i;
    } else if (std::chrono::steady_clock::now() > give_up) {
      unsigned resident = 0;
      for (unsigned j = 0; j < shape_.ctas; ++j) resident += __atomic_load_n(&host_[2 + j], __ATOMIC_SEQ_CST) != 0;
      return absl::UnavailableError(fmt::format("{} failed: the whole-GPU gate had {} of {} CTAs resident after {} ms", what,
                                                resident, shape_.ctas,
                                                std::chrono::duration_cast<std::chrono::milliseconds>(kGateFillTimeout).count()));
    } else {
      std::this_thread::yield();
    }
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
