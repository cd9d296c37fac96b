// When a timing was taken on a GPU that other work shared: the one place this rule is written.
// TimingStats.host_idle_median_ms is the median host clock of idle trials (gate, two events, synchronize,
// nothing launched) run either side of each timed trial (per trial the larger); host_idle_quickest_ms is
// the quickest of them, what the gate costs on this GPU when nothing waits in line. A GPU is shared when
// the median exceeds twice the quickest + 0.1 ms, or when even the quickest took over 1 ms (no GPU takes
// that long to start a gate and synchronize when nothing else runs; every trial waited). The rule is relative because the quiet cost depends on
// the GPU and the gate: on an H200, 0.01-0.03 ms under the one-CTA gate and 0.14 ms under the whole-GPU
// gate, which an absolute 0.1 ms limit took for a shared GPU in every quiet timing (session 11, call 1);
// shared, 0.41 ms with six evals at once (one-CTA gate) and 0.7-3.1 ms with eight or nine (whole-GPU
// gate). Timings stored before host_idle_quickest_ms existed read it as 0: the old 0.1 ms limit.
// Pure functions; thread-safe.
#pragma once

#include <algorithm>

#include "eval_result.pb.h"

namespace sparseditto {

constexpr double kSharedGpuIdleFactor = 2.0;
constexpr double kSharedGpuIdleSlackMs = 0.1;
constexpr double kSharedGpuQuickestIdleMs = 1.0;
// The rule in words, for the warnings that quote it.
constexpr const char* kSharedGpuRule = "over twice the quickest + 0.1 ms, or the quickest over 1 ms";

inline double SharedGpuIdleLimitMs(const v1::TimingStats& timing) {
  return kSharedGpuIdleFactor * timing.host_idle_quickest_ms() + kSharedGpuIdleSlackMs;
}

inline bool TimedOnSharedGpu(const v1::TimingStats& timing) {
  return timing.host_idle_median_ms() > SharedGpuIdleLimitMs(timing) ||
         timing.host_idle_quickest_ms() > kSharedGpuQuickestIdleMs;
}

// The largest median idle-trial host clock among the result's timings and its baselines' that were taken
// on a shared GPU (TimedOnSharedGpu); 0 when none was.
inline double SharedGpuIdleTrialMs(const v1::EvalResult& result) {
  double worst = 0;
  auto note = [&worst](const v1::TimingStats& t) {
    if (TimedOnSharedGpu(t)) worst = std::max(worst, t.host_idle_median_ms());
  };
  for (const v1::TimingStats& t : result.timings()) note(t);
  for (const auto& [n, list] : result.baselines()) {
    for (const v1::BaselineTime& b : list.baselines()) note(b.timing());
  }
  return worst;
}

}  // namespace sparseditto
