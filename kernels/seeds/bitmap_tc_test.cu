// CPU tests of the bitmap_tc seed's host side: the format, every tile re-expanded two ways (sub-block by
// sub-block, and lane by lane through the mma.sync m16n8k16 A-fragment layout of the PTX ISA) must give
// back the matrix; the split-K choice, group ranges and workspace layout; and a replay of split K (per-split
// partials through the workspace, the last CTA of a tile summing them in split order) against a plain
// product, in every arrival order. No CUDA runtime calls.
#include "kernels/seeds/bitmap_tc.cu"

#include <numeric>
#include <random>
#include <set>

#include "gtest/gtest.h"
#include "kernels/seeds/testing/grouped_records_checks.h"
#include "kernels/seeds/testing/random_csr16.h"

namespace {

using Csr = sparseditto::seed_testing::Csr16;
using sparseditto::seed_testing::CheckGroupedRecords;
using sparseditto::seed_testing::RandomCsr16;

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
  ASSERT_NO_FATAL_FAILURE(CheckGroupedRecords(f, m.rows, m.cols, {WARPS_M, WARPS_K, kGroupK, kBitmapChunks}, 8,
                                              [&](size_t record, int w) { return uint32_t{f.data[record + w]}; }));
  const std::vector<uint16_t> want = Dense(m, int64_t{f.row_tiles} * 16, int64_t{f.groups} * kGroupK);
  EXPECT_TRUE(ExpandBySubBlock(f) == want);
  EXPECT_TRUE(ExpandByLane(f) == want);
}

TEST(BitmapTcFormat, AwkwardShapesRoundTrip) {
  CheckRoundTrip(RandomCsr16(7, 96, 0.3, 1));
  CheckRoundTrip(RandomCsr16(65, 33, 0.3, 2));
  CheckRoundTrip(RandomCsr16(33, 200, 0.1, 3));
  CheckRoundTrip(RandomCsr16(33, 200, 0.5, 4, {0}, {1, 2}));  // one dense row, empty rows
  CheckRoundTrip(RandomCsr16(1, 1, 1.0, 5));
  CheckRoundTrip(RandomCsr16(16, 16, 1.0, 6));                // a full tile
  CheckRoundTrip(RandomCsr16(130, 300, 0.9, 7));
}

TEST(BitmapTcFormat, EmptyMatrixHasOnlyBitmaps) {
  const Csr m = RandomCsr16(20, 70, 0.0, 8);
  const BitmapFormat f = Build(m);
  EXPECT_EQ(f.max_group_chunks, static_cast<uint32_t>(1 + WARPS_K * kBitmapChunks));
  for (size_t i = 0; i + 1 < f.goff.size(); ++i) EXPECT_EQ(f.goff[i + 1] - f.goff[i], f.max_group_chunks);
  CheckRoundTrip(m);
}

