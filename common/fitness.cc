#include "common/fitness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace sparseditto {

double FastestBaselineMs(const std::map<int64_t, v1::BaselineList>& baselines, int64_t n, const char* only) {
  double fastest = std::numeric_limits<double>::infinity();
  auto it = baselines.find(n);
  if (it == baselines.end()) return fastest;
  for (const v1::BaselineTime& b : it->second.baselines()) {
    if (!b.available() || b.timing().median_ms() <= 0) continue;
    if (only != nullptr && b.name() != only) continue;
    fastest = std::min(fastest, b.timing().median_ms());
  }
  return fastest;
}

double SpeedupFitness(const std::vector<v1::TimingStats>& timings, const std::map<int64_t, v1::BaselineList>& baselines) {
  if (timings.empty()) return 0;
  double log_sum = 0;
  for (const v1::TimingStats& t : timings) {
    const double fastest = FastestBaselineMs(baselines, t.n());
    if (!std::isfinite(fastest) || t.median_ms() <= 0) return 0;
    log_sum += std::log(fastest / t.median_ms());
  }
  return std::exp(log_sum / static_cast<double>(timings.size()));
}

}  // namespace sparseditto
