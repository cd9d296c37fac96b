// The median, least and greatest of a set of values (confirmation rounds' fitness and ratios, bench's harness
// offsets): what reports print as "median (low to high)". Pure; thread-safe.
#pragma once

#include <algorithm>
#include <vector>

namespace sparseditto {

struct Spread {
  int count = 0;  // values summarised; 0: none, and the rest 0
  double median = 0, low = 0, high = 0;
};

// The median of an even count is the mean of the middle two.
inline Spread SpreadOf(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  s.count = static_cast<int>(values.size());
  s.median = values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
  s.low = values.front(), s.high = values.back();
  return s;
}

}  // namespace sparseditto
