// The record layout bitmap_tc and bitmap_tf32x3 share, checked the same way for both: row tiles of 16 rows
// padded to whole CTAs of warps_m, K padded to whole groups of group_k columns, one record per (row tile,
// group) at goff (in 16-byte chunks, strictly increasing, one entry more, ending at the data's end), and a
// header of tile starts in each record: the first tile right after the header, tiles in order, each at
// least its bitmaps long and inside its record.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_GROUPED_RECORDS_CHECKS_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_GROUPED_RECORDS_CHECKS_H_

#include <algorithm>
#include <cstdint>

#include "gtest/gtest.h"

namespace sparseditto::seed_testing {

struct GroupedTiling {
  int warps_m, warps_k, group_k, bitmap_chunks;  // bitmap_chunks: chunks of a tile's bitmaps
};

// `Format` has row_tiles, groups, goff, data and max_group_chunks; data holds words_per_chunk elements a
// chunk; tile_start(record, w) is tile w's start in chunks, read from the header of the record whose first
// element is data[record].
template <class Format, class TileStart>
void CheckGroupedRecords(const Format& f, int64_t rows, int64_t cols, const GroupedTiling& t, size_t words_per_chunk,
                         TileStart tile_start) {
  ASSERT_EQ(f.row_tiles % t.warps_m, 0);
  ASSERT_GE(int64_t{f.row_tiles} * 16, rows);
  ASSERT_LT(int64_t{f.row_tiles} * 16, rows + 16 * t.warps_m);
  ASSERT_GE(int64_t{f.groups} * t.group_k, cols);
  ASSERT_LT(int64_t{f.groups} * t.group_k, cols + t.group_k);
  ASSERT_EQ(f.goff.size(), static_cast<size_t>(f.row_tiles) * f.groups + 1);
  ASSERT_EQ(f.data.size() % words_per_chunk, 0u);
  ASSERT_EQ(f.goff.back() * words_per_chunk, f.data.size());
  uint32_t longest = 0;
  for (size_t i = 0; i + 1 < f.goff.size(); ++i) {
    ASSERT_LT(f.goff[i], f.goff[i + 1]);
    const uint32_t length = f.goff[i + 1] - f.goff[i];
    longest = std::max(longest, length);
    const size_t record = size_t{f.goff[i]} * words_per_chunk;
    EXPECT_EQ(tile_start(record, 0), 1u);
    for (int w = 0; w < t.warps_k; ++w) {
      EXPECT_LT(tile_start(record, w) + t.bitmap_chunks - 1, length);
      if (w > 0) EXPECT_GE(tile_start(record, w), tile_start(record, w - 1) + t.bitmap_chunks);
    }
  }
  EXPECT_EQ(longest, f.max_group_chunks);
}

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_GROUPED_RECORDS_CHECKS_H_
