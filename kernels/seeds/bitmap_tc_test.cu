// CPU tests of the bitmap_tc seed's host-side format: every tile re-expanded two ways (sub-block by
// sub-block, and lane by lane through the mma.sync m16n8k16 A-fragment layout of the PTX ISA) must give
// back the matrix. No CUDA runtime calls.
#include "kernels/seeds/bitmap_tc.cu"

#include <random>

#include "gtest/gtest.h"

namespace {

struct Csr {
  int64_t rows, cols;
  std::vector<int32_t> offsets{0}, cols_of;
  std::vector<uint16_t> bits;
};

// Each element nonzero with probability `density`; rows listed in `dense_rows` full, in `empty_rows` empty.
Csr RandomCsr(int64_t rows, int64_t cols, double density, uint32_t seed, std::vector<int64_t> dense_rows = {},
              std::vector<int64_t> empty_rows = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Csr m{rows, cols};
  for (int64_t r = 0; r < rows; ++r) {
    const bool dense = std::find(dense_rows.begin(), dense_rows.end(), r) != dense_rows.end();
    const bool empty = std::find(empty_rows.begin(), empty_rows.end(), r) != empty_rows.end();
    for (int64_t c = 0; c < cols; ++c) {
      if (empty || !(dense || u(rng) < density)) continue;
      m.cols_of.push_back(static_cast<int32_t>(c));
      m.bits.push_back(static_cast<uint16_t>(1 + rng() % 65535));  // never 0: a stored zero is invisible
    }
    m.offsets.push_back(static_cast<int32_t>(m.cols_of.size()));
  }
  return m;
}

std::vector<uint16_t> Dense(const Csr& m, int64_t rows, int64_t cols) {
  std::vector<uint16_t> d(rows * cols, 0);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) d[r * cols + m.cols_of[e]] = m.bits[e];
  return d;
}

BitmapFormat Build(const Csr& m) {
  BitmapFormat f;
  std::string error;
  EXPECT_TRUE(BuildBitmapFormat(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.bits.data(), &f, &error))
      << error;
  return f;
}

// The start (uint16 index into data) of tile (rt, kt).
size_t TileStart(const BitmapFormat& f, int rt, int kt) {
  const size_t group = static_cast<size_t>(f.goff[static_cast<size_t>(rt) * f.groups + kt / WARPS_K]) * 8;
  return group + static_cast<size_t>(f.data[group + kt % WARPS_K]) * 8;
}

// Sub-block by sub-block: bitmap bit 8*r+c, values in bit order after the tile's bitmaps.
std::vector<uint16_t> ExpandBySubBlock(const BitmapFormat& f) {
  const int64_t prow = int64_t{f.row_tiles} * 16, pcol = int64_t{f.groups} * kGroupK;
  std::vector<uint16_t> d(prow * pcol, 0);
  for (int rt = 0; rt < f.row_tiles; ++rt) {
    for (int kt = 0; kt < f.groups * WARPS_K; ++kt) {
      const size_t at = TileStart(f, rt, kt);
      size_t v = at + kBitmapChunks * 8;
      for (int s = 0; s < kBitmapsPerTile; ++s) {
        uint64_t bm;
        std::memcpy(&bm, &f.data[at + s * 4], 8);
        // Sub-block s covers rows (s % 2) * 8.., columns (s / 4) * 16 + ((s / 2) % 2) * 8..
        for (int bit = 0; bit < 64; ++bit) {
          if (!((bm >> bit) & 1)) continue;
          const int64_t r = rt * 16 + (s % 2) * 8 + bit / 8;
          const int64_t c = int64_t{kt} * TILE_K + (s / 4) * 16 + ((s / 2) % 2) * 8 + bit % 8;
          d[r * pcol + c] = f.data[v++];
        }
      }
    }
  }
  return d;
}

// Lane by lane: register i of the A fragment of m16n8k16 (PTX ISA "Matrix Fragments for
// mma.m16n8k16", .f16/.bf16): a{2i}, a{2i+1} at row groupID + 8 * (i % 2), columns
// 2 * threadID_in_group + {0, 1} + 8 * (i / 2), with groupID = lane / 4, threadID_in_group = lane % 4.
std::vector<uint16_t> ExpandByLane(const BitmapFormat& f) {
  const int64_t prow = int64_t{f.row_tiles} * 16, pcol = int64_t{f.groups} * kGroupK;
  std::vector<uint16_t> d(prow * pcol, 0xFFFF);
  for (int rt = 0; rt < f.row_tiles; ++rt) {
    for (int kt = 0; kt < f.groups * WARPS_K; ++kt) {
      const size_t at = TileStart(f, rt, kt);
      const uint16_t* values = &f.data[at + kBitmapChunks * 8];
      int base = 0;  // as ComputeStage walks the tile
      for (int kb = 0; kb < TILE_K / 16; ++kb) {
        uint32_t reg[32][4];
        for (int i = 0; i < 4; ++i) {
          uint64_t bm;
          std::memcpy(&bm, &f.data[at + (kb * 4 + i) * 4], 8);
          for (int lane = 0; lane < 32; ++lane) reg[lane][i] = LanePair(bm, values + base, lane);
          base += Popcount64(bm);
        }
        for (int lane = 0; lane < 32; ++lane) {
          for (int i = 0; i < 4; ++i) {
            const int64_t r = rt * 16 + lane / 4 + 8 * (i % 2);
            const int64_t c = int64_t{kt} * TILE_K + kb * 16 + 2 * (lane % 4) + 8 * (i / 2);
            d[r * pcol + c] = static_cast<uint16_t>(reg[lane][i] & 0xFFFF);
            d[r * pcol + c + 1] = static_cast<uint16_t>(reg[lane][i] >> 16);
          }
        }
      }
    }
  }
  return d;
}

