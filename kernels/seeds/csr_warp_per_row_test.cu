// Host-side tests of the warp-per-row seed: the launch shape run picks for each n (vector width,
// lanes over n vs. K slices, tiles of n, blocks). No CUDA runtime calls.
#include "kernels/seeds/csr_warp_per_row.cu"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(WarpPerRowLaunchShape, TilesCoverNAndVectorsAreLegal) {
  for (int elem_bytes : {2, 4}) {
    for (bool aligned : {true, false}) {
      for (int64_t rows : {1, 7, 33, 65, 512, 4096}) {
        for (int64_t n = 1; n <= 300; ++n) {
          const LaunchShape s = ChooseLaunchShape(rows, n, elem_bytes, aligned, 132);
          SCOPED_TRACE("rows " + std::to_string(rows) + " n " + std::to_string(n) + " bytes " +
                       std::to_string(elem_bytes) + (aligned ? " aligned" : " unaligned"));
          EXPECT_GE(s.vec, 1);
          EXPECT_EQ(n % s.vec, 0);
          EXPECT_LE(s.vec * elem_bytes, std::max(VEC_BYTES, elem_bytes));
          if (!aligned) EXPECT_EQ(s.vec, 1);
          EXPECT_GE(s.col_lanes_log2, 0);
          EXPECT_LE(1 << s.col_lanes_log2, ROW_THREADS);
          const int64_t tile = int64_t{s.vec} * VECS_PER_LANE << s.col_lanes_log2;
          EXPECT_EQ(s.tiles, (n + tile - 1) / tile);  // tiles cover n, the last one partly
          EXPECT_EQ(s.blocks, (rows + kRowsPerBlock - 1) / kRowsPerBlock);
        }
      }
    }
  }
}

TEST(WarpPerRowLaunchShape, AutoSplitUsesNoMoreLanesThanNNeeds) {
  if (COL_LANES != 0) GTEST_SKIP() << "COL_LANES fixed";
  for (int64_t n : {1, 7, 16, 32, 128, 256, 2048}) {
    const LaunchShape s = ChooseLaunchShape(1 << 20, n, 2, true, 132);  // many rows: no extra splitting
    const int64_t per_lane = int64_t{s.vec} * VECS_PER_LANE;
    const int64_t lanes_needed = (n + per_lane - 1) / per_lane;
    EXPECT_TRUE((1 << s.col_lanes_log2) == ROW_THREADS || (1 << s.col_lanes_log2) >= lanes_needed) << "n " << n;
    EXPECT_TRUE(s.col_lanes_log2 == 0 || (1 << (s.col_lanes_log2 - 1)) < lanes_needed) << "n " << n;
  }
}

TEST(WarpPerRowLaunchShape, FewRowsSplitFurtherToFillTheGpu) {
  if (COL_LANES != 0) GTEST_SKIP() << "COL_LANES fixed";
  const LaunchShape many = ChooseLaunchShape(1 << 20, 256, 2, true, 132);
  const LaunchShape few = ChooseLaunchShape(64, 256, 2, true, 132);
  EXPECT_LE(few.col_lanes_log2, many.col_lanes_log2);
  EXPECT_GE(few.tiles, many.tiles);
}

TEST(WarpPerRowLog2, FloorOfPowersOfTwo) {
  EXPECT_EQ(Log2(1), 0);
  EXPECT_EQ(Log2(2), 1);
  EXPECT_EQ(Log2(8), 3);
  EXPECT_EQ(Log2(32), 5);
}

}  // namespace
