// The measurements behind AnalyzePattern (analyzer/pattern_analyzer.h), one concept each, for the
// classifier and for tests. Every function reads a matrix that satisfies ValidateCsr, looks only at
// its pattern, and runs in O(nnz + rows + cols) time unless noted.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "analyzer/pattern_analyzer.h"
#include "matrix/csr_matrix.h"

namespace sparseditto {

// Calls body(group_of) with a function mapping a column index to its group of `width` columns
// (width >= 1): a shift when width is a power of two, else a 32-bit division. Division by a run-time
// 64-bit value per nonzero would dominate the analyzer's time.
template <typename Body>
auto ForEachColumnGroup(int64_t width, Body body) {
  if (width > INT32_MAX) return body([](int32_t) { return int32_t{0}; });
  if ((width & (width - 1)) == 0) {
    const int shift = std::countr_zero(static_cast<uint64_t>(width));
    return body([shift](int32_t col) { return col >> shift; });
  }
  const int32_t divisor = static_cast<int32_t>(width);
  return body([divisor](int32_t col) { return col / divisor; });
}

// ---- length_stats.cc
// Statistics of `lengths` (nonzeros per line), each in [0, full_length]. O(size + full_length).
LengthStats ComputeLengthStats(std::span<const int64_t> lengths, int64_t full_length);
LengthStats RowLengthStats(const CsrMatrix& a);
LengthStats ColumnLengthStats(const CsrMatrix& a);

// ---- nm_stats.cc
// Conformance to at most n nonzeros per group of m columns (1 <= n, 1 <= m).
NmConformance MeasureNmConformance(const CsrMatrix& a, int n, int m);

// The smallest m in [2, kMaxDetectedNmGroup] (with at least two full groups per row) for which every
// full group of every row holds exactly the same n nonzeros (0 < n < m) and each row's partial final
// group min(n, its length); nullopt if none. Cheap on non-N:M matrices (each m stops at the first
// group that differs).
std::optional<std::pair<int, int>> DetectExactNm(const CsrMatrix& a);

// ---- block_stats.cc
// Fill of the aligned block_rows x block_cols grid (both >= 1).
BlockFill MeasureBlockFill(const CsrMatrix& a, int64_t block_rows, int64_t block_cols);

// The coarsest grid the pattern is exactly made of: block_rows = gcd of the rows r > 0 whose column
// set differs from row r - 1's (rows when there is none), block_cols = gcd of the columns in (0, cols)
// where a run of consecutive nonzeros starts or ends (cols when there is none). Every cell of that
// grid is then either full or empty. (1, 1) for a matrix with no block structure.
std::pair<int64_t, int64_t> ExactBlockGrid(const CsrMatrix& a);

// The largest-area power-of-two shape (each side in 1..64, area >= 2) whose fill is >= kBlockFill
// with at most kBlockNonemptyMax of its blocks nonempty; nullopt if none. Probes 1x2 and 2x1 first,
// so a pattern without blocks costs two passes; a blocked one at most ~50.
std::optional<BlockFill> FindApproximateBlockShape(const CsrMatrix& a);

// ---- band_stats.cc
Bandwidth MeasureBandwidth(const CsrMatrix& a);

// True if the nonzeros are exactly the band [c - lower, c + upper] around c = floor(i * cols / rows)
// in every row, clipped to the matrix (and there is at least one nonzero). O(rows).
bool IsFullBand(const CsrMatrix& a, const Bandwidth& band);

// The number of dense diagonal blocks when every row is one nonempty contiguous run, consecutive
// rows with equal runs form blocks, and the blocks' column ranges tile [0, cols) in order; 0 when
// the matrix is not like that or has fewer than 2 blocks. O(rows).
int64_t CountDiagonalBlocks(const CsrMatrix& a);

// ---- family_classifier.cc
// Sets f->detected and f->evidence from the features already in *f (and `a` for the detectors),
// following the order documented in pattern_analyzer.h.
void ClassifyFamily(const CsrMatrix& a, PatternFeatures* f);

}  // namespace sparseditto