void CheckRoundTrip(const Csr& m) {
  SCOPED_TRACE(testing::Message() << m.rows << "x" << m.cols << " nnz " << m.bits.size());
  const BitmapFormat f = Build(m);
  ASSERT_EQ(f.row_tiles % WARPS_M, 0);
  ASSERT_GE(int64_t{f.row_tiles} * 16, m.rows);
  ASSERT_LT(int64_t{f.row_tiles} * 16, m.rows + 16 * WARPS_M);
  ASSERT_GE(int64_t{f.groups} * kGroupK, m.cols);
  ASSERT_LT(int64_t{f.groups} * kGroupK, m.cols + kGroupK);
  ASSERT_EQ(f.goff.size(), static_cast<size_t>(f.row_tiles) * f.groups + 1);
  ASSERT_EQ(f.data.size() % 8, 0u);
  ASSERT_EQ(f.goff.back() * size_t{8}, f.data.size());
  uint32_t longest = 0;
  for (size_t i = 0; i + 1 < f.goff.size(); ++i) {
    ASSERT_LT(f.goff[i], f.goff[i + 1]);
    longest = std::max(longest, f.goff[i + 1] - f.goff[i]);
    // Header: tiles in order, the first right after the header, each inside the record.
    const size_t first = size_t{f.goff[i]} * 8;
    EXPECT_EQ(f.data[first], 1);
    for (int w = 0; w < WARPS_K; ++w) {
      EXPECT_LT(f.data[first + w] + kBitmapChunks - 1, f.goff[i + 1] - f.goff[i]);
      if (w > 0) EXPECT_GE(f.data[first + w], f.data[first + w - 1] + kBitmapChunks);
    }
  }
  EXPECT_EQ(longest, f.max_group_chunks);
  const std::vector<uint16_t> want = Dense(m, int64_t{f.row_tiles} * 16, int64_t{f.groups} * kGroupK);
  EXPECT_TRUE(ExpandBySubBlock(f) == want);
  EXPECT_TRUE(ExpandByLane(f) == want);
}

TEST(BitmapTcFormat, AwkwardShapesRoundTrip) {
  CheckRoundTrip(RandomCsr(7, 96, 0.3, 1));
  CheckRoundTrip(RandomCsr(65, 33, 0.3, 2));
  CheckRoundTrip(RandomCsr(33, 200, 0.1, 3));
  CheckRoundTrip(RandomCsr(33, 200, 0.5, 4, {0}, {1, 2}));  // one dense row, empty rows
  CheckRoundTrip(RandomCsr(1, 1, 1.0, 5));
  CheckRoundTrip(RandomCsr(16, 16, 1.0, 6));                // a full tile
  CheckRoundTrip(RandomCsr(130, 300, 0.9, 7));
}

TEST(BitmapTcFormat, EmptyMatrixHasOnlyBitmaps) {
  const Csr m = RandomCsr(20, 70, 0.0, 8);
  const BitmapFormat f = Build(m);
  EXPECT_EQ(f.max_group_chunks, static_cast<uint32_t>(1 + WARPS_K * kBitmapChunks));
  for (size_t i = 0; i + 1 < f.goff.size(); ++i) EXPECT_EQ(f.goff[i + 1] - f.goff[i], f.max_group_chunks);
  CheckRoundTrip(m);
}

TEST(BitmapTcFormat, FullTileStoresEveryValue) {
  const Csr m = RandomCsr(16, kGroupK, 1.0, 9);
  const BitmapFormat f = Build(m);
  ASSERT_EQ(f.goff.size(), static_cast<size_t>(WARPS_M) + 1);
  // Header, then per tile the bitmaps and 16 * TILE_K values.
  EXPECT_EQ(f.goff[1] - f.goff[0], static_cast<uint32_t>(1 + WARPS_K * (kBitmapChunks + 16 * TILE_K / 8)));
}

TEST(BitmapTcFormat, SubBlockOrderMatchesFragmentRegisters) {
  // a0a1: rows 0-7 of k 0-7; a2a3: rows 8-15 of k 0-7; a4a5: rows 0-7 of k 8-15; a6a7: rows 8-15 of k 8-15.
  EXPECT_EQ(SubBlockOf(0, 0), 0);
  EXPECT_EQ(SubBlockOf(8, 0), 1);
  EXPECT_EQ(SubBlockOf(0, 8), 2);
  EXPECT_EQ(SubBlockOf(15, 15), 3);
  EXPECT_EQ(SubBlockOf(3, 21), 4);
  EXPECT_EQ(SubBlockOf(11, 29), 7);
  EXPECT_EQ(BitOf(9, 13), 8 + 5);
  const uint16_t values[3] = {11, 22, 33};
  // Bits 2 and 3 (lane 1) and bit 0: lane 0 gets {11, 0}, lane 1 gets {22, 33}, lane 2 nothing.
  const uint64_t bm = 0b1101;
  EXPECT_EQ(LanePair(bm, values, 0), 11u);
  EXPECT_EQ(LanePair(bm, values, 1), 22u | (33u << 16));
  EXPECT_EQ(LanePair(bm, values, 2), 0u);
  EXPECT_EQ(LanePair(uint64_t{1} << 63, values, 31), 11u << 16);
}

TEST(BitmapTcFormat, SharedMemoryOfTheDefaultTilingFitsAnH200) {
  State s;
  s.groups = CeilDiv(11008, kGroupK);
  s.region_chunks = 1 + WARPS_K * (kBitmapChunks + 16 * TILE_K / 8);  // dense worst case
  EXPECT_LE(SmemBytes(&s, 16), 227u * 1024);
}

}  // namespace
