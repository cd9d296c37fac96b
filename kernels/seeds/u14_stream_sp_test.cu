// CPU tests of the 1:4 seed (no GPU, no CUDA runtime calls): its format (values, metadata nibbles, residual)
// re-expanded through the seed's own ExpandStep and the PTX definition of mma.sp, and a replay of every CTA's
// data flow in both layouts (pointer walk, expansion, ldmatrix(.trans) and mma.sp emulated, the residual against
// the slab, the cluster's rank-order sum, the store coordinates) against a plain product.
#include "kernels/seeds/u14_stream_sp.cu"
#include "kernels/seeds/testing/cluster_stream_checks.h"

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

U14Host BuildU(const Csr& m, bool balance = false, bool first_high = kFirstHighLayout) {
  U14Host h;
  std::string why;
  EXPECT_TRUE(BuildU14(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why, balance, first_high)) << why;
  return h;
}

// What mma.sp gets in step q of record (mt, kt): each lane's registers as the kernel builds them (ExpandStep
// over its first and second values and the metadata words of its lane pair, which the kernel exchanges with one
// shuffle), and each lane's own metadata word.
void StepOperands(const U14Host& h, int64_t mt, int64_t kt, int q, Lanes4* a, std::array<uint32_t, 32>* e) {
  const int64_t kpairs = h.kp / kBk;
  for (int l = 0; l < 32; ++l) (*e)[l] = h.meta[MetaRecord(mt, kt, kpairs) + MetaLaneWord(l) + q];
  for (int l = 0; l < 32; ++l) {
    const int t = l & 3;
    const uint32_t mine = (*e)[l], other = (*e)[l ^ 1];
    const int64_t base = ValRecord(mt, kt, kpairs) + l * 8 + q * 4;
    uint32_t sid[4];  // ids 5-8 for the registers that have a second value
    for (int r = 0; r < 4; ++r) sid[r] = h.seconds[base + r] != 0.0f ? uint32_t(r + 5) : 0u;
    uint32_t regs[4];
    ExpandStep(1u | (2u << 16), 3u | (4u << 16), sid[0] | (sid[1] << 16), sid[2] | (sid[3] << 16), (t & 1) ? other : mine,
               (t & 1) ? mine : other, t, regs, h.first_high);  // first-value ids 1-4
    for (int r = 0; r < 4; ++r) {
      const float v = h.vals[base + r], second = h.seconds[base + r];
      const uint32_t id = static_cast<uint32_t>(r + 1);
      if (sid[r]) {  // in order; the first-high layout's first goes high under (0, 2), (0, 3) and (2, 3)
        ASSERT_TRUE(regs[r] == (id | (sid[r] << 16)) || (h.first_high && regs[r] == (sid[r] | (id << 16))))
            << "lane " << l << " register " << r << ": the two values, one a half";
        (*a)[l][r] = regs[r] == (id | (sid[r] << 16)) ? Reg{v, second} : Reg{second, v};
        continue;
      }
      ASSERT_TRUE(regs[r] == id || regs[r] == id << 16) << "lane " << l << " register " << r;
      (*a)[l][r] = regs[r] == id ? Reg{v, 0.0f} : Reg{0.0f, v};
    }
  }
}

