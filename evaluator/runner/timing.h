// Stage 5 of the cascade: timing one launch function truthfully (DESIGN.md §3.4). Warm-ups, an L2
// flush right before every trial's start event (as the candidate host's TimeBatch does, so baselines and
// candidates start from the same cache state), the whole GPU held closed by a gate kernel (GateScope::kWholeGpu) while start
// event, launch and stop event are enqueued (so the events measure device time, not the host's enqueue
// latency, which varies with CPU load, and work launched on other streams cannot run before the window),
// CUDA events on the candidate's stream plus a host clock around a whole-
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
  // The buffer itself (a whole cudaMalloc allocation), which candidate hosts map to flush with.
  void* buffer() const { return buffer_.get(); }
  size_t bytes() const { return buffer_.size(); }

 private:
  gpu::DeviceBuffer buffer_;
};

// One launch of the code under test, enqueued on `stream`.
using LaunchFn = std::function<absl::Status(cudaStream_t stream)>;

// Times `launch` on `stream` for output width n. Errors: the launch's own error, or a CUDA error.
absl::StatusOr<v1::TimingStats> TimeLaunches(const LaunchFn& launch, cudaStream_t stream, int64_t n,
                                             L2Flusher& flusher, const v1::RunnerOptions& options);

// True when the host clock says far more time passed than the stream's events saw, in more than half
// of the trials: the launch did work outside its stream. A trial counts (TimingStats.escaped_trials) when
// its host clock exceeds 3 x its own events + 50 us (launch overhead is ~10 us) + twice the host clock
// of the idle trials beside it (the larger of the one before and the one after; 0.01-0.03 ms on a quiet
// GPU). Escaped work costs host time in every trial. A GPU shared with other processes costs time-slice
// waits in some trials only, and not always in the idle trial before (which follows the L2 flush, which
// has just had the GPU): comparing medians with only that idle trial misjudged a correct kernel (H200,
// s10 call 1, six evals at once: banded, host median 0.28 ms, events 0.007 ms, idle median 0.015 ms).
// Escaped work is still caught once it costs more than 50 us + twice the idle trials; the check is
// coarser while the GPU is shared. Escaping in only some trials pays little: fitness uses the events'
// median, which then falls among or next to the honest trials.
bool WorkEscapedStream(const v1::TimingStats& stats);

// Median, p10, p90, min, max of the samples (ms) into stats, the medians of the host clocks of the
// timed and the idle trials (sorted copies; empty input leaves zeros), and escaped_trials. The three
// vectors are in trial order: idle_host_ms[i] is the larger host clock of the idle trials beside trial i
// (missing entries count as 0).
void Summarise(std::vector<double> event_ms, std::vector<double> host_ms, std::vector<double> idle_host_ms,
               v1::TimingStats* stats);

}  // namespace sparseditto
