#include "evaluator/runner/bracket.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/status_macros.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/runner/harness_kernels.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

}  // namespace

absl::Status WaitWhileHostAlive(cudaStream_t stream, CandidateHost& host, double seconds) {
  const auto begin = std::chrono::steady_clock::now();
  const auto deadline = begin + std::chrono::duration<double>(seconds);
  // A kernel that faults loses the host's context, and the done event is never recorded: the host is
  // asked now and then whether its stream failed (not at once: a batch takes milliseconds, and the
  // question costs the host a round trip while it may still be timing).
  constexpr auto kFirstQuery = std::chrono::milliseconds(50), kQueryEvery = std::chrono::milliseconds(50);
  auto next_query = begin + kFirstQuery;
  while (true) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return absl::OkStatus();
    if (e != cudaErrorNotReady) return gpu::CudaStatus(e, "batch");
    if (!host.alive()) return absl::UnavailableError("the candidate host died");
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_query) {
      SD_RETURN_IF_ERROR(host.QueryStream());
      next_query = now + kQueryEvery;
    }
    if (now > deadline) {
      return absl::DeadlineExceededError(fmt::format("not done within {:.0f} s", seconds));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

absl::StatusOr<BatchMeasurement> RunBracketedBatch(CandidateHost& host, StreamGate& gate, cudaStream_t judge_stream,
                                                   cudaStream_t read_stream, int64_t n,
                                                   const std::vector<v1::IpcBuffer>& b,
                                                   const std::vector<v1::IpcBuffer>& c,
                                                   const std::vector<std::pair<const void*, size_t>>& watch,
                                                   double timeout_seconds,
                                                   const std::function<void(std::chrono::steady_clock::time_point)>&
                                                       while_held) {
  SD_ASSIGN_OR_RETURN(gpu::DeviceBuffer stamps, gpu::DeviceBuffer::Allocate(2 * sizeof(uint64_t), "stamps"));
  gpu::DeviceBuffer flags;  // one per watched output: LaunchAnyByteDiffers' answers
  if (!watch.empty()) {
    SD_ASSIGN_OR_RETURN(flags, gpu::DeviceBuffer::Allocate(watch.size() * sizeof(unsigned int), "flags"));
  }
  uint64_t* t = stamps.as<uint64_t>();
  const auto closed_at = std::chrono::steady_clock::now();
  SD_RETURN_IF_ERROR(gate.Close(judge_stream, kStreamGateTimeoutNs, "batch gate"));
  absl::Status s = gpu::CudaStatus(LaunchStampGlobalTimer(t, judge_stream), "stamp");
  if (s.ok()) s = gpu::CudaStatus(cudaEventRecord(host.start_event(), judge_stream), "start event");
  if (!s.ok()) {
    gate.Open();
    return s;
  }
  BatchMeasurement m;
  auto rc = host.EnqueueBatch(n, b, c);
  if (rc.ok() && !watch.empty()) {
    // Work the host did not hold behind the start event has had several time slices by then.
    const auto look_at = std::chrono::steady_clock::now() + kOutsideStreamLookDelay;
    if (while_held) while_held(closed_at);
    std::this_thread::sleep_until(look_at);
    std::vector<unsigned int> any(watch.size(), 0);
    bool read = true;
    for (size_t i = 0; i < watch.size() && read; ++i) {
      read = LaunchAnyByteDiffers(watch[i].first, watch[i].second, 0xff, flags.as<unsigned int>() + i, read_stream) ==
             cudaSuccess;
    }
    if (read && cudaMemcpyAsync(any.data(), flags.get(), any.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost,
                                read_stream) == cudaSuccess &&
        cudaStreamSynchronize(read_stream) == cudaSuccess) {  // else a fault shows at the next synchronisation
      m.written_before_start = std::any_of(any.begin(), any.end(), [](unsigned int x) { return x != 0; });
    }
  }
  gate.Open();
  if (!rc.ok()) return rc.status();
  m.return_code = *rc;
  SD_CUDA_CHECK(cudaStreamWaitEvent(judge_stream, host.done_event(), 0));
  SD_CUDA_CHECK(LaunchStampGlobalTimer(t + 1, judge_stream));
  SD_RETURN_IF_ERROR(WaitWhileHostAlive(judge_stream, host, timeout_seconds));
  uint64_t stamp[2];
  SD_CUDA_CHECK(cudaMemcpy(stamp, t, sizeof stamp, cudaMemcpyDeviceToHost));
  m.bracket_ms = static_cast<double>(static_cast<int64_t>(stamp[1] - stamp[0])) * 1e-6;
  if (m.return_code == 0) {
    SD_ASSIGN_OR_RETURN(m.trial_ms, host.Collect());
  }
  return m;
}

double BracketCalibration::Tolerance(int trials, double claimed_ms) const {
  return 4 * noise_ms + 0.030 + 0.005 * trials * per_trial_ms + 0.02 * claimed_ms;
}

absl::StatusOr<BracketCalibration> CalibrateBracket(CandidateHost& null_host, const v1::IpcBuffer& any_buffer,
                                                    int rounds, int wide) {
  cudaStream_t judge = nullptr, read = nullptr;
  SD_CUDA_CHECK(cudaStreamCreateWithFlags(&judge, cudaStreamNonBlocking));
  SD_CUDA_CHECK(cudaStreamCreateWithFlags(&read, cudaStreamNonBlocking));
  struct Streams {
    cudaStream_t a, b;
    ~Streams() { cudaStreamDestroy(a); cudaStreamDestroy(b); }
  } streams{judge, read};
  SD_ASSIGN_OR_RETURN(StreamGate gate, StreamGate::Create("calibration gate"));
  std::vector<double> narrow_ms, wide_ms;
  for (int r = 0; r < rounds + 1; ++r) {  // the first round warms up and is dropped
    for (int trials : {1, wide}) {
      std::vector<v1::IpcBuffer> buffers(trials, any_buffer);
      SD_ASSIGN_OR_RETURN(BatchMeasurement m,
                          RunBracketedBatch(null_host, gate, judge, read, 1, buffers, buffers, {}, 30));
      if (r == 0) continue;
      (trials == 1 ? narrow_ms : wide_ms).push_back(m.bracket_ms);
    }
  }
  BracketCalibration c;
  const double narrow = Quantile(narrow_ms, 0.5), widened = Quantile(wide_ms, 0.5);
  c.per_trial_ms = std::max(0.0, (widened - narrow) / (wide - 1));
  c.fixed_ms = std::max(0.0, narrow - c.per_trial_ms);
  c.noise_ms = std::max(Quantile(narrow_ms, 0.9) - Quantile(narrow_ms, 0.1),
                        Quantile(wide_ms, 0.9) - Quantile(wide_ms, 0.1));
  return c;
}

}  // namespace sparseditto