TEST(U14Format, NibblesAndExpansion) {
  for (bool first_high : {false, true})
    for (int p = 0; p < 4; ++p) {
      SCOPED_TRACE(first_high ? "the first-high layout" : "in order");
      const uint32_t nib = NibbleFor(p, first_high), i0 = nib & 3, i1 = nib >> 2;
      EXPECT_LT(i0, i1) << p;                              // ordered metadata
      EXPECT_TRUE(i0 == uint32_t(p) || i1 == uint32_t(p)) << p;  // the value's position is selected
      EXPECT_EQ(Expand(0x1234u, 0, nib, first_high), i1 == uint32_t(p) ? 0x12340000u : 0x1234u) << "slot of the value, p " << p;
    }
  // A second value (even -0) with its pair's nibble: in order, the first low; in the first-high layout the first is
  // the value at idx1 under (0, 2), (0, 3) and (2, 3), so it goes high, and low under the others.
  for (uint32_t pair : {0x4u, 0x8u, 0xCu, 0x9u, 0xDu, 0xEu}) {
    const bool high = pair == 0x8u || pair == 0xCu || pair == 0xEu;
    EXPECT_EQ(FirstHigh(pair), high) << pair;
    EXPECT_EQ(Expand(0x1234u, 0x8000u, pair, false), 0x80001234u) << pair;
    EXPECT_EQ(Expand(0x1234u, 0x8000u, pair, true), high ? 0x12348000u : 0x80001234u) << pair;
  }
  EXPECT_EQ(NibbleFor(-1, false), 0x4u);
  EXPECT_EQ(NibbleFor(-1, true), 0x4u);
}

// ExpandStep's word-at-once test (w & ~(w << 3)) against FirstHigh nibble by nibble, for every lane's groups of
// every metadata word made of the nibbles a record holds (and 0x0, never stored: its bits must not leak either).
TEST(U14Format, ExpandStepPlacesEachFirstByItsOwnNibble) {
  const uint32_t nibbles[] = {0x0u, 0x4u, 0x8u, 0xCu, 0x9u, 0xDu, 0xEu};
  uint32_t state = 1;
  const auto next_nibble = [&] { return nibbles[((state = state * 1664525u + 1013904223u) >> 16) % 7]; };
  for (int trial = 0; trial < 4000; ++trial) {
    uint32_t w[2] = {0, 0};
    for (uint32_t& word : w)
      for (int i = 0; i < 8; ++i) word |= next_nibble() << (4 * i);
    for (int t = 0; t < 4; ++t) {
      uint32_t a[4];
      ExpandStep(0x22221111u, 0x44443333u, 0x66665555u, 0x88887777u, w[0], w[1], t, a, true);
      const uint32_t firsts[4] = {0x1111u, 0x2222u, 0x3333u, 0x4444u}, seconds[4] = {0x5555u, 0x6666u, 0x7777u, 0x8888u};
      for (int r = 0; r < 4; ++r) {
        const bool high = FirstHigh((w[r / 2] >> (16 * (r % 2) + 4 * t)) & 0xFu);
        EXPECT_EQ(a[r], high ? (firsts[r] << 16 | seconds[r]) : (seconds[r] << 16 | firsts[r]))
            << std::hex << "words " << w[0] << " " << w[1] << " lane t " << t << " register " << r;
      }
    }
  }
}

// BytePerm's host side is prmt.b32's default mode: each selector nibble picks a byte of y:x.
TEST(U14Format, BytePermPicksTheSelectedBytes) {
  const uint32_t x = 0x33221100u, y = 0x77665544u;
  EXPECT_EQ(BytePerm(x, y, 0x3210u), x);
  EXPECT_EQ(BytePerm(x, y, 0x7654u), y);
  EXPECT_EQ(BytePerm(x, y, 0x5410u), 0x55441100u);
  EXPECT_EQ(BytePerm(x, y, 0x1054u), 0x11005544u);
  EXPECT_EQ(BytePerm(x, y, 0x7632u), 0x77663322u);
  EXPECT_EQ(BytePerm(x, y, 0x3276u), 0x33227766u);
}

