// CPU tests of the 2:4-plus-residual seed (no GPU, no CUDA runtime calls): its format (nm24_stream_sp's 2:4
// values and metadata from the first two nonzeros of each group, the rest in the residual) re-expanded through
// the PTX definition of mma.sp, its plan, and a replay of every CTA's data flow in both layouts (pointer walk,
// ldmatrix(.trans) and mma.sp emulated, the residual against the slab, the cluster's rank-order sum, the store
// coordinates) against a plain product, at the densities it is for and at awkward ones.
#include "kernels/seeds/u24_stream_sp.cu"
#include "kernels/seeds/testing/cluster_stream_checks.h"

#include <cstring>

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

U24Host BuildU(const Csr& m, bool balance = false, int thirds = 0) {
  U24Host h;
  std::string why;
  EXPECT_TRUE(BuildU24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why, balance, thirds)) << why;
  return h;
}

// What the kernel hands mma.sp for 32-column tile kc of row tile mt: a lane's 16 bytes and its metadata word
// (LoadBatch: vals + ValTile(mt, 2 kt0) + 8 lane + 512 j + 256 q, meta + MetaRecord(mt, kt0) + 32 j, .x/.y).
void TileOperands(const U24Host& h, int64_t mt, int64_t kc, Lanes4* a, std::array<uint32_t, 32>* e) {
  const int64_t kchunks = h.kp / 32;
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r)
      for (int x = 0; x < 2; ++x) (*a)[l][r][x] = h.vals[ValTile(mt, kc, kchunks) + l * 8 + r * 2 + x];
    (*e)[l] = h.meta[MetaRecord(mt, kc / 2, kchunks / 2) + MetaLaneWord(l) + kc % 2];
  }
}

// The second mma.sp's operand of 32-column tile kc (THIRDS): what each lane reads from the warp's scratch after
// SpreadThirds (ThirdReg of its slots' values; here ids 1-4 to see where ThirdReg puts them) and the metadata word
// MmaThirds reads (the record's nibbles XOR 0x4 at their ThirdMetaByte, eight bytes a word through ThirdMetaWord).
void ThirdOperands(const U24Host& h, int64_t mt, int64_t kc, Lanes4* a, std::array<uint32_t, 32>* e) {
  const int64_t rec = mt * (h.kp / kBk) + kc / 2;
  const int q = static_cast<int>(kc % 2);
  std::array<uint8_t, 256> bytes{};
  for (int slot = 0; slot < 256; ++slot) {
    const uint32_t nib = h.third_nibble[rec * 256 + slot];
    if (nib == 0) continue;
    ASSERT_EQ(bytes[ThirdMetaByte(slot)], 0) << "slots " << slot << " and another share a metadata byte";
    bytes[ThirdMetaByte(slot)] = static_cast<uint8_t>(nib ^ 0x4u);
  }
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r) {
      const int64_t at = rec * 256 + l * 8 + q * 4 + r;
      const uint32_t nib = h.third_nibble[at], id = static_cast<uint32_t>(r + 1), reg = nib ? ThirdReg(id, nib) : 0u;
      ASSERT_TRUE(reg == 0 || reg == id || reg == id << 16) << "lane " << l << " register " << r;
      (*a)[l][r] = reg == id ? Reg{h.third_val[at], 0.0f} : reg ? Reg{0.0f, h.third_val[at]} : Reg{0.0f, 0.0f};
    }
    uint32_t word[2];
    std::memcpy(word, &bytes[(MetaLaneWord(l) + q) * 8], 8);
    (*e)[l] = ThirdMetaWord(word[0], word[1]);
  }
}

