#include "evaluator/runner/timing.h"

#include <algorithm>
#include <chrono>

#include "evaluator/gpu/cuda_status.h"
#include "evaluator/runner/stream_gate.h"

namespace sparseditto {
namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * (sorted.size() - 1);
  const size_t low = static_cast<size_t>(position);
  const size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

// Events destroyed on scope exit.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

// One trial behind the gate: the GPU is held closed while the L2 flush, start, `launch` (none for the idle
// trial) and stop are enqueued, so the events see them back to back: the host's enqueue latency (which grows
// with CPU load, e.g. compiles running beside the timing) stays out of the device time. The flush sits right
// before the start event, as in the candidate host's TimeBatch (evaluator/host/candidate_host_main.cc), so a
// baseline and a candidate start from the same L2 state. (In dev/harness_bias's probe the flush-then-synchronise
// form read 0.5-0.6 us faster than TimeBatch's; in the judge, on an H100, this form changed no cuBLAS baseline's
// median measurably, and candidates making the same call still read ~0.85 us slower: the rest of the candidate
// path, not this.) The gate fills the GPU (GateScope::kWholeGpu): work the launch puts on other streams
// cannot run ahead of the window either, so a side stream joined back by an event is inside the events.
// Returns the host clock (ms) from the gate's closing to the device's synchronize, which still covers enqueue,
// the flush and device work, for the escaped-work check (idle trials flush too, so its allowance covers the
// flush). Errors: the gate's, the flush's, the event records', the launch's or the synchronize's.
absl::StatusOr<double> GatedTrial(StreamGate& gate, EventPair& events, L2Flusher& flusher, cudaStream_t stream,
                                  const LaunchFn* launch, const char* what) {
  absl::Status s = gate.Close(stream, kStreamGateTimeoutNs, what);
  const auto start = std::chrono::steady_clock::now();
  if (s.ok()) s = flusher.Flush(stream);
  if (s.ok()) s = gpu::CudaStatus(cudaEventRecord(events.start, stream), "cudaEventRecord");
  if (s.ok() && launch != nullptr) s = (*launch)(stream);
  if (s.ok()) s = gpu::CudaStatus(cudaEventRecord(events.stop, stream), "cudaEventRecord");
  gate.Open();  // also on error, a failed Close included (enqueued or not): never leave the stream closed
  if (s.ok()) s = gpu::CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  else cudaStreamSynchronize(stream);  // the stream passes the gate before `gate` frees the pair it reads
  const auto stop = std::chrono::steady_clock::now();
  if (!s.ok()) return s;
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

// One trial's share of WorkEscapedStream: its host clock against 3 x its events + 50 us (launch overhead is
// ~10 us) + twice the host clock of the idle trials beside it (the larger of the two).
bool TrialEscaped(double event_ms, double host_ms, double idle_host_ms) {
  return host_ms > 3.0 * event_ms + 0.050 + 2.0 * idle_host_ms;
}

}  // namespace

absl::StatusOr<L2Flusher> L2Flusher::Create() {
  int device = 0, l2_bytes = 0;
  absl::Status s = gpu::CudaStatus(cudaGetDevice(&device), "cudaGetDevice");
  if (s.ok()) s = gpu::CudaStatus(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "L2 size");
  if (!s.ok()) return s;
  auto buffer = gpu::DeviceBuffer::Allocate(2 * static_cast<size_t>(std::max(l2_bytes, 1 << 20)), "L2 flush");
  if (!buffer.ok()) return buffer.status();
  L2Flusher flusher;
  flusher.buffer_ = *std::move(buffer);
  return flusher;
}

absl::Status L2Flusher::Flush(cudaStream_t stream) {
  return gpu::CudaStatus(cudaMemsetAsync(buffer_.get(), 0x5a, buffer_.size(), stream), "L2 flush");
}

void Summarise(std::vector<double> event_ms, std::vector<double> host_ms, std::vector<double> idle_host_ms,
               v1::TimingStats* stats) {
  int32_t escaped = 0;
  for (size_t i = 0; i < event_ms.size() && i < host_ms.size(); ++i) {
    escaped += TrialEscaped(event_ms[i], host_ms[i], i < idle_host_ms.size() ? idle_host_ms[i] : 0.0);
  }
  stats->set_escaped_trials(escaped);
  std::sort(event_ms.begin(), event_ms.end());
  std::sort(host_ms.begin(), host_ms.end());
  std::sort(idle_host_ms.begin(), idle_host_ms.end());
  stats->set_host_idle_median_ms(Percentile(idle_host_ms, 0.5));
  if (!idle_host_ms.empty()) stats->set_host_idle_quickest_ms(idle_host_ms.front());
  stats->set_trials(static_cast<int32_t>(event_ms.size()));
  if (event_ms.empty()) return;
  stats->set_median_ms(Percentile(event_ms, 0.5));
  stats->set_p10_ms(Percentile(event_ms, 0.1));
  stats->set_p90_ms(Percentile(event_ms, 0.9));
  stats->set_min_ms(event_ms.front());
  stats->set_max_ms(event_ms.back());
  stats->set_host_median_ms(Percentile(host_ms, 0.5));
}

bool WorkEscapedStream(const v1::TimingStats& stats) {
  return stats.trials() > 0 && 2 * stats.escaped_trials() > stats.trials();
}

absl::StatusOr<v1::TimingStats> TimeLaunches(const LaunchFn& launch, cudaStream_t stream, int64_t n,
                                             L2Flusher& flusher, const v1::RunnerOptions& options) {
  using Clock = std::chrono::steady_clock;
  const int warmups = options.warmup_runs() > 0 ? options.warmup_runs() : 3;
  const int min_trials = options.min_trials() > 0 ? options.min_trials() : 20;
  const int max_trials = std::max(min_trials, options.max_trials() > 0 ? options.max_trials() : 200);
  const double budget_s = options.max_timing_seconds() > 0 ? options.max_timing_seconds() : 2.0;
  const double stable = options.stable_spread() > 0 ? options.stable_spread() : 0.02;

  for (int i = 0; i < warmups; ++i) {
    absl::Status s = launch(stream);
    if (s.ok()) s = gpu::CudaStatus(cudaDeviceSynchronize(), "warm-up");
    if (!s.ok()) return s;
  }
  EventPair events;
  absl::Status s = gpu::CudaStatus(cudaEventCreate(&events.start), "cudaEventCreate");
  if (s.ok()) s = gpu::CudaStatus(cudaEventCreate(&events.stop), "cudaEventCreate");
  if (!s.ok()) return s;
  SD_ASSIGN_OR_RETURN(StreamGate gate, StreamGate::Create("gate flag", GateScope::kWholeGpu));

  std::vector<double> event_ms, host_ms, idle_host_ms;
  const auto begin = Clock::now();
  v1::TimingStats stats;
  stats.set_n(n);
  while (static_cast<int>(event_ms.size()) < max_trials) {
    // Idle trials (the timed trial's steps, flush included, with nothing launched) either side of the timed
    // one, for WorkEscapedStream's allowance. On a shared GPU the one before may skip the time-slice wait
    // that the timed trial then pays, so the one after counts too. The synchronize ends escaped work before
    // the trial after starts, so that work cannot inflate it.
    auto idle_before = GatedTrial(gate, events, flusher, stream, nullptr, "idle gate");
    if (!idle_before.ok()) return idle_before.status();
    auto host = GatedTrial(gate, events, flusher, stream, &launch, "trial gate");
    if (!host.ok()) return host.status();
    float ms = 0;
    s = gpu::CudaStatus(cudaEventElapsedTime(&ms, events.start, events.stop), "cudaEventElapsedTime");
    if (!s.ok()) return s;
    auto idle_after = GatedTrial(gate, events, flusher, stream, nullptr, "idle gate");
    if (!idle_after.ok()) return idle_after.status();
    idle_host_ms.push_back(std::max(*idle_before, *idle_after));
    event_ms.push_back(ms);
    host_ms.push_back(*host);

    if (static_cast<int>(event_ms.size()) >= min_trials) {
      Summarise(event_ms, host_ms, idle_host_ms, &stats);
      const double spread = (stats.p90_ms() - stats.p10_ms()) / std::max(stats.median_ms(), 1e-9);
      const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
      if (spread < stable || elapsed > budget_s) break;
    }
  }
  Summarise(event_ms, host_ms, idle_host_ms, &stats);
  return stats;
}

}  // namespace sparseditto
