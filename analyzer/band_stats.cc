#include <algorithm>

#include "analyzer/pattern_measures.h"

namespace sparseditto {
namespace {

int64_t ScaledDiagonal(const CsrMatrix& a, int64_t row) { return row * a.cols / a.rows; }

}  // namespace

Bandwidth MeasureBandwidth(const CsrMatrix& a) {
  Bandwidth b;
  for (int64_t r = 0; r < a.rows; ++r) {
    if (a.RowLength(r) == 0) continue;
    const int64_t center = ScaledDiagonal(a, r);
    // Columns are sorted, so the row's first and last nonzeros are its extremes.
    b.lower = std::max(b.lower, center - a.col_indices[a.row_offsets[r]]);
    b.upper = std::max(b.upper, a.col_indices[a.row_offsets[r + 1] - 1] - center);
  }
  b.half = std::max(b.lower, b.upper);
  return b;
}

bool IsFullBand(const CsrMatrix& a, const Bandwidth& band) {
  if (a.nnz() == 0) return false;
  // Every nonzero lies in the band by the definition of lower/upper and there are no duplicates,
  // so the band is full exactly when nnz equals its area.
  int64_t area = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t center = ScaledDiagonal(a, r);
    area += std::max<int64_t>(0, std::min(a.cols, center + band.upper + 1) - std::max<int64_t>(0, center - band.lower));
  }
  return area == a.nnz();
}

int64_t CountDiagonalBlocks(const CsrMatrix& a) {
  int64_t blocks = 0, first_of_block = -1, last_of_block = -1;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t length = a.RowLength(r);
    if (length == 0) return 0;
    const int64_t first = a.col_indices[a.row_offsets[r]], last = a.col_indices[a.row_offsets[r + 1] - 1];
    if (last - first + 1 != length) return 0;                  // not one contiguous run
    if (first == first_of_block && last == last_of_block) continue;  // same block
    if (first != last_of_block + 1) return 0;                  // blocks must tile the columns in order
    ++blocks;
    first_of_block = first;
    last_of_block = last;
  }
  return (last_of_block == a.cols - 1 && blocks >= 2) ? blocks : 0;
}

}  // namespace sparseditto