// Each slot of a record has its own metadata byte, and the word ThirdMetaWord reads for lane (g, sel), step q holds
// at bits 4i the nibble of the group at slot (lane 4g + i % 4, register (i / 4) + 2 sel): mma.sp's metadata layout
// (nm24_emulation.h's DecodeA), checked here one slot at a time for every slot.
TEST(U24Format, ThirdMetaBytesMakeTheSelectorLanesWords) {
  std::array<int, 256> owner;
  owner.fill(-1);
  for (int slot = 0; slot < 256; ++slot) {
    const int at = ThirdMetaByte(slot);
    ASSERT_TRUE(at >= 0 && at < 256) << slot;
    EXPECT_EQ(owner[at], -1) << "slots " << owner[at] << " and " << slot << " share byte " << at;
    owner[at] = slot;
  }
  for (int q = 0; q < 2; ++q)
    for (int lane = 0; lane < 32; ++lane) {
      if ((lane & 3) >= 2) continue;  // selector 0: lanes t = 0, 1 hold the metadata
      const int g = lane >> 2, sel = lane & 1;
      for (int i = 0; i < 8; ++i) {
        const int slot = (4 * g + i % 4) * 8 + q * 4 + (i / 4) + 2 * sel;
        std::array<uint8_t, 256> bytes{};
        bytes[ThirdMetaByte(slot)] = 0xC ^ 0x4;  // nibble (0, 3) at this group, (0, 1) everywhere else
        uint32_t word[2];
        std::memcpy(word, &bytes[(MetaLaneWord(lane) + q) * 8], 8);
        EXPECT_EQ(ThirdMetaWord(word[0], word[1]), (0x44444444u & ~(0xFu << (4 * i))) | (0xCu << (4 * i)))
            << "lane " << lane << " step " << q << " nibble " << i;
      }
    }
}

TEST(U24Format, ReexpandsToTheCsrMatrixWithTheResidual) {
  struct Case { int64_t rows, cols; double density; };
  for (const Case& c : {Case{7, 96, 0.1}, Case{65, 36, 0.3}, Case{33, 200, 0.5}, Case{130, 68, 0.7}, Case{16, 64, 1.0}, Case{3, 6, 0.5}})
  for (bool balance : {false, true})
  for (int thirds : {0, 24, 2}) {
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " density " << c.density << (balance ? " balanced" : "") << " thirds " << thirds);
    const Csr m = WithDenseRows(RandomCsr(c.rows, c.cols, c.density, static_cast<uint32_t>(c.rows * 7 + c.cols)), {c.rows / 2});
    const U24Host h = BuildU(m, balance, thirds);
    ASSERT_EQ(h.mp % kMPad, 0);
    ASSERT_EQ(h.kp % kBk, 0);
    const int64_t kpairs = h.kp / kBk;
    ASSERT_EQ(h.rstart.size(), size_t(h.mp / 16 * (kpairs + 1) * 8));
    const std::vector<float> dense = Dense(m);
    for (int64_t mt = 0; mt < h.mp / 16; ++mt)
      for (int64_t kc = 0; kc < h.kp / 32; ++kc) {
        const int64_t kt = kc / 2;
        Lanes4 a;
        std::array<uint32_t, 32> e;
        TileOperands(h, mt, kc, &a, &e);
        float tile[16][32];
        DecodeA(a, e, tile);
        if (thirds > 0) {
          float third[16][32];
          ThirdOperands(h, mt, kc, &a, &e);
          DecodeA(a, e, third);
          for (int r = 0; r < 16; ++r)
            for (int k = 0; k < 32; ++k) {
              ASSERT_TRUE(third[r][k] == 0.0f || tile[r][k] == 0.0f) << "a third value where the 2:4 layer keeps one";
              tile[r][k] += third[r][k];
            }
        }
        for (int g = 0; g < 8; ++g) {
          ASSERT_LE(h.rstart[ResidualStart(mt, kt, g, kpairs)], h.rstart[ResidualStart(mt, kt + 1, g, kpairs)]);
          for (uint32_t i = h.rstart[ResidualStart(mt, kt, g, kpairs)]; i < h.rstart[ResidualStart(mt, kt + 1, g, kpairs)]; ++i) {
            ASSERT_EQ(h.residual_row[i] % 8, uint32_t(g)) << "entry filed under its row pair";
            ASSERT_EQ(int64_t(h.residual_col[i]) / kBk, kt) << "entry filed under its K tile";
            const uint32_t w = ResidualWord(0xABCDu, static_cast<int>(h.residual_row[i]), h.residual_col[i]);
            ASSERT_EQ((w >> 16) & 1u, h.residual_row[i] / 8) << "row half as the kernel decodes it";
            ASSERT_EQ(w >> 17, h.residual_col[i]) << "column as the kernel decodes it";
            if (int64_t(h.residual_col[i]) / 32 == kc) tile[h.residual_row[i]][h.residual_col[i] % 32] += h.residual_val[i];
          }
        }
        for (int r = 0; r < 16; ++r)
          for (int k = 0; k < 32; ++k) {
            const int64_t row = h.row_of[mt * 16 + r], col = kc * 32 + k;
            const float want = row >= 0 && col < c.cols ? dense[row * c.cols + col] : 0.0f;
            ASSERT_EQ(tile[r][k], want) << "A[" << row << "][" << col << "]";
          }
      }
  }
}

