// Host-side tests of the Sputnik 1-D seed: the row swizzle order, the tile shrink for small n, and the
// vector width the tiling allows. No CUDA runtime calls.
#include "kernels/seeds/csr_sputnik_1d.cu"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

std::vector<int32_t> RandomRowOffsets(int64_t rows, int max_len, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> len(0, max_len);
  std::vector<int32_t> ro{0};
  for (int64_t r = 0; r < rows; ++r) ro.push_back(ro.back() + (r % 5 == 3 ? 0 : len(gen)));
  return ro;
}

TEST(SputnikRowSwizzle, IsAPermutationLongestFirstStable) {
  for (int64_t rows : {1, 7, 33, 65, 512}) {
    for (int max_len : {0, 1, 5, 200}) {
      const std::vector<int32_t> ro = RandomRowOffsets(rows, max_len, static_cast<uint32_t>(rows * 31 + max_len));
      const std::vector<int32_t> order = RowSwizzle(ro.data(), rows);
      SCOPED_TRACE("rows " + std::to_string(rows) + " max_len " + std::to_string(max_len));
      ASSERT_EQ(static_cast<int64_t>(order.size()), rows);
      std::vector<int> seen(rows, 0);
      for (int32_t r : order) {
        ASSERT_GE(r, 0);
        ASSERT_LT(r, rows);
        ++seen[r];
      }
      for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(seen[r], 1) << "row " << r;
      auto length = [&](int32_t r) { return ro[r + 1] - ro[r]; };
      for (int64_t i = 1; i < rows; ++i) {
        EXPECT_GE(length(order[i - 1]), length(order[i])) << "slot " << i;
        if (length(order[i - 1]) == length(order[i])) EXPECT_LT(order[i - 1], order[i]) << "slot " << i;
      }
    }
  }
}

TEST(SputnikRowSwizzle, HandWorkedExample) {
  const std::vector<int32_t> ro = {0, 2, 2, 7, 8, 10};  // lengths 2 0 5 1 2
  EXPECT_EQ(RowSwizzle(ro.data(), 5), (std::vector<int32_t>{2, 0, 4, 3, 1}));
}

TEST(SputnikShrinkLevel, NarrowestTileThatStillCoversN) {
  for (int64_t n = 1; n <= 600; ++n) {
    const int level = ShrinkLevel(n);
    SCOPED_TRACE("n " + std::to_string(n));
    EXPECT_GE(level, 0);
    EXPECT_LE(level, SHRINK_LEVELS);
    if (level > 0) EXPECT_GE(TILE_N >> level, n);  // shrinking never adds tiles
    if (level < SHRINK_LEVELS) EXPECT_LT(TILE_N >> (level + 1), n);
    EXPECT_GE(ROW_THREADS >> level, 1);
  }
}

TEST(SputnikTiling, VectorWidthDividesTheColumnsOfAThread) {
  for (int elem_bytes : {2, 4}) {
    const int v = VectorElems(elem_bytes);
    EXPECT_GE(v, 1);
    EXPECT_LE(v * elem_bytes, std::max(VEC_BYTES, elem_bytes));
    EXPECT_EQ(kColsPerThread % v, 0);
  }
  EXPECT_EQ((Tiling<1, 0>::kTile), TILE_N);
  EXPECT_EQ((Tiling<1, SHRINK_LEVELS>::kThreads), BLOCK_ROWS * ROW_THREADS);
}

}  // namespace