TEST(U14Format, ReexpandsToTheCsrMatrixWithTheResidual) {
  struct Case { int64_t rows, cols; double density; };
  for (const Case& c : {Case{7, 96, 0.1}, Case{65, 36, 0.3}, Case{33, 200, 0.5}, Case{130, 68, 0.9}, Case{16, 64, 1.0}, Case{3, 6, 0.5}})
  for (bool balance : {false, true})
  for (bool first_high : {false, true}) {
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " density " << c.density << (balance ? " balanced" : "")
                                      << (first_high ? " the first-high layout" : ""));
    const Csr m = WithDenseRows(RandomCsr(c.rows, c.cols, c.density, static_cast<uint32_t>(c.rows * 7 + c.cols)), {c.rows / 2});
    const U14Host h = BuildU(m, balance, first_high);
    ASSERT_EQ(h.mp % kMPad, 0);
    ASSERT_EQ(h.kp % kBk, 0);
    const int64_t kpairs = h.kp / kBk;
    ASSERT_EQ(h.rstart.size(), size_t(h.mp / 16 * (kpairs + 1) * 8));
    const std::vector<float> dense = Dense(m);
    for (int64_t mt = 0; mt < h.mp / 16; ++mt)
      for (int64_t kt = 0; kt < kpairs; ++kt) {
        for (int g = 0; g < 8; ++g) ASSERT_LE(h.rstart[ResidualStart(mt, kt, g, kpairs)], h.rstart[ResidualStart(mt, kt + 1, g, kpairs)]);
        for (int q = 0; q < 2; ++q) {
          Lanes4 a;
          std::array<uint32_t, 32> e;
          StepOperands(h, mt, kt, q, &a, &e);
          float tile[16][32];
          DecodeA(a, e, tile);
          for (int g = 0; g < 8; ++g)
            for (uint32_t i = h.rstart[ResidualStart(mt, kt, g, kpairs)]; i < h.rstart[ResidualStart(mt, kt + 1, g, kpairs)]; ++i) {
              ASSERT_EQ(h.residual_row[i] % 8, uint32_t(g)) << "entry filed under its row pair";
              ASSERT_EQ(int64_t(h.residual_col[i]) / kBk, kt) << "entry filed under its K tile";
              const uint32_t w = ResidualWord(0xABCDu, static_cast<int>(h.residual_row[i]), h.residual_col[i]);
              ASSERT_EQ(w & 0xFFFFu, 0xABCDu);
              ASSERT_EQ((w >> 16) & 1u, h.residual_row[i] / 8) << "row half as the kernel decodes it";
              ASSERT_EQ(w >> 17, h.residual_col[i]) << "column as the kernel decodes it";
              if ((h.residual_col[i] % kBk) / 32 == uint32_t(q)) tile[h.residual_row[i]][h.residual_col[i] % 32] += h.residual_val[i];
            }
          for (int r = 0; r < 16; ++r)
            for (int k = 0; k < 32; ++k) {
              const int64_t row = h.row_of[mt * 16 + r], col = kt * kBk + q * 32 + k;
              const float want = row >= 0 && col < c.cols ? dense[row * c.cols + col] : 0.0f;
              ASSERT_EQ(tile[r][k], want) << "A[" << row << "][" << col << "]";
            }
        }
      }
  }
}

