// Stage 5 of the cascade: timing one launch function truthfully (DESIGN.md §3.4). Warm-ups, an L2
// flush before every trial, the stream held closed by a gate kernel while start event, launch and stop
// event are enqueued (so the events measure device time, not the host's enqueue latency, which varies
// with CPU load), CUDA events on the candidate's stream plus a host clock around a whole-
// device synchronize (work that escapes to another stream shows up as host time far beyond event
// time), at least min_trials trials and more until the spread is small. Not thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"
#include "evaluator/gpu/device_buffer.h"
#include "runner.pb.h"

namespace sparseditto {

// Overwrites a buffer twice the device's L2 size (read from the device) to evict A, B and C.
class L2Flusher {
 public:
  static absl::StatusOr<L2Flusher> Create();
  absl::Status Flush(cudaStream_t stream);

 private:
  gpu::DeviceBuffer buffer_;
};

// One launch of the code under test, enqueued on `stream`.
using LaunchFn = std::function<absl::Status(cudaStream_t stream)>;

// Times `launch` on `stream` for output width n. Errors: the launch's own error, or a CUDA error.
absl::StatusOr<v1::TimingStats> TimeLaunches(const LaunchFn& launch, cudaStream_t stream, int64_t n,
                                             L2Flusher& flusher, const v1::RunnerOptions& options);

// True when the host clock says far more time passed than the stream's events saw: the launch did
// work outside its stream. Threshold: host > 3 * events + 50 us (launch overhead is ~10 us) + twice
// the host clock of an idle trial (host_idle_median_ms; 0.01-0.03 ms on a quiet GPU). The last term
// keeps a GPU shared with other processes from reading as escaped work: there every trial waits for
// time slices, idle ones too, and a trial that launches waits longer (H200, s9 call 5, six evals at
// once: host 0.56 ms, idle trial 0.41-0.42 ms, events 0.006 ms, for correct seeds). Escaped work is
// still caught once it costs more than that: the check is coarser while the GPU is shared.
bool WorkEscapedStream(const v1::TimingStats& stats);

// Median, p10, p90, min, max of the samples (ms) into stats, and the medians of the host clocks of
// the timed and the idle trials (sorted copies; empty input leaves zeros).
void Summarise(std::vector<double> event_ms, std::vector<double> host_ms, std::vector<double> idle_host_ms,
               v1::TimingStats* stats);

}  // namespace sparseditto