TEST(U24Format, ResidualHoldsOnlyTheThirdAndFourthNonzerosOfAGroup) {
  Csr m;  // row 0: group 0 full, group 1 only position 3; row 1: positions 1, 2, 3 of group 0 and an explicit zero
  m.rows = 2, m.cols = 8;
  m.ci = {0, 1, 2, 3, 7, 0, 1, 2, 3};
  m.v = {1, 2, 3, 4, 5, 0, 6, 7, 8};
  m.ro = {0, 5, 9};
  const U24Host h = BuildU(m);
  EXPECT_EQ(h.residual_val, (std::vector<float>{3, 4, 8}));
  EXPECT_EQ(h.residual_col, (std::vector<uint32_t>{2, 3, 3}));
  EXPECT_EQ(h.residual_row, (std::vector<uint32_t>{0, 0, 1}));
  const int64_t kchunks = h.kp / 32;
  EXPECT_EQ(h.vals[ValTile(0, 0, kchunks) + ValInTile(0, 0)], 1.0f);
  EXPECT_EQ(h.vals[ValTile(0, 0, kchunks) + ValInTile(0, 1)], 2.0f);
  EXPECT_EQ(h.vals[ValTile(0, 0, kchunks) + ValInTile(1, 0)], 6.0f) << "an explicit zero is not kept";
  EXPECT_EQ(h.vals[ValTile(0, 0, kchunks) + ValInTile(1, 1)], 7.0f);
  EXPECT_EQ(h.meta[MetaRecord(0, 0, h.kp / kBk) + MetaLaneWord(0)] & 0xFu, 0x4u) << "row 0 group 0: positions (0, 1)";
  EXPECT_EQ(h.meta[MetaRecord(0, 0, h.kp / kBk) + MetaLaneWord(4)] & 0xFu, 0x9u) << "row 1 group 0: positions (1, 2)";
  EXPECT_EQ((h.meta[MetaRecord(0, 0, h.kp / kBk) + MetaLaneWord(0)] >> 4) & 0xFu, 0xEu) << "row 0 group 1: (2, 3), value at 3";
}

// THIRDS: a record's first `thirds` third values (stored row, then column order) go to the third-value layer,
// the later ones and every fourth value to the residual; ThirdWords lists them in slot order as the kernel reads them.
TEST(U24Format, ThirdsTakeARecordsFirstThirdValuesTheRestAndFourthsGoToTheResidual) {
  Csr m;  // 16 rows, 8 columns, every element nonzero: 32 groups of four, each with a third and a fourth value
  m.rows = 16, m.cols = 8;
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 8; ++c) m.ci.push_back(c), m.v.push_back(float(r * 8 + c + 1));
    m.ro.push_back(static_cast<int32_t>(m.ci.size()));
  }
  const U24Host h = BuildU(m, false, 24);
  int held = 0;
  for (uint8_t n : h.third_nibble) held += n != 0;
  EXPECT_EQ(held, 24);
  EXPECT_EQ(h.residual_val.size(), size_t(32 - 24 + 32)) << "8 third values past the record's 24, and all 32 fourths";
  EXPECT_EQ(h.third_val[ThirdSlot(0, 0, 0)], 3.0f) << "row 0 group 0: its third value, column 2";
  EXPECT_EQ(h.third_nibble[ThirdSlot(0, 0, 0)], ThirdNibble(2));
  EXPECT_EQ(h.third_nibble[ThirdSlot(12, 0, 0)], 0) << "rows 12-15 come after the record ran out";
  const std::vector<uint32_t> words = ThirdWords<__half>(h);
  ASSERT_EQ(words.size(), size_t(h.third_val.size() / 256 * 24));
  for (size_t i = 24; i < words.size(); ++i) EXPECT_EQ(words[i], 0u) << "row tiles 1-7 are padding: no entries";
  int last = -1;
  for (int i = 0; i < 24; ++i) {
    const uint32_t w = words[i];
    const int slot = (w >> 16) & 0xFF;
    ASSERT_NE(w >> 24, 0u) << "entry " << i;
    EXPECT_GT(slot, last) << "slot order";
    last = slot;
    EXPECT_EQ(w >> 24, h.third_nibble[slot]);
    EXPECT_EQ(__half2float(__ushort_as_half(static_cast<uint16_t>(w & 0xFFFFu))), h.third_val[slot]);
  }
  EXPECT_EQ(ThirdReg(0x1234u, ThirdNibble(3)), 0x12340000u) << "a third value at position 3 sits in the high half";
  EXPECT_EQ(ThirdReg(0x1234u, ThirdNibble(1)), 0x1234u);
}