TEST(U14Format, ResidualHoldsOnlyTheSecondAndLaterNonzerosOfAGroup) {
  Csr m;  // row 0: group 0 full, group 1 only position 3; row 1: positions 1 and 2 of group 0
  m.rows = 2, m.cols = 8;
  m.ci = {0, 1, 2, 3, 7, 1, 2};
  m.v = {1, 2, 3, 4, 5, 6, 7};
  m.ro = {0, 5, 7};
  const U14Host h = BuildU(m);
  EXPECT_EQ(h.residual_val, (std::vector<float>{3, 4}));  // group 0 of row 0: 2 is its second value
  EXPECT_EQ(h.residual_col, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(h.residual_row, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(h.seconds[ValInRecord(0, 0, 0)], 2.0f);
  EXPECT_EQ(h.seconds[ValInRecord(1, 0, 0)], 7.0f);
  EXPECT_EQ(h.meta[MetaLaneWord(4 * 0) + 0] & 0xFu, 0x4u) << "row 0 group 0: positions (0, 1)";
  EXPECT_EQ(h.meta[MetaLaneWord(4 * 1) + 0] & 0xFu, 0x9u) << "row 1 group 0: positions (1, 2)";
}

// U14StreamKernel<T, kNk> for every CTA of the plan, as nm24_stream_sp_test replays its kernel, plus the residual
// against the slab (at SlabElement) before the cluster sum.
std::vector<float> Replay(const U14Host& h, const std::vector<float>& b, int64_t n, const Plan& plan, bool nk, bool spread = SPREAD_RESIDUAL != 0,
                          bool residual_first = RESIDUAL_FIRST != 0) {
  const int64_t ktiles = h.kp / kBk;
  static_assert(kBk == 64 && kNt == 16, "the shared replay's K tile and n tile");
  auto warp_product = [&](int64_t mt, int kt0, int count, const std::vector<float>& sb, std::vector<float>* acc_out) {
    std::vector<float>& acc = *acc_out;  // [ni][lane][i]
    const auto residual = [&] {
      ReplayStreamResidual(h, &ResidualStart, mt, kt0, count, ktiles, kBk, spread,
                           [&](int64_t row, int col) { return sb[SlabElement(nk, static_cast<int>(row), col)]; }, &acc);
    };
    if (residual_first) residual();  // RESIDUAL_FIRST 1: walked while the first batches land
    for (int j = 0; j < count; ++j)
      for (int q = 0; q < 2; ++q) {
        Lanes4 a;
        std::array<uint32_t, 32> e;
        StepOperands(h, mt, kt0 + j, q, &a, &e);
        for (int ni = 0; ni < 2; ++ni) {
          std::array<int, 32> addr;
          for (int l = 0; l < 32; ++l) addr[l] = nk ? NkBFragOffset(j, q, ni, l) : BFragOffset(j, q, ni, l);
          EmuMmaSp(a, e, nk ? EmuLdm(sb, addr) : EmuLdmTrans(sb, addr), &acc[ni * 128]);
        }
      }
    if (!residual_first) residual();
  };
  // Every stored row (padding too), then each to its row of C as StoreTile does (row_of; padding rows must be 0).
  const std::vector<float> stored =
      nk ? ReplayClusterStreamNk(h.mp, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &NkSlabOffset, &OutIndex, warp_product)
         : ReplayClusterStream(h.mp, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &SlabChunk, warp_product);
  return StoredRowsToC(stored, h.row_of, h.rows, n);
}

void ExpectReplayMatches(int64_t rows, int64_t cols, double density, int64_t n, int max_splits, bool nk, bool balance = false,
                         bool first_high = kFirstHighLayout) {  // both walks
  const Csr m = RandomCsr(rows, cols, density, static_cast<uint32_t>(rows + 17 * cols + n));
  const U14Host h = BuildU(m, balance, first_high);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " density " << density << " n " << n << " splits " << plan.splits
                                    << (nk ? " NK" : " KN") << (balance ? " balanced" : "") << (first_high ? " the first-high layout" : ""));
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  for (bool spread : {false, true})
    for (bool first : {false, true}) ExpectPlainProduct(m, b, n, Replay(h, b, n, plan, nk, spread, first));
}

TEST(U14Format, ARecordCarriesAtMostkSecondsSecondValuesTheRestGoToTheResidual) {
  Csr m;  // 16 rows, 8 columns, every element nonzero: 32 groups of four, each with three more after its first
  m.rows = 16, m.cols = 8;
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 8; ++c) m.ci.push_back(c), m.v.push_back(float(r * 8 + c + 1));
    m.ro.push_back(static_cast<int32_t>(m.ci.size()));
  }
  const U14Host h = BuildU(m);
  int seconds = 0;
  for (float s : h.seconds) seconds += s != 0.0f;
  EXPECT_EQ(seconds, kSeconds);
  EXPECT_EQ(h.residual_val.size(), size_t(16 * 8 - 32 - kSeconds));
  EXPECT_NE(h.seconds[ValInRecord(0, 0, 0)], 0.0f) << "rows in order: row 0's groups come first";
  EXPECT_EQ(h.seconds[ValInRecord(15, 0, 1)], 0.0f) << "row 15's come after the record ran out";
}

