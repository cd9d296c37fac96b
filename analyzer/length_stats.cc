#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/pattern_measures.h"

namespace sparseditto {

LengthStats ComputeLengthStats(std::span<const int64_t> lengths, int64_t full_length) {
  LengthStats s;
  if (lengths.empty()) return s;
  const double count = static_cast<double>(lengths.size());
  double sum = 0, sum_sq = 0;
  s.min = lengths[0];
  s.max = lengths[0];
  std::vector<int64_t> histogram(static_cast<size_t>(full_length) + 1, 0);
  for (int64_t length : lengths) {
    sum += static_cast<double>(length);
    sum_sq += static_cast<double>(length) * static_cast<double>(length);
    s.min = std::min(s.min, length);
    s.max = std::max(s.max, length);
    s.empty += length == 0;
    s.full += length == full_length;
    histogram[length]++;
  }
  s.mean = sum / count;
  s.stddev = std::sqrt(std::max(0.0, sum_sq / count - s.mean * s.mean));
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  if (sum > 0) {
    // Gini over the lengths sorted ascending (x_1..x_n, 1-based ranks i):
    // G = 2 * sum(i * x_i) / (n * sum(x)) - (n + 1) / n. The histogram is the counting sort.
    double rank_weighted = 0;
    double rank = 0;  // ranks used so far
    for (int64_t value = 0; value <= full_length; ++value) {
      const double k = static_cast<double>(histogram[value]);
      if (k == 0) continue;
      rank_weighted += static_cast<double>(value) * (k * rank + k * (k + 1) / 2);
      rank += k;
    }
    s.gini = std::max(0.0, 2 * rank_weighted / (count * sum) - (count + 1) / count);
  }
  return s;
}

LengthStats RowLengthStats(const CsrMatrix& a) {
  std::vector<int64_t> lengths(static_cast<size_t>(a.rows));
  for (int64_t r = 0; r < a.rows; ++r) lengths[r] = a.RowLength(r);
  return ComputeLengthStats(lengths, a.cols);
}

LengthStats ColumnLengthStats(const CsrMatrix& a) {
  std::vector<int64_t> lengths(static_cast<size_t>(a.cols), 0);
  for (int32_t c : a.col_indices) lengths[c]++;
  return ComputeLengthStats(lengths, a.rows);
}

}  // namespace sparseditto
