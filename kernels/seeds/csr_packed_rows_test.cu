// Host-side tests of the packed-rows seed: the format prepare builds (row starts on 8-entry groups,
// 16-bit columns, padding traced to no source entry, the K limit) and the launch shape run picks.
// No CUDA runtime calls.
#include "kernels/seeds/csr_packed_rows.cu"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(PackedRowsFormat, RowsStartOnGroupsAndEveryEntryIsTracedBack) {
  // 4 rows x 70000 would not fit; 5 rows x 40000 with lengths 0, 1, 8, 9, 17 (awkward on purpose).
  const std::vector<int32_t> lengths = {0, 1, 8, 9, 17};
  std::vector<int32_t> offsets = {0}, cols;
  for (int32_t len : lengths) {
    for (int32_t i = 0; i < len; ++i) cols.push_back(i * 2311 % 40000);
    std::sort(cols.end() - len, cols.end());
    offsets.push_back(offsets.back() + len);
  }
  PackedRows f;
  const char* why = nullptr;
  ASSERT_TRUE(BuildPackedRows(5, 40000, offsets.data(), cols.data(), &f, &why));
  ASSERT_EQ(f.first.size(), 5u);
  int64_t expected_first = 0;
  for (int r = 0; r < 5; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    EXPECT_EQ(f.first[r] % kGroup, 0);
    EXPECT_EQ(f.first[r], expected_first);
    EXPECT_EQ(f.len[r], lengths[r]);
    for (int i = 0; i < lengths[r]; ++i) {
      EXPECT_EQ(f.source[f.first[r] + i], offsets[r] + i);
      EXPECT_EQ(f.cols[f.first[r] + i], cols[offsets[r] + i]);
    }
    const int64_t padded = (lengths[r] + kGroup - 1) / kGroup * kGroup;
    for (int64_t i = lengths[r]; i < padded; ++i) EXPECT_EQ(f.source[f.first[r] + i], -1);
    expected_first += padded;
  }
  EXPECT_EQ(f.cols.size(), static_cast<size_t>(expected_first));
  EXPECT_EQ(f.source.size(), f.cols.size());
}

TEST(PackedRowsFormat, ColumnsPast16BitsAreRefusedWithAReason) {
  const std::vector<int32_t> offsets = {0, 1}, cols = {65535};
  PackedRows f;
  const char* why = nullptr;
  EXPECT_TRUE(BuildPackedRows(1, 65536, offsets.data(), cols.data(), &f, &why));
  EXPECT_EQ(f.cols[0], 65535);
  EXPECT_FALSE(BuildPackedRows(1, 65537, offsets.data(), cols.data(), &f, &why));
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("65536"), std::string::npos);
}

TEST(PackedRowsFormat, AnEmptyMatrixStillHasOneGroupToPointAt) {
  const std::vector<int32_t> offsets = {0, 0, 0};
  PackedRows f;
  const char* why = nullptr;
  ASSERT_TRUE(BuildPackedRows(2, 16, offsets.data(), nullptr, &f, &why));
  EXPECT_EQ(f.cols.size(), static_cast<size_t>(kGroup));  // cudaMalloc of 0 bytes is avoided
  EXPECT_EQ(f.len, (std::vector<int>{0, 0}));
}

TEST(PackedRowsLaunchShape, TilesCoverNWithLegalVectors) {
  for (int elem_bytes : {2, 4}) {
    for (bool aligned : {true, false}) {
      for (int64_t n = 1; n <= 600; ++n) {
        SCOPED_TRACE("n " + std::to_string(n) + " bytes " + std::to_string(elem_bytes) + (aligned ? "" : " unaligned"));
        const LaunchShape s = ChooseLaunchShape(n, elem_bytes, aligned);
        EXPECT_TRUE(s.vec == 1 || s.vec * elem_bytes == 16);
        EXPECT_EQ(n % s.vec, 0);
        if (!aligned) EXPECT_EQ(s.vec, 1);
        EXPECT_LE(1 << s.col_lanes_log2, MAX_COL_LANES);
        const int64_t tile = int64_t{s.vec} << s.col_lanes_log2;
        EXPECT_EQ(s.tiles, (n + tile - 1) / tile);
        // No more lanes over n than n needs: the rest go to K slices.
        if (s.col_lanes_log2 > 0) EXPECT_LT(int64_t{s.vec} << (s.col_lanes_log2 - 1), n);
      }
    }
  }
}

TEST(PackedRowsLaunchShape, SmallNLeavesMostLanesToTheNonzeros) {
  const LaunchShape s16 = ChooseLaunchShape(16, 2, true);
  EXPECT_EQ(s16.vec, 8);
  EXPECT_EQ(s16.col_lanes_log2, 1);  // 2 lanes over n, 16 slices over the row's groups
  EXPECT_EQ(s16.tiles, 1);
  const LaunchShape s32 = ChooseLaunchShape(32, 4, true);
  EXPECT_EQ(s32.vec, 4);
  EXPECT_EQ(s32.col_lanes_log2, 3);
}

}  // namespace

namespace {

TEST(PackedRowsSharedB, UsedOnlyWhereATileFitsAndRowsFillTheGpu) {
  constexpr int64_t kSmem = 232448;  // an H200's opt-in limit; the kernel reads it from the device
  struct Case {
    int64_t rows, k, n;
    int elem_bytes;
    bool use;
    int64_t tiles;
  };
  for (const Case& c : {Case{4096, 4096, 16, 2, true, 1},      // 4096 x 16 halves: 128 KiB
                        Case{4096, 11008, 16, 2, true, 2},     // 16 columns do not fit, 8 do: two tiles
                        Case{8192, 8192, 16, 2, true, 2},
                        Case{4096, 4096, 128, 2, false, 0},    // would need 16x the tiles (A re-read 16 times)
                        Case{512, 4096, 16, 2, false, 0},      // too few rows for a CTA per SM
                        Case{4096, 4096, 7, 2, false, 0},      // no 16-byte vectors
                        Case{4096, 200000, 8, 2, false, 0}}) { // not even 8 columns fit
    SCOPED_TRACE("rows " + std::to_string(c.rows) + " k " + std::to_string(c.k) + " n " + std::to_string(c.n));
    const LaunchShape global = ChooseLaunchShape(c.n, c.elem_bytes, true);
    const SharedBPlan plan = ChooseSharedB(global, c.rows, c.k, c.n, c.elem_bytes, kSmem, 132);
    EXPECT_EQ(plan.use, c.use && SHARED_B);
    if (!plan.use) continue;
    EXPECT_EQ(plan.shape.tiles, c.tiles);
    const int64_t width = int64_t{plan.shape.vec} << plan.shape.col_lanes_log2;
    EXPECT_EQ(plan.smem, static_cast<size_t>(c.k * width * c.elem_bytes));
    EXPECT_LE(plan.smem, static_cast<size_t>(kSmem));
    EXPECT_GE(width * plan.shape.tiles, c.n);  // the tiles cover n
    EXPECT_GE(plan.blocks, 1);
    EXPECT_LE(plan.blocks, (c.rows + SHARED_B_WARPS - 1) / SHARED_B_WARPS);
  }
}

}  // namespace
