// When a timing was taken on a GPU that other work shared: the one place this rule is written.
// TimingStats.host_idle_median_ms is the median host clock of idle trials (gate, two events, synchronize,
// nothing launched) run either side of each timed trial (per trial the larger); host_idle_quickest_ms is
// the quickest of them, what the gate costs on this GPU when nothing waits in line. A GPU is shared when
// the median exceeds twice the quickest (the evaluation's, when smaller than the timing's) + 0.1 ms, or
// when even the quickest took over 1 ms (no GPU takes that long to start a gate and synchronize when
// nothing else runs: every trial waited). The rule is relative because the quiet cost depends on the GPU
// and the gate: on an H200, 0.01-0.03 ms under the one-CTA gate and 0.13-0.14 ms under the whole-GPU gate,
// which an absolute 0.1 ms limit took for a shared GPU in every quiet timing (session 11, call 1); shared,
// 0.41 ms with six evals at once (one-CTA gate) and 0.44-3.1 ms with eight or nine (whole-GPU gate).
// Timings stored before host_idle_quickest_ms existed read it as 0: the old 0.1 ms limit.
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

// Lowers *quickest_ms to the timing's quickest idle trial when it recorded one (not 0) and *quickest_ms
// is 0 or larger.
inline void NoteQuickestIdleTrial(const v1::TimingStats& timing, double* quickest_ms) {
  const double q = timing.host_idle_quickest_ms();
  if (q > 0 && (*quickest_ms == 0 || q < *quickest_ms)) *quickest_ms = q;
}

// Calls `visit` with the timing of every baseline in `baselines`, a map from n to v1::BaselineList (an
// EvalResult's or a SetupTaskReply's).
template <typename BaselineMap, typename Visit>
void ForEachBaselineTiming(const BaselineMap& baselines, Visit&& visit) {
  for (const auto& [n, list] : baselines) {
    for (const v1::BaselineTime& b : list.baselines()) visit(b.timing());
  }
}

// Calls `visit` with each timing of the result: the kernel's, then its baselines'.
template <typename Visit>
void ForEachTiming(const v1::EvalResult& result, Visit&& visit) {
  for (const v1::TimingStats& t : result.timings()) visit(t);
  ForEachBaselineTiming(result.baselines(), visit);
}

// The quickest idle trial among the result's timings and its baselines': the nearest the evaluation came
// to a quiet GPU. 0 when none recorded one.
inline double QuickestIdleTrialMs(const v1::EvalResult& result) {
  double quickest = 0;
  ForEachTiming(result, [&quickest](const v1::TimingStats& t) { NoteQuickestIdleTrial(t, &quickest); });
  return quickest;
}

// The median idle trial above which `timing` was taken on a shared GPU. `quiet_ms` is the quickest idle
// trial of the evaluation it belongs to (QuickestIdleTrialMs), or 0: one timing's quickest can itself
// have waited (an H200 with eight evals at once: median 0.454 ms, quickest 0.450 ms, while a quiet
// timing of the same evaluation had 0.134 ms). The smaller nonzero of the two is the reference.
inline double SharedGpuIdleLimitMs(const v1::TimingStats& timing, double quiet_ms = 0) {
  double reference = quiet_ms;
  NoteQuickestIdleTrial(timing, &reference);
  return kSharedGpuIdleFactor * reference + kSharedGpuIdleSlackMs;
}

inline bool TimedOnSharedGpu(const v1::TimingStats& timing, double quiet_ms = 0) {
  return timing.host_idle_median_ms() > SharedGpuIdleLimitMs(timing, quiet_ms) ||
         timing.host_idle_quickest_ms() > kSharedGpuQuickestIdleMs;
}

// The largest median idle-trial host clock among the result's timings and its baselines' that were taken
// on a shared GPU (TimedOnSharedGpu against the result's quickest idle trial); 0 when none was.
inline double SharedGpuIdleTrialMs(const v1::EvalResult& result) {
  const double quiet = QuickestIdleTrialMs(result);
  double worst = 0;
  ForEachTiming(result, [&worst, quiet](const v1::TimingStats& t) {
    if (TimedOnSharedGpu(t, quiet)) worst = std::max(worst, t.host_idle_median_ms());
  });
  return worst;
}

}  // namespace sparseditto
