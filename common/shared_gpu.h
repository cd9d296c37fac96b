// When a timing was taken on a GPU that other work shared: the one place this rule is written.
// TimingStats.host_idle_median_ms is the host clock of idle trials (gate, two events, synchronize,
// nothing launched) run either side of each timed trial (per trial the larger): 0.01-0.03 ms on a quiet H200, 0.41-0.42 ms with six
// evals at once (docs/measurements/h200-2026-11-29-s9, call 5). Times from a shared GPU are not
// comparable with a quiet GPU's. Pure functions; thread-safe.
#pragma once

#include <algorithm>

#include "eval_result.pb.h"

namespace sparseditto {

constexpr double kSharedGpuIdleTrialMs = 0.1;

inline bool TimedOnSharedGpu(const v1::TimingStats& timing) {
  return timing.host_idle_median_ms() > kSharedGpuIdleTrialMs;
}

// The largest idle-trial host clock among the result's timings and its baselines' that were taken on a
// shared GPU (TimedOnSharedGpu); 0 when none was.
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