TEST(U24Format, RefusesMalformedCsrAndKBeyondTheResidualColumnBits) {
  Csr wide;
  wide.rows = 1, wide.cols = kMaxResidualCols + 1, wide.ci = {0}, wide.v = {1}, wide.ro = {0, 1};
  Csr unordered;
  unordered.rows = 1, unordered.cols = 8, unordered.ci = {3, 1}, unordered.v = {1, 2}, unordered.ro = {0, 2};
  Csr decreasing;
  decreasing.rows = 2, decreasing.cols = 8, decreasing.ci = {0}, decreasing.v = {1}, decreasing.ro = {0, 1, 0};
  const struct { const char* name; Csr m; const char* why; } cases[] = {
      {"K too wide", wide, "15-bit residual columns"},
      {"columns not increasing", unordered, "not increasing"},
      {"row offsets decrease", decreasing, "row offsets decrease"},
  };
  for (const auto& c : cases) {
    U24Host h;
    std::string why;
    EXPECT_FALSE(BuildU24(c.m.rows, c.m.cols, c.m.ro.data(), c.m.ci.data(), c.m.v.data(), &h, &why)) << c.name;
    EXPECT_NE(why.find(c.why), std::string::npos) << c.name << ": " << why;
  }
}

// Eight dense rows in one tile's row pairs (0-3 with 8-11): dealt by count (u14_stream_sp's RowOrder, tested
// there), each lands in its own tile: the longest list holds one dense row's residual and a light row's, not two
// dense rows'.
TEST(U24Format, BalancedRowsShortenASkewedMatrixsLongestResidualList) {
  const Csr m = WithDenseRows(RandomCsr(256, 512, 0.3, 3), {0, 1, 2, 3, 8, 9, 10, 11});
  const uint32_t in_order = LongestResidualList(BuildU(m, false), &ResidualStart), balanced = LongestResidualList(BuildU(m, true), &ResidualStart);
  EXPECT_GT(in_order, 200u);
  EXPECT_LE(5 * balanced, 3 * in_order) << in_order << " against " << balanced;
}

TEST(U24Plan, PushReduceGivesEveryTileAndRankItsOwnSlotAtItsOwner) {
  ExpectPushReduceCoversEveryTile(WARPS, kMaxSplits, &RedBytes, PushOwner, PushSlot);
}

TEST(U24Layouts, LdmatrixAddressIsTileZerosPlusTheTiles) {  // ComputeBatch's address against the swizzled offsets
  ExpectTileAddressesAddUp(
      kMaxSlabTiles, 2, 2, kSlabTileBytes,
      [](bool nk, int q, int ni, int l) { return nk ? TileFragBytes<true>(q, ni, l) : TileFragBytes<false>(q, ni, l); },
      [](bool nk, int j, int q, int ni, int l) { return nk ? NkBFragOffset(j, q, ni, l) : BFragOffset(j, q, ni, l); });
}

TEST(U24Plan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  static_assert(kBk == 64 && kNt == 16, "the shared checks' K tile and n tile");
  ExpectClusterStreamPlan([](int64_t mp, int64_t kp, int64_t n, int sms, int max) { return MakePlan(mp, kp, n, sms, max); },
                          {kMaxSplits, kMaxSlabTiles, 16 * WARPS, &RedBytes, size_t(kThirdsScratchBytes), size_t(kBk) * kSlabRowBytes, SLAB_KB * 1024});
}