TEST(BitmapTcFormat, FullTileStoresEveryValue) {
  const Csr m = RandomCsr16(16, kGroupK, 1.0, 9);
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

// ---- split K --------------------------------------------------------------------------------------

TEST(BitmapTcSplitK, ChooseSplitsTable) {
  const int want = SPLIT_CTAS_PER_SM * 132;  // CTAs an H200 (132 SMs) is filled with
  EXPECT_EQ(ChooseSplits(want, 1, 1000, 132), 1);         // the grid alone fills the GPU
  EXPECT_EQ(ChooseSplits(want * 2 / 3 + 1, 1, 1000, 132), 1);  // close enough: splitting in 2 overshoots more
  EXPECT_EQ(ChooseSplits(128, 8, 1000, 132), 1);          // large n: 1024 CTAs
  EXPECT_EQ(ChooseSplits(4096 / 32, 1, 16, 132), std::min((2 * want + 128) / 256, 8));  // 4096^2, n = 16
  EXPECT_EQ(ChooseSplits(10, 1, 1000, 132), (2 * want + 10) / 20);                      // small grid: fill
  EXPECT_EQ(ChooseSplits(1, 1, 7, 132), 3);    // never more than groups / 2
  EXPECT_EQ(ChooseSplits(1, 1, 3, 132), 1);
  EXPECT_EQ(ChooseSplits(1, 1, 1, 132), 1);
  EXPECT_EQ(ChooseSplits(1, 1, 0, 132), 1);
  EXPECT_EQ(ChooseSplits(1, 1, 1000, 0), 1);   // no SM count: no split
  EXPECT_EQ(ChooseSplits(1, 1, 1 << 30, 1 << 20), 65535);  // gridDim.z limit
  for (int sms : {1, 108, 132})
    for (int64_t ctas = 1; ctas <= 1200; ctas += 3)
      for (int groups = 0; groups <= 70; ++groups) {
        const int s = ChooseSplits(ctas, 1, groups, sms);
        const int64_t target = int64_t{SPLIT_CTAS_PER_SM} * sms;
        SCOPED_TRACE(testing::Message() << "sms " << sms << " ctas " << ctas << " groups " << groups << " -> " << s);
        ASSERT_GE(s, 1);
        ASSERT_LE(s, std::max(1, groups / 2));
        ASSERT_EQ(ChooseSplits(ctas, 1, groups, sms), ChooseSplits(1, ctas, groups, sms));
        if (ctas >= target) ASSERT_EQ(s, 1);
        if (s < groups / 2) {  // not capped: s * ctas is the nearest multiple of ctas to the target
          ASSERT_LE(std::abs(s * ctas - target), (s + 1) * ctas - target);
          if (s > 1) ASSERT_LE(std::abs(s * ctas - target), target - (s - 1) * ctas);
        }
        for (int z = 0; s > 1 && z < s; ++z) ASSERT_GE(SplitBegin(z + 1, s, groups) - SplitBegin(z, s, groups), 2);
      }
}

TEST(BitmapTcSplitK, SplitsPartitionTheGroupsInOrder) {
  for (int groups = 1; groups <= 300; ++groups)
    for (int splits = 1; splits <= groups; ++splits) {
      ASSERT_EQ(SplitBegin(0, splits, groups), 0);
      ASSERT_EQ(SplitBegin(splits, splits, groups), groups);
      for (int z = 0; z < splits; ++z) {
        const int size = SplitBegin(z + 1, splits, groups) - SplitBegin(z, splits, groups);
        ASSERT_TRUE(size == groups / splits || size == (groups + splits - 1) / splits) << groups << " " << splits;
      }
    }
  EXPECT_EQ(SplitBegin(65534, 65535, 1 << 30), static_cast<int>((int64_t{65534} << 30) / 65535));  // no overflow
}

State TestState(int rows, int cols) {  // an H200-like state for a matrix with dense-worst-case records
  State s;
  s.rows = rows, s.cols = cols, s.groups = CeilDiv(cols, kGroupK), s.max_smem = 227 * 1024, s.sms = 132;
  s.region_chunks = 1 + WARPS_K * (kBitmapChunks + 16 * TILE_K / 8);
  return s;
}

TEST(BitmapTcSplitK, PlanAndWorkspaceIndexAgree) {
  const State s = TestState(4096, 4096);
  for (int64_t n : {1, 7, 16, 33, 64, 128, 200, 4096}) {
    SCOPED_TRACE(testing::Message() << "n " << n);
    Plan plan;
    ASSERT_TRUE(MakePlan(&s, n, &plan));
    EXPECT_EQ(plan.ncols % 16, 0);
    EXPECT_GE(plan.ncols * int64_t{plan.grid.y}, n);
    EXPECT_LT(plan.ncols * int64_t{plan.grid.y - 1}, n);
    EXPECT_LE(plan.smem, static_cast<size_t>(s.max_smem));
    EXPECT_EQ(plan.grid.x, static_cast<unsigned>(4096 / 16 / WARPS_M));
    EXPECT_EQ(static_cast<int>(plan.grid.z), ChooseSplits(plan.grid.x, plan.grid.y, s.groups, s.sms));
    if (plan.grid.z == 1) {
      EXPECT_EQ(plan.ws_floats, 0u);
      continue;
    }
    // WsIndex maps (tile, split, wm, j, r, lane) one to one onto [0, ws_floats).
    const size_t tiles = size_t{plan.grid.x} * plan.grid.y;
    std::vector<char> seen(plan.ws_floats, 0);
    for (size_t t = 0; t < tiles; ++t)
      for (int z = 0; z < static_cast<int>(plan.grid.z); ++z)
        for (int wm = 0; wm < WARPS_M; ++wm)
          for (int j = 0; j < plan.ncols / 8; ++j)
            for (int r = 0; r < 4; ++r)
              for (int lane = 0; lane < 32; ++lane) {
                const size_t i = WsIndex(t, z, plan.grid.z, wm, plan.ncols, j, r, lane);
                ASSERT_LT(i, plan.ws_floats);
                ASSERT_EQ(seen[i]++, 0);
              }
  }
  Plan small;  // the 4096^2 n = 16 case: splits fill the GPU
  ASSERT_TRUE(MakePlan(&s, 16, &small));
  EXPECT_GT(small.grid.z, 1u);
  EXPECT_EQ(small.ws_floats, size_t{4096} * 16 * small.grid.z);
  Plan none;
  EXPECT_FALSE(MakePlan(&s, 0, &none));
}

float Bf16ToFloat(uint16_t bits) {
  const uint32_t u = uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// The kernel's data flow at the level of tiles: split z of tile (x, y) sums groups [SplitBegin(z),
// SplitBegin(z + 1)) of A (decoded lane by lane from the format) times B into the accumulators of the mma D
// fragments (row lane / 4 + 8 * (r / 2), column j * 8 + 2 * (lane % 4) + r % 2 of row tile wm), writes them at
// WsIndex and counts; the CTA that counts last sums the splits in split order, stores C and re-arms the
// counter. CTAs arrive in `order` (indices into the (tile, split) list).
std::vector<float> ReplaySplitK(const BitmapFormat& f, int64_t rows, int64_t cols, const std::vector<float>& b,
                                int64_t n, int ncols, int splits, const std::vector<int>& order,
                                std::vector<int>* counters) {
  const std::vector<uint16_t> a_bits = ExpandByLane(f);
  const int64_t pcol = int64_t{f.groups} * kGroupK;
  const int row_ctas = f.row_tiles / WARPS_M, n_tiles = CeilDiv(n, ncols);
  std::vector<float> ws(size_t{16} * WARPS_M * ncols * row_ctas * n_tiles * splits, NAN), c(rows * n, NAN);
  counters->assign(size_t(row_ctas) * n_tiles, 0);
  auto acc_row = [&](int x, int wm, int lane, int r) { return (int64_t{x} * WARPS_M + wm) * 16 + lane / 4 + 8 * (r / 2); };
  auto acc_col = [&](int y, int j, int lane, int r) { return int64_t{y} * ncols + j * 8 + 2 * (lane % 4) + r % 2; };
  for (int cta : order) {
    const int tile = cta / splits, z = cta % splits, x = tile % row_ctas, y = tile / row_ctas;
    for (int wm = 0; wm < WARPS_M; ++wm)
      for (int j = 0; j < ncols / 8; ++j)
        for (int r = 0; r < 4; ++r)
          for (int lane = 0; lane < 32; ++lane) {
            const int64_t row = acc_row(x, wm, lane, r), col = acc_col(y, j, lane, r);
            float sum = 0.0f;
            for (int64_t k = int64_t{SplitBegin(z, splits, f.groups)} * kGroupK;
                 k < int64_t{SplitBegin(z + 1, splits, f.groups)} * kGroupK; ++k)
              if (k < cols && col < n) sum += Bf16ToFloat(a_bits[row * pcol + k]) * b[k * n + col];
            ws[WsIndex(tile, z, splits, wm, ncols, j, r, lane)] = sum;
          }
    if (++(*counters)[tile] < splits) continue;
    (*counters)[tile] = 0;
    for (int wm = 0; wm < WARPS_M; ++wm)
      for (int j = 0; j < ncols / 8; ++j)
        for (int r = 0; r < 4; ++r)
          for (int lane = 0; lane < 32; ++lane) {
            float sum = 0.0f;
            for (int zz = 0; zz < splits; ++zz) sum += ws[WsIndex(tile, zz, splits, wm, ncols, j, r, lane)];
            const int64_t row = acc_row(x, wm, lane, r), col = acc_col(y, j, lane, r);
            if (row < rows && col < n) c[row * n + col] = sum;
          }
  }
  return c;
}

TEST(BitmapTcSplitK, ReplaySumsTheSplitsInSplitOrderInAnyArrivalOrder) {
  std::mt19937 rng(11);
  for (const auto& [rows, cols, n, exact] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {100, 3000, 7, true}, {33, 1900, 16, true}, {70, 2600, 1, true}, {40, 3000, 20, false}}) {
    Csr m = RandomCsr16(rows, cols, 0.4, static_cast<uint32_t>(rows + cols), {1}, {2});
    std::vector<float> b(cols * n);
    for (uint16_t& v : m.bits)  // exact: multiples of 1/8 in [-1, 1], so every sum is exact in fp32
      v = ToBits<true>(exact ? (static_cast<int>(rng() % 17) - 8) / 8.0f : std::normal_distribution<float>()(rng));
    for (float& v : b) v = exact ? (static_cast<int>(rng() % 17) - 8) / 8.0f : std::normal_distribution<float>()(rng);
    const BitmapFormat f = Build(m);
    const int ncols = 16, tiles = f.row_tiles / WARPS_M * CeilDiv(n, ncols);
    std::vector<float> want(rows * n, 0.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e)
        for (int64_t c = 0; c < n; ++c) want[r * n + c] += Bf16ToFloat(m.bits[e]) * b[m.cols_of[e] * n + c];
    for (int splits = 1; splits <= f.groups; ++splits) {
      SCOPED_TRACE(testing::Message() << rows << "x" << cols << " n " << n << " groups " << f.groups << " splits "
                                      << splits);
      std::vector<int> order(tiles * splits), counters;
      std::iota(order.begin(), order.end(), 0);
      const std::vector<float> first = ReplaySplitK(f, rows, cols, b, n, ncols, splits, order, &counters);
      EXPECT_EQ(std::count(counters.begin(), counters.end(), 0), tiles);  // re-armed for the next launch
      for (size_t i = 0; i < want.size(); ++i) {
        if (exact) ASSERT_EQ(first[i], want[i]) << i;
        else ASSERT_NEAR(first[i], want[i], 1e-3f * (1 + std::abs(want[i]))) << i;
      }
      for (int shuffle = 0; shuffle < 3; ++shuffle) {  // any arrival order: the same bits
        if (shuffle == 0) std::reverse(order.begin(), order.end());
        else std::shuffle(order.begin(), order.end(), rng);
        const std::vector<float> again = ReplaySplitK(f, rows, cols, b, n, ncols, splits, order, &counters);
        ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0);
      }
    }
  }
}

}  // namespace