// SpreadSeconds on the host: each word's value lands in its slot of a zeroed record; lane l then holds slots
// 8l .. 8l+7, the slots of its first values.
TEST(U14Format, SecondWordsSpreadBackToTheirSlots) {
  for (double density : {0.1, 0.4, 0.9}) {
    const U14Host h = BuildU(RandomCsr(33, 200, density, 9));
    const std::vector<uint32_t> words = SecondWords<__half>(h);
    ASSERT_EQ(words.size(), h.seconds.size() / 256 * kSeconds);
    for (size_t rec = 0; rec < words.size() / kSeconds; ++rec) {
      std::array<uint16_t, 256> slots{};
      for (int i = 0; i < kSeconds; ++i) {
        const uint32_t w = words[rec * kSeconds + i];
        if (w & 0xFFFFu) slots[w >> 16] = static_cast<uint16_t>(w & 0xFFFFu);
      }
      for (int slot = 0; slot < 256; ++slot) {
        const float want = h.seconds[rec * 256 + slot];
        ASSERT_EQ(slots[slot] != 0, want != 0.0f) << "record " << rec << " slot " << slot;
        if (want != 0.0f) ASSERT_EQ(__half2float(__ushort_as_half(slots[slot])), want) << "record " << rec << " slot " << slot;
      }
    }
  }
  U14Host tiny;  // a second value that rounds to +0 in fp16 still marks its slot (as -0)
  tiny.seconds.assign(256, 0.0f);
  tiny.seconds[37] = 1e-12f;
  EXPECT_EQ(SecondWords<__half>(tiny)[0], 0x8000u | (37u << 16));
}

// BALANCE_ROWS's order: a permutation of the rows into the first ceil(rows / 16) tiles, the heaviest rows one a tile
// at tile row 0, and each tile's rows heaviest first in the order 0 .. 7, 15 .. 8 (list g pairs heavy with light).
TEST(U14Format, BalancedRowOrderDealsHeavyRowsOneATileAndPairsThemWithLightOnes) {
  for (int64_t rows : {1, 7, 16, 33, 130, 300}) {
    SCOPED_TRACE(::testing::Message() << rows << " rows");
    std::vector<int32_t> ro(1, 0);
    for (int64_t r = 0; r < rows; ++r) ro.push_back(ro.back() + static_cast<int32_t>((r * 37) % 23));
    const int64_t mp = (rows + kMPad - 1) / kMPad * kMPad, tiles = (rows + 15) / 16;
    const std::vector<int32_t> same = RowOrder(rows, mp, ro.data(), false);
    for (int64_t s = 0; s < mp; ++s) ASSERT_EQ(same[s], s < rows ? s : -1);
    const std::vector<int32_t> row_of = RowOrder(rows, mp, ro.data(), true);
    ASSERT_EQ(static_cast<int64_t>(row_of.size()), mp);
    std::vector<int> seen(rows, 0);
    for (int64_t s = 0; s < mp; ++s) {
      if (row_of[s] < 0) continue;
      ASSERT_LT(s, tiles * 16) << "stored in the first tiles";
      ASSERT_LT(row_of[s], rows);
      ++seen[row_of[s]];
    }
    for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(seen[r], 1) << "row " << r;
    auto count = [&](int64_t s) { return row_of[s] < 0 ? -1 : ro[row_of[s] + 1] - ro[row_of[s]]; };
    int64_t least_at_0 = 1 << 30, most_elsewhere = -1;
    for (int64_t t = 0; t < tiles; ++t) {
      const int order[16] = {0, 1, 2, 3, 4, 5, 6, 7, 15, 14, 13, 12, 11, 10, 9, 8};
      for (int k = 1; k < 16; ++k) ASSERT_GE(count(t * 16 + order[k - 1]), count(t * 16 + order[k])) << "tile " << t << " k " << k;
      least_at_0 = std::min<int64_t>(least_at_0, count(t * 16));
      for (int r = 1; r < 16; ++r) most_elsewhere = std::max<int64_t>(most_elsewhere, count(t * 16 + r));
    }
    EXPECT_GE(least_at_0, most_elsewhere) << "the tiles' row 0 holds the heaviest rows, one a tile";
  }
}

