#include "common/screen_bar.h"

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

}  // namespace sparseditto
