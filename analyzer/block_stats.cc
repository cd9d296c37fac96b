#include <algorithm>
#include <numeric>
#include <vector>

#include "analyzer/pattern_measures.h"

namespace sparseditto {
namespace {

bool RowsEqual(const CsrMatrix& a, int64_t r, int64_t s) {
  if (a.RowLength(r) != a.RowLength(s)) return false;
  return std::equal(a.col_indices.begin() + a.row_offsets[r], a.col_indices.begin() + a.row_offsets[r + 1],
                    a.col_indices.begin() + a.row_offsets[s]);
}

}  // namespace

BlockFill MeasureBlockFill(const CsrMatrix& a, int64_t block_rows, int64_t block_cols) {
  BlockFill b;
  b.block_rows = block_rows;
  b.block_cols = block_cols;
  const int64_t grid_rows = (a.rows + block_rows - 1) / block_rows;
  const int64_t grid_cols = (a.cols + block_cols - 1) / block_cols;
  b.total_blocks = grid_rows * grid_cols;
  // last_seen[block column] = the last block row in which that block column had a nonzero, so each
  // nonempty block is counted once without a hash map.
  std::vector<int64_t> last_seen(static_cast<size_t>(grid_cols), -1);
  const int64_t last_block_col = grid_cols - 1;
  const int64_t clipped_off_last = block_cols * grid_cols - a.cols;  // columns the last block lacks
  double area = 0;
  b.nonempty_blocks = ForEachColumnGroup(block_cols, [&](auto block_col_of) {
    int64_t nonempty = 0;
    for (int64_t r = 0; r < a.rows; ++r) {
      const int64_t block_row = r / block_rows;
      const int64_t height = std::min(block_rows, a.rows - block_row * block_rows);
      int64_t fresh_in_row = 0, fresh_last_in_row = 0;
      for (int32_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
        const int64_t block_col = block_col_of(a.col_indices[k]);
        const bool fresh = last_seen[block_col] != block_row;  // branch-free: random on sparse rows
        last_seen[block_col] = block_row;
        fresh_in_row += fresh;
        fresh_last_in_row += fresh & (block_col == last_block_col);
      }
      nonempty += fresh_in_row;
      area += static_cast<double>(height * (fresh_in_row * block_cols - fresh_last_in_row * clipped_off_last));
    }
    return nonempty;
  });
  b.fill = area > 0 ? static_cast<double>(a.nnz()) / area : 0.0;
  b.nonempty_fraction = b.total_blocks > 0 ? static_cast<double>(b.nonempty_blocks) / b.total_blocks : 0.0;
  return b;
}

std::pair<int64_t, int64_t> ExactBlockGrid(const CsrMatrix& a) {
  int64_t row_step = 0;
  for (int64_t r = 1; r < a.rows; ++r) {
    if (!RowsEqual(a, r, r - 1)) row_step = std::gcd(row_step, r);
    if (row_step == 1) break;
  }
  int64_t col_step = 0;
  for (int64_t r = 0; r < a.rows && col_step != 1; ++r) {
    const int32_t begin = a.row_offsets[r], end = a.row_offsets[r + 1];
    for (int32_t k = begin; k < end; ++k) {
      const int64_t c = a.col_indices[k];
      if (k == begin || a.col_indices[k - 1] != c - 1) col_step = std::gcd(col_step, c);  // a run starts
      if ((k + 1 == end || a.col_indices[k + 1] != c + 1) && c + 1 < a.cols) {            // a run ends
        col_step = std::gcd(col_step, c + 1);
      }
    }
  }
  return {row_step == 0 ? a.rows : row_step, col_step == 0 ? a.cols : col_step};
}

std::optional<BlockFill> FindApproximateBlockShape(const CsrMatrix& a) {
  constexpr int64_t kSides[] = {1, 2, 4, 8, 16, 32, 64};
  // The tallest and widest sides that still fill: a full h x w block has full 1 x w and h x 1 parts.
  int64_t max_rows = 1, max_cols = 1;
  for (int64_t side : kSides) {
    if (side == 1) continue;
    if (side <= a.cols && max_cols * 2 == side && MeasureBlockFill(a, 1, side).fill >= kBlockFill) max_cols = side;
    if (side <= a.rows && max_rows * 2 == side && MeasureBlockFill(a, side, 1).fill >= kBlockFill) max_rows = side;
  }
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int64_t h : kSides) {
    for (int64_t w : kSides) {
      if (h <= max_rows && w <= max_cols && h * w >= 2) shapes.emplace_back(h, w);
    }
  }
  std::stable_sort(shapes.begin(), shapes.end(),
                   [](const auto& x, const auto& y) { return x.first * x.second > y.first * y.second; });
  for (const auto& [h, w] : shapes) {
    const BlockFill fill = MeasureBlockFill(a, h, w);
    if (fill.fill >= kBlockFill && fill.nonempty_fraction <= kBlockNonemptyMax) return fill;
  }
  return std::nullopt;
}

}  // namespace sparseditto