TEST(U24Plan, ResidualStagingHoldsTheLongestSliceWhereSharedMemoryAllows) {
  const U24Host h = BuildU(RandomCsr(260, 1000, 0.7, 5));
  const Plan plan = MakePlan(h.mp, h.kp, 16, 132, 4);
  ASSERT_GT(plan.splits, 1);
  const Plan roomy = WithResidual(plan, h.rstart, h.mp, h.kp, 1 << 20);
  ASSERT_GT(roomy.res_cap, 0);
  EXPECT_EQ(roomy.res_cap, roomy.res_longest);
  EXPECT_EQ(roomy.smem, plan.smem + size_t(roomy.res_cap) * WARPS * 8 * 4);
  const Plan tight = WithResidual(plan, h.rstart, h.mp, h.kp, plan.smem + 3 * WARPS * 8 * 4 + 5);
  EXPECT_EQ(tight.res_cap, 3);
  EXPECT_EQ(tight.res_longest, roomy.res_longest);
  EXPECT_GE(SmemBudget(232448, 233472), kPrefixBytes + size_t(kMaxSlabTiles) * kBk * kSlabRowBytes);
  EXPECT_LE(SmemBudget(232448, 233472), 232448u);
}

// Plans FittedPlan weighed for unstructured 70% at n = 16 on an H100 (from dev/u24_plan's table, some left out: splits, clusters, staged
// residual entries against the longest list, clusters held at once) and the split count PickPlan must take.
TEST(U24Plan, PicksTheWidestPlanThatRunsInOneWaveWithItsResidualStaged) {
  struct Weighed { int splits; int64_t clusters; int res_cap, res_longest, active; };
  const struct { const char* name; std::vector<Weighed> widest_first; int want_splits; } cases[] = {
      {"4096x4096: 7 splits is one wave", {{8, 32, 45, 45, 30}, {7, 32, 54, 54, 32}, {6, 32, 54, 54, 39}}, 7},
      {"4096x11008: 7 splits is one wave", {{8, 32, 101, 101, 30}, {7, 32, 116, 116, 32}, {5, 32, 112, 143, 47}}, 7},
      {"11008x4096: only 2 splits is one wave", {{4, 86, 78, 78, 62}, {3, 86, 97, 97, 79}, {2, 86, 136, 136, 132}}, 2},
      {"8192x8192: one wave truncates the residual, keep the widest", {{5, 64, 114, 114, 47}, {4, 64, 131, 131, 62}, {3, 64, 48, 171, 79}}, 5},
      {"none is one wave", {{8, 200, 10, 10, 30}, {4, 200, 12, 12, 60}}, 8},
      {"every query failed", {{8, 32, 10, 10, 0}, {4, 32, 12, 12, 0}}, 8},
      {"the widest already fits", {{6, 10, 3, 3, 12}, {3, 10, 5, 5, 40}}, 6},
  };
  for (const auto& c : cases) {
    std::vector<Plan> plans;
    std::vector<int> active;
    for (const Weighed& w : c.widest_first) {
      Plan p;
      p.splits = w.splits, p.clusters = w.clusters, p.res_cap = w.res_cap, p.res_longest = w.res_longest;
      plans.push_back(p), active.push_back(w.active);
    }
    EXPECT_EQ(plans[PickPlan(plans, active)].splits, c.want_splits) << c.name;
  }
}

