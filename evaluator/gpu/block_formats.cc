#include "evaluator/gpu/block_formats.h"

#include <algorithm>

namespace sparseditto::gpu {

int64_t BlockStructure::max_blocks_per_row() const {
  int64_t widest = 0;
  for (int64_t br = 0; br < block_rows; ++br) widest = std::max<int64_t>(widest, row_offsets[br + 1] - row_offsets[br]);
  return widest;
}

BlockStructure FindBlocks(const CsrMatrix& a, int64_t block) {
  BlockStructure s;
  s.block = block;
  s.block_rows = a.rows / block;
  s.block_cols = a.cols / block;
  s.row_offsets.assign(s.block_rows + 1, 0);
  std::vector<int64_t> last_seen(s.block_cols, -1);
  for (int64_t br = 0; br < s.block_rows; ++br) {
    const size_t begin = s.col_indices.size();
    for (int64_t r = br * block; r < (br + 1) * block; ++r) {
      for (int32_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
        const int64_t bc = a.col_indices[e] / block;
        if (last_seen[bc] != br) {
          last_seen[bc] = br;
          s.col_indices.push_back(static_cast<int32_t>(bc));
        }
      }
    }
    std::sort(s.col_indices.begin() + begin, s.col_indices.end());
    s.row_offsets[br + 1] = static_cast<int32_t>(s.col_indices.size());
  }
  return s;
}

namespace {

// Calls emit(row, slot_in_block_row, col_in_block, value) for every nonzero of `a`, where slot is
// the block's index among its block row's blocks.
template <typename Emit>
void ForEachInBlocks(const CsrMatrix& a, const BlockStructure& s, Emit emit) {
  std::vector<int32_t> slot(s.block_cols, -1);
  for (int64_t br = 0; br < s.block_rows; ++br) {
    for (int32_t i = s.row_offsets[br]; i < s.row_offsets[br + 1]; ++i) slot[s.col_indices[i]] = i - s.row_offsets[br];
    for (int64_t r = br * s.block; r < (br + 1) * s.block; ++r) {
      for (int32_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
        const int64_t c = a.col_indices[e];
        emit(r, slot[c / s.block], c % s.block, a.values[e]);
      }
    }
  }
}

}  // namespace

std::vector<float> BsrValues(const CsrMatrix& a, const BlockStructure& s) {
  const int64_t area = s.block * s.block;
  std::vector<float> values(static_cast<size_t>(s.num_blocks() * area), 0.0f);
  ForEachInBlocks(a, s, [&](int64_t r, int64_t slot, int64_t c_in, float v) {
    const int64_t br = r / s.block;
    values[(s.row_offsets[br] + slot) * area + (r % s.block) * s.block + c_in] = v;
  });
  return values;
}

BlockedEll ToBlockedEll(const CsrMatrix& a, const BlockStructure& s) {
  BlockedEll ell;
  const int64_t width = s.max_blocks_per_row();
  ell.ell_cols = width * s.block;
  ell.col_indices.assign(static_cast<size_t>(s.block_rows * width), -1);
  for (int64_t br = 0; br < s.block_rows; ++br) {
    for (int32_t i = s.row_offsets[br]; i < s.row_offsets[br + 1]; ++i) {
      ell.col_indices[br * width + (i - s.row_offsets[br])] = s.col_indices[i];
    }
  }
  ell.values.assign(static_cast<size_t>(a.rows * ell.ell_cols), 0.0f);
  ForEachInBlocks(a, s, [&](int64_t r, int64_t slot, int64_t c_in, float v) {
    ell.values[r * ell.ell_cols + slot * s.block + c_in] = v;
  });
  return ell;
}

}  // namespace sparseditto::gpu
