#include <algorithm>

#include "analyzer/pattern_measures.h"

namespace sparseditto {
namespace {

// True if every full group of m columns in every row holds exactly n nonzeros and the partial
// final group (if any) min(n, its length).
bool AllGroupsHoldExactly(const CsrMatrix& a, int n, int m) {
  const int64_t full_groups = a.cols / m, tail = a.cols % m;
  const int64_t tail_want = std::min<int64_t>(n, tail);
  const int64_t groups_with_nonzeros = full_groups + (tail_want > 0 ? 1 : 0);
  const int64_t row_length = full_groups * n + tail_want;
  const auto want = [&](int64_t group) { return group < full_groups ? n : tail_want; };
  for (int64_t r = 0; r < a.rows; ++r) {
    if (a.RowLength(r) != row_length) return false;
    int64_t group = 0, count = 0;
    for (int32_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      const int64_t g = a.col_indices[k] / m;
      if (g != group) {
        if (count != want(group) || g != group + 1) return false;
        group = g;
        count = 0;
      }
      ++count;
    }
    if (group != groups_with_nonzeros - 1 || count != want(group)) return false;
  }
  return true;
}

}  // namespace

NmConformance MeasureNmConformance(const CsrMatrix& a, int n, int m) {
  NmConformance c;
  c.n = n;
  c.m = m;
  c.groups = a.rows * ((a.cols + m - 1) / m);
  c.partial_final_group = a.cols % m != 0;
  const int64_t nonconforming = ForEachColumnGroup(m, [&](auto group_of) {
    int64_t over = 0;
    for (int64_t r = 0; r < a.rows; ++r) {
      int32_t group = -1, count = 0;
      for (int32_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
        const int32_t g = group_of(a.col_indices[k]);
        const bool starts_group = g != group;  // branch-free: the outcome is random on sparse rows
        over += starts_group & (count > n);
        count = starts_group ? 1 : count + 1;
        group = g;
      }
      over += count > n;
    }
    return over;
  });
  c.conforming_groups = c.groups - nonconforming;
  c.conforming_fraction = c.groups == 0 ? 1.0 : static_cast<double>(c.conforming_groups) / c.groups;
  return c;
}

std::optional<std::pair<int, int>> DetectExactNm(const CsrMatrix& a) {
  if (a.rows == 0) return std::nullopt;
  for (int m = 2; m <= kMaxDetectedNmGroup && 2 * m <= a.cols; ++m) {
    int n = 0;  // the candidate: row 0's count in its first group
    for (int32_t k = a.row_offsets[0]; k < a.row_offsets[1] && a.col_indices[k] < m; ++k) ++n;
    if (n == 0 || n == m) continue;
    if (AllGroupsHoldExactly(a, n, m)) return std::make_pair(n, m);
  }
  return std::nullopt;
}

}  // namespace sparseditto