// Eight dense rows in one tile's row pairs (0-3 with 8-11): unbalanced, four of that tile's lists hold them all;
// dealt by count, each lands in its own tile, at least halving the longest list.
TEST(U14Format, BalancedRowsShortenASkewedMatrixsLongestResidualList) {
  const Csr m = WithDenseRows(RandomCsr(256, 512, 0.1, 3), {0, 1, 2, 3, 8, 9, 10, 11});
  const uint32_t in_order = LongestResidualList(BuildU(m, false), &ResidualStart), balanced = LongestResidualList(BuildU(m, true), &ResidualStart);
  EXPECT_GT(in_order, 200u);
  EXPECT_LE(2 * balanced, in_order) << in_order << " against " << balanced;
}

TEST(U14Format, RefusesKBeyondTheResidualColumnBits) {
  Csr m;
  m.rows = 1, m.cols = kMaxResidualCols + 1, m.ci = {0}, m.v = {1}, m.ro = {0, 1};
  U14Host h;
  std::string why;
  EXPECT_FALSE(BuildU14(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("15-bit residual columns"), std::string::npos) << why;
}

TEST(U14Plan, PushReduceGivesEveryTileAndRankItsOwnSlotAtItsOwner) {
  ExpectPushReduceCoversEveryTile(WARPS, kMaxSplits, &RedBytes, PushOwner, PushSlot);
}

TEST(U14Layouts, LdmatrixAddressIsTileZerosPlusTheTiles) {  // ComputeBatch's address against the swizzled offsets
  ExpectTileAddressesAddUp(
      kMaxSlabTiles, 2, 2, kSlabTileBytes,
      [](bool nk, int q, int ni, int l) { return nk ? TileFragBytes<true>(q, ni, l) : TileFragBytes<false>(q, ni, l); },
      [](bool nk, int j, int q, int ni, int l) { return nk ? NkBFragOffset(j, q, ni, l) : BFragOffset(j, q, ni, l); });
}

TEST(U14Plan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  ExpectClusterStreamPlan([](int64_t mp, int64_t kp, int64_t n, int sms, int max) { return MakePlan(mp, kp, n, sms, max); },
                          {kMaxSplits, kMaxSlabTiles, 16 * WARPS, &RedBytes, size_t(kScratchBytes), size_t(kBk) * kSlabRowBytes,
                           SLAB_KB * 1024});
}

TEST(U14Plan, ResidualStagingHoldsTheLongestSliceWhereSharedMemoryAllows) {
  const Csr m = RandomCsr(260, 1000, 0.4, 5);
  const U14Host h = BuildU(m);
  const int64_t ktiles = h.kp / kBk;
  const Plan plan = MakePlan(h.mp, h.kp, 16, 132, 4);
  ASSERT_GT(plan.splits, 1);
  uint32_t longest = 0;  // straight from the lists: entries of list (mt, g) whose column falls in a split's K range
  for (int64_t mt = 0; mt < h.mp / 16; ++mt)
    for (int g = 0; g < 8; ++g)
      for (int split = 0; split < plan.splits; ++split) {
        uint32_t in = 0;
        for (uint32_t i = h.rstart[ResidualStart(mt, 0, g, ktiles)]; i < h.rstart[ResidualStart(mt, ktiles, g, ktiles)]; ++i)
          in += int64_t(h.residual_col[i]) / kBk / plan.kt_per_split == split;
        longest = std::max(longest, in);
      }
  ASSERT_GT(longest, 4u);
  const Plan roomy = WithResidual(plan, h.rstart, h.mp, h.kp, 1 << 20);
  EXPECT_EQ(roomy.res_cap, static_cast<int>(longest));
  EXPECT_EQ(roomy.smem, plan.smem + size_t(longest) * WARPS * 8 * 4);
  const Plan tight = WithResidual(plan, h.rstart, h.mp, h.kp, plan.smem + 3 * WARPS * 8 * 4 + 5);
  EXPECT_EQ(tight.res_cap, 3) << "only what fits is staged; the kernel reads the rest from global";
  EXPECT_EQ(roomy.res_longest, static_cast<int>(longest));
  EXPECT_EQ(tight.res_longest, static_cast<int>(longest)) << "the longest list is recorded whatever was staged";
  EXPECT_EQ(WithResidual(plan, h.rstart, h.mp, h.kp, plan.smem).res_cap, 0);
  EXPECT_GE(SmemBudget(232448, 233472), kRedBytes + size_t(kMaxSlabTiles) * kBk * kSlabRowBytes);
  EXPECT_LE(SmemBudget(232448, 233472), 232448u);
}

// STAGE_A's region: a tile's records where StageA's straight copy of the range puts them (StagedVal, StagedMeta,
// StagedSecond against ValRecord, MetaRecord, SecondRecord), each warp's region after the residual staging and the
// last one ending at the plan's shared memory; the plan stages only when the share still holds it after the residual.
TEST(U14Plan, StagedOperandsSitWhereTheCopyPutsThemAndThePlanStagesOnlyWhatFits) {
  const int64_t kpairs = 64, mt = 5;
  for (int per : {1, 3, 10})
    for (int kt0 : {0, 7})
      for (int j = 0; j < per; ++j)
        for (int lane = 0; lane < 32; ++lane) {
          ASSERT_EQ(StagedVal(j, lane), (ValRecord(mt, kt0 + j, kpairs) - ValRecord(mt, kt0, kpairs) + lane * 8) * 2);
          ASSERT_EQ(StagedMeta(per, j, lane), per * kTileValBytes + (MetaRecord(mt, kt0 + j, kpairs) - MetaRecord(mt, kt0, kpairs) + MetaLaneWord(lane)) * 4);
          ASSERT_EQ(StagedMeta(per, j, lane) % 8, 0) << "an 8-byte read";
          if (lane >= kSeconds) continue;  // lanes past kSeconds read no second value
          ASSERT_EQ(StagedSecond(per, j, lane),
                    per * (kTileValBytes + kTileMetaBytes) + (SecondRecord(mt, kt0 + j, kpairs) - SecondRecord(mt, kt0, kpairs) + lane) * 4);
          ASSERT_LE(StagedSecond(per, j, lane) + 4, per * kStagedTileBytes);
        }
  const U14Host h = BuildU(RandomCsr(4096, 4096, 0.1, 3));
  const Plan plan = WithResidual(MakePlan(h.mp, h.kp, 16, 132), h.rstart, h.mp, h.kp, SmemBudget(232448, 233472));
  ASSERT_GT(plan.splits, 1);
  EXPECT_FALSE(WithStaging(plan, 1 << 30, false).staged) << "STAGE_A 0";
  const size_t staged = size_t(WARPS) * plan.kt_per_split * kStagedTileBytes;
  const Plan roomy = WithStaging(plan, plan.smem + staged, true);
  ASSERT_TRUE(roomy.staged);
  EXPECT_EQ(roomy.smem, plan.smem + staged);
  EXPECT_EQ(StagedRegion(plan.splits, plan.kt_per_split * kBk * kSlabRowBytes, plan.res_cap, plan.kt_per_split, WARPS), roomy.smem)
      << "the regions end where the plan's shared memory does";
  EXPECT_EQ(StagedRegion(plan.splits, plan.kt_per_split * kBk * kSlabRowBytes, plan.res_cap, plan.kt_per_split, 0) % 16, 0u) << "16-byte copies";
  EXPECT_FALSE(WithStaging(plan, plan.smem + staged - 1, true).staged);
  // u90 4096 x 4096 at n = 16 (8 splits of 8 K tiles): with a uniform matrix's ~20 residual entries a list staged,
  // the ranges fit at two CTAs an SM; RandomCsr's dense row 0 (a list of 266 a split) takes the room instead.
  Plan uniform = MakePlan(h.mp, h.kp, 16, 132);
  uniform.res_cap = 20, uniform.smem += size_t(20) * WARPS * 8 * 4;
  EXPECT_TRUE(WithStaging(uniform, SmemBudget(232448, 233472), true).staged);
  EXPECT_FALSE(WithStaging(plan, SmemBudget(232448, 233472), true).staged) << "the residual's staging comes first";
}

// Rows 3 and 11 dense (one row pair, so one list of each warp-tile holds nearly all of the residual) among 10 percent
// rows, every split count: the lists of a warp are walked quad-spread or in order (SPREAD_RESIDUAL) and both sum to
// the product.
TEST(U14Replay, ASkewedMatrixsDenseRowPairIsSummedWhicheverWayTheListsAreWalked) {
  const Csr m = WithDenseRows(RandomCsr(130, 600, 0.1, 77), {3, 11});
  for (bool balance : {false, true})
  for (bool spread : {false, true})
    for (bool nk : {false, true})
      for (int max_splits : {1, 3, 8}) {
        const U14Host h = BuildU(m, balance);
        const Plan plan = MakePlan(h.mp, h.kp, 16, 132, max_splits);
        SCOPED_TRACE(::testing::Message() << "splits " << plan.splits << (nk ? " NK" : " KN") << (spread ? " spread" : " in order")
                                          << (balance ? " balanced" : ""));
        const std::vector<float> b = RandomB(600, 16, 5);
        for (bool first : {false, true}) ExpectPlainProduct(m, b, 16, Replay(h, b, 16, plan, nk, spread, first));
      }
}

TEST(U14Replay, AwkwardShapesSplitsDensitiesAndNInBothLayouts) {
  for (bool nk : {false, true})
    for (int64_t n : {1, 7, 16, 20}) {
      ExpectReplayMatches(7, 96, 0.1, n, 8, nk);
      ExpectReplayMatches(65, 36, 0.5, n, 8, nk);
      ExpectReplayMatches(33, 200, 0.1, n, 8, nk);   // 4 K tiles over 4 ranks
      ExpectReplayMatches(33, 200, 0.3, n, 3, nk);   // 2 ranks of 2 tiles
      ExpectReplayMatches(130, 600, 0.1, n, 8, nk);  // 10 K tiles: 5 ranks of 2
      ExpectReplayMatches(130, 600, 0.7, n, 1, nk);  // mostly residual
      ExpectReplayMatches(33, 200, 0.3, n, 3, nk, true);  // rows dealt by count: 3 tiles, the last part full
      ExpectReplayMatches(130, 600, 0.7, n, 8, nk, true);
      ExpectReplayMatches(130, 600, 0.3, n, 8, nk, false, !kFirstHighLayout);  // the layout PRMT_EXPAND does not pick
    }
}

TEST(U14Layouts, ExportsKnAndNkAndEachSlabElementHoldsOneValueOfB) {
  EXPECT_EQ(sparseditto_layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
  for (bool nk : {false, true}) {  // SlabElement maps a 3-tile slab's 64 x 3 x 16 values of B one to one onto it
    std::vector<int> hits(3 * 64 * 16, 0);
    for (int k = 0; k < 3 * 64; ++k)
      for (int col = 0; col < 16; ++col) {
        const int at = SlabElement(nk, k, col);
        ASSERT_TRUE(at >= 0 && at < int(hits.size())) << k << ", " << col;
        ++hits[at];
      }
    for (int h : hits) EXPECT_EQ(h, 1);
  }
}

}  // namespace
