#include "common/screen_bar.h"

#include <algorithm>

namespace sparseditto {

bool NearScreenBar(double fitness, const std::vector<v1::TimingStats>& timings, const v1::ScreenBar& bar) {
  if (fitness <= 0) return false;
  if (bar.elite_fitness() <= 0 || fitness >= bar.elite_fitness() * (1 - bar.margin())) return true;
  for (const v1::TimingStats& t : timings) {
    const auto elite = bar.elite_ms_by_n().find(t.n());
    if (elite == bar.elite_ms_by_n().end() || t.median_ms() <= elite->second * (1 + bar.margin())) return true;
  }
  return false;
}

void NoteFullTiming(const v1::EvalResult& result, v1::ScreenBar* bar) {
  if (result.fitness() <= 0 || result.timing_screen()) return;
  bar->set_elite_fitness(std::max(bar->elite_fitness(), result.fitness()));
  for (const v1::TimingStats& t : result.timings()) {
    if (t.median_ms() <= 0) continue;
    auto [it, added] = bar->mutable_elite_ms_by_n()->insert({t.n(), t.median_ms()});
    if (!added) it->second = std::min(it->second, t.median_ms());
  }
}

}  // namespace sparseditto