// U24StreamKernel<T, kNk> for every CTA of the plan: nm24_stream_sp's main loop over the 2:4 layer, then the
// residual against the slab (ApplyResidual at SlabElement), before the cluster sum.
std::vector<float> Replay(const U24Host& h, const std::vector<float>& b, int64_t n, const Plan& plan, bool nk, bool spread = SPREAD_RESIDUAL != 0,
                          bool residual_first = RESIDUAL_FIRST != 0) {
  const int64_t ktiles = h.kp / kBk;
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
        TileOperands(h, mt, 2 * (int64_t(kt0) + j) + q, &a, &e);
        Lanes4 a3;
        std::array<uint32_t, 32> e3;
        if (h.thirds > 0) ThirdOperands(h, mt, 2 * (int64_t(kt0) + j) + q, &a3, &e3);
        for (int ni = 0; ni < 2; ++ni) {
          std::array<int, 32> addr;
          for (int l = 0; l < 32; ++l) addr[l] = nk ? NkBFragOffset(j, q, ni, l) : BFragOffset(j, q, ni, l);
          const Lanes4 b_frag = nk ? EmuLdm(sb, addr) : EmuLdmTrans(sb, addr);
          EmuMmaSp(a, e, b_frag, &acc[ni * 128]);
          if (h.thirds > 0) EmuMmaSp(a3, e3, b_frag, &acc[ni * 128]);  // MmaThirds: the same B fragments
        }
      }
    if (!residual_first) residual();
  };
  // Every stored row (padding too), then each to its row of C as StoreTile does.
  const std::vector<float> stored =
      nk ? ReplayClusterStreamNk(h.mp, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &NkSlabOffset, &OutIndex, warp_product)
         : ReplayClusterStream(h.mp, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &SlabChunk, warp_product);
  return StoredRowsToC(stored, h.row_of, h.rows, n);
}

void ExpectReplayMatches(int64_t rows, int64_t cols, double density, int64_t n, int max_splits, bool nk, bool balance = false,
                         int thirds = 0) {  // both walks
  const Csr m = RandomCsr(rows, cols, density, static_cast<uint32_t>(rows + 17 * cols + n));
  const U24Host h = BuildU(m, balance, thirds);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " density " << density << " n " << n << " splits " << plan.splits
                                    << (nk ? " NK" : " KN") << (balance ? " balanced" : "") << " thirds " << thirds);
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  for (bool spread : {false, true})
    for (bool first : {false, true}) ExpectPlainProduct(m, b, n, Replay(h, b, n, plan, nk, spread, first));
}

// Rows 3 and 11 dense (one row pair, so one list of each warp-tile holds nearly all of the residual) among 10 percent
// rows, every split count: the lists of a warp are walked quad-spread or in order (SPREAD_RESIDUAL) and both sum to
// the product.
TEST(U24Replay, ASkewedMatrixsDenseRowPairIsSummedWhicheverWayTheListsAreWalked) {
  const Csr m = WithDenseRows(RandomCsr(130, 600, 0.1, 77), {3, 11});
  for (bool balance : {false, true})
  for (bool spread : {false, true})
    for (bool nk : {false, true})
      for (int max_splits : {1, 3, 8}) {
        const U24Host h = BuildU(m, balance);
        const Plan plan = MakePlan(h.mp, h.kp, 16, 132, max_splits);
        SCOPED_TRACE(::testing::Message() << "splits " << plan.splits << (nk ? " NK" : " KN") << (spread ? " spread" : " in order")
                                          << (balance ? " balanced" : ""));
        const std::vector<float> b = RandomB(600, 16, 5);
        for (bool first : {false, true}) ExpectPlainProduct(m, b, 16, Replay(h, b, 16, plan, nk, spread, first));
      }
}

TEST(U24Replay, AwkwardShapesSplitsDensitiesAndNInBothLayouts) {
  for (bool nk : {false, true})
    for (int64_t n : {1, 7, 16, 20}) {
      ExpectReplayMatches(7, 96, 0.3, n, 8, nk);
      ExpectReplayMatches(65, 36, 0.5, n, 8, nk);
      ExpectReplayMatches(33, 200, 0.3, n, 8, nk);   // 4 K tiles over 4 ranks
      ExpectReplayMatches(33, 200, 0.5, n, 3, nk);   // 2 ranks of 2 tiles
      ExpectReplayMatches(130, 600, 0.3, n, 8, nk);  // 10 K tiles: 5 ranks of 2
      ExpectReplayMatches(130, 600, 0.9, n, 1, nk);  // mostly residual
      ExpectReplayMatches(33, 200, 0.5, n, 3, nk, true);  // rows dealt by count: 3 tiles, the last part full
      ExpectReplayMatches(130, 600, 0.9, n, 8, nk, true);
      ExpectReplayMatches(130, 600, 0.3, n, 8, nk, false, 24);  // third values in their own mma.sp
      ExpectReplayMatches(33, 200, 0.9, n, 3, nk, true, 32);    // and past THIRDS in the residual
    }
}

TEST(U24Layouts, ExportsKnAndNk) {
  EXPECT_EQ(sparseditto_layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
}

}  // namespace
