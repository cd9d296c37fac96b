// CPU tests of the bitmap_tf32x3 seed's host side: the format (both value layouts, fp32 bits and presplit
// hi/lo) re-expanded two ways, block by block and lane by lane through the m16n8k8 .tf32 A-fragment layout of
// the PTX ISA, must give back the matrix; the TF32 rounding (cvt.rna) and the 3xTF32 split; the split-K and
// launch plan; and an emulation of the kernel's arithmetic (its decode, its operand split, its order of
// accumulation, split K included) judged by the evaluator's own fp32 output check: 3xTF32 passes with room,
// plain TF32 (1 product a term) fails. No CUDA runtime calls.
#include "kernels/seeds/bitmap_tf32x3.cu"

#include <cmath>
#include <random>

#include "evaluator/runner/output_check.h"
#include "gtest/gtest.h"
#include "kernels/seeds/testing/grouped_records_checks.h"
#include "kernels/seeds/testing/random_csr16.h"

namespace {

// A random pattern (random_csr16.h: empty and dense rows as asked) with normally distributed fp32 values.
struct Csr {
  int64_t rows, cols;
  std::vector<int32_t> offsets, cols_of;
  std::vector<float> values;
};
Csr RandomCsr(int64_t rows, int64_t cols, double density, uint32_t seed, std::vector<int64_t> dense_rows = {},
              std::vector<int64_t> empty_rows = {}) {
  const auto m = sparseditto::seed_testing::RandomCsr16(rows, cols, density, seed, dense_rows, empty_rows);
  Csr c{rows, cols, m.offsets, m.cols_of, std::vector<float>(m.cols_of.size())};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  for (float& v : c.values) {
    v = normal(rng);
    if (v == 0.0f) v = 1.0f;  // a stored zero would be invisible to a round trip
  }
  return c;
}

float ToFloat(uint32_t bits) { return BitsToFloat(bits); }

BitmapFormat Build(const Csr& m, bool presplit) {
  BitmapFormat f;
  std::string error;
  EXPECT_TRUE(BuildBitmapFormat(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.values.data(), presplit, &f,
                                &error))
      << error;
  return f;
}

int64_t PaddedRows(const BitmapFormat& f) { return int64_t{f.row_tiles} * 16; }
int64_t PaddedCols(const BitmapFormat& f) { return int64_t{f.groups} * kGroupK; }

std::vector<float> Dense(const Csr& m, int64_t rows, int64_t cols) {
  std::vector<float> d(rows * cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) d[r * cols + m.cols_of[e]] = m.values[e];
  return d;
}

// The first word of tile (rt, kt).
const uint32_t* Tile(const BitmapFormat& f, int rt, int kt) {
  const uint32_t* record = &f.data[size_t{f.goff[static_cast<size_t>(rt) * f.groups + kt / WARPS_K]} * 4];
  return record + TileStart(record, kt % WARPS_K) * 4;
}

// Block by block, from the format's definition: block s covers rows (s % 2) * 8.., columns (s / 2) * 8..; bit
// 8r + 2(c % 4) + c / 4; values in bit order after the tile's bitmaps. Word w of each value (0: the fp32 bits
// or hi; 1: lo).
std::vector<uint32_t> ExpandByBlock(const BitmapFormat& f, int word) {
  const int words = f.presplit ? 2 : 1;
  std::vector<uint32_t> d(PaddedRows(f) * PaddedCols(f), 0);
  for (int rt = 0; rt < f.row_tiles; ++rt)
    for (int kt = 0; kt < f.groups * WARPS_K; ++kt) {
      const uint32_t* tile = Tile(f, rt, kt);
      const uint32_t* v = tile + kBitmapChunks * 4;
      for (int s = 0; s < kBitmapsPerTile; ++s) {
        uint64_t bm;
        std::memcpy(&bm, tile + s * 2, 8);
        for (int bit = 0; bit < 64; ++bit) {
          if (!((bm >> bit) & 1)) continue;
          const int64_t r = rt * 16 + (s % 2) * 8 + bit / 8;
          const int64_t c = int64_t{kt} * TILE_K + (s / 2) * 8 + (bit % 8) / 2 + 4 * (bit % 2);
          d[r * PaddedCols(f) + c] = v[word];
          v += words;
        }
      }
    }
  return d;
}

// Lane by lane, as ComputeStage decodes (DecodeA), placed by the PTX ISA's m16n8k8 .tf32 A fragment: a0
// (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4), g = lane / 4, t = lane % 4. The hi and lo parts.
void ExpandByLane(const BitmapFormat& f, std::vector<float>* hi, std::vector<float>* lo) {
  hi->assign(PaddedRows(f) * PaddedCols(f), NAN);
  lo->assign(hi->size(), NAN);
  for (int rt = 0; rt < f.row_tiles; ++rt)
    for (int kt = 0; kt < f.groups * WARPS_K; ++kt) {
      const uint32_t* tile = Tile(f, rt, kt);
      for (int lane = 0; lane < 32; ++lane) {
        int base = 0;
        for (int kb = 0; kb < TILE_K / 8; ++kb) {
          uint32_t h[4], l[4];
          const auto* bitmaps = reinterpret_cast<const uint64_t*>(tile);
          if (f.presplit) DecodeA<true>(bitmaps, tile + kBitmapChunks * 4, kb, lane, &base, h, l);
          else DecodeA<false>(bitmaps, tile + kBitmapChunks * 4, kb, lane, &base, h, l);
          for (int i = 0; i < 4; ++i) {
            const int64_t r = rt * 16 + lane / 4 + 8 * (i % 2), c = int64_t{kt} * TILE_K + kb * 8 + lane % 4 + 4 * (i / 2);
            (*hi)[r * PaddedCols(f) + c] = ToFloat(h[i]);
            (*lo)[r * PaddedCols(f) + c] = ToFloat(l[i]);
          }
        }
      }
    }
}

void CheckRoundTrip(const Csr& m, bool presplit) {
  SCOPED_TRACE(testing::Message() << m.rows << "x" << m.cols << " nnz " << m.values.size() << " presplit " << presplit);
  const BitmapFormat f = Build(m, presplit);
  ASSERT_NO_FATAL_FAILURE(sparseditto::seed_testing::CheckGroupedRecords(
      f, m.rows, m.cols, {WARPS_M, WARPS_K, kGroupK, kBitmapChunks}, 4,
      [&](size_t record, int w) { return TileStart(&f.data[record], w); }));
  const std::vector<float> want = Dense(m, PaddedRows(f), PaddedCols(f));
  std::vector<uint32_t> want_hi(want.size()), want_lo(want.size());
  for (size_t i = 0; i < want.size(); ++i) SplitTf32(want[i], &want_hi[i], &want_lo[i]);
  if (presplit) {
    EXPECT_TRUE(ExpandByBlock(f, 0) == want_hi);
    EXPECT_TRUE(ExpandByBlock(f, 1) == want_lo);
  } else {
    const std::vector<uint32_t> got = ExpandByBlock(f, 0);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0);
  }
  std::vector<float> hi, lo;
  ExpandByLane(f, &hi, &lo);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(hi[i], ToFloat(want_hi[i])) << i;
    ASSERT_EQ(lo[i], ToFloat(want_lo[i])) << i;
  }
}

TEST(BitmapTf32x3Format, AwkwardShapesRoundTripInBothValueLayouts) {
  for (bool presplit : {false, true}) {
    CheckRoundTrip(RandomCsr(7, 96, 0.3, 1), presplit);
    CheckRoundTrip(RandomCsr(65, 33, 0.3, 2), presplit);
    CheckRoundTrip(RandomCsr(33, 200, 0.1, 3), presplit);
    CheckRoundTrip(RandomCsr(33, 200, 0.5, 4, {0}, {1, 2, 31}), presplit);  // one dense row, empty rows
    CheckRoundTrip(RandomCsr(1, 1, 1.0, 5), presplit);
    CheckRoundTrip(RandomCsr(16, TILE_K, 1.0, 6), presplit);  // a full tile
    CheckRoundTrip(RandomCsr(130, 300, 0.9, 7), presplit);
    CheckRoundTrip(RandomCsr(40, 700, 0.02, 8, {}, {0, 39}), presplit);  // 98% sparse, first and last rows empty
  }
}

TEST(BitmapTf32x3Format, SizesOfEmptyAndFullTiles) {
  const BitmapFormat empty = Build(RandomCsr(20, 70, 0.0, 9), false);
  EXPECT_EQ(empty.max_group_chunks, static_cast<uint32_t>(1 + WARPS_K * kBitmapChunks));
  for (size_t i = 0; i + 1 < empty.goff.size(); ++i) EXPECT_EQ(empty.goff[i + 1] - empty.goff[i], empty.max_group_chunks);
  for (bool presplit : {false, true}) {  // header, then per tile the bitmaps and 16 * TILE_K values
    const BitmapFormat full = Build(RandomCsr(16, kGroupK, 1.0, 10), presplit);
    ASSERT_EQ(full.goff.size(), static_cast<size_t>(WARPS_M) + 1);
    EXPECT_EQ(full.goff[1] - full.goff[0], static_cast<uint32_t>(1 + WARPS_K * (kBitmapChunks + 16 * TILE_K * (presplit ? 2 : 1) / 4)));
  }
  BitmapFormat f;
  std::string error;
  EXPECT_FALSE(BuildBitmapFormat(0, 5, nullptr, nullptr, nullptr, false, &f, &error));
  EXPECT_EQ(error, "matrix size out of range");
}

TEST(BitmapTf32x3Format, BitOrderPutsALanesTwoElementsSideBySide) {
  // Blocks in k order, rows 0-7 before 8-15; lane L = 4g + t holds (g, t) at bit 2L and (g, t + 4) at 2L + 1.
  EXPECT_EQ(BlockOf(0, 0), 0);
  EXPECT_EQ(BlockOf(8, 7), 1);
  EXPECT_EQ(BlockOf(3, 9), 2);
  EXPECT_EQ(BlockOf(15, TILE_K - 1), kBitmapsPerTile - 1);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(BitOf(lane / 4, lane % 4), 2 * lane);
    EXPECT_EQ(BitOf(lane / 4 + 8, lane % 4 + 4 + 8), 2 * lane + 1);
  }
  const uint32_t values[3] = {11, 22, 33};
  const uint64_t bm = 0b1101;  // lane 0: {11, 0}; lane 1: {22, 33}; lane 2: nothing
  uint32_t out[2][1];
  LaneValues<1>(bm, values, 0, out);
  EXPECT_EQ(out[0][0], 11u);
  EXPECT_EQ(out[1][0], 0u);
  LaneValues<1>(bm, values, 1, out);
  EXPECT_EQ(out[0][0], 22u);
  EXPECT_EQ(out[1][0], 33u);
  LaneValues<1>(bm, values, 2, out);
  EXPECT_EQ(out[0][0] | out[1][0], 0u);
  const uint32_t pairs[4] = {1, 2, 3, 4};  // presplit: (hi, lo) of each nonzero
  uint32_t two[2][2];
  LaneValues<2>(uint64_t{3} << 62, pairs, 31, two);
  EXPECT_EQ(two[0][0], 1u);
  EXPECT_EQ(two[0][1], 2u);
  EXPECT_EQ(two[1][0], 3u);
  EXPECT_EQ(two[1][1], 4u);
}

// Fixed slots hold the same records: read through slot offsets (i * max_group_chunks), the format expands to the
// same matrix; the padding is zeros; padding beyond the byte limit (or a limit of 0) keeps the compact layout.
TEST(BitmapTf32x3Format, FixedSlotsHoldTheRecordsOrAreRefused) {
  for (const Csr& m : {RandomCsr(100, 700, 0.1, 13, {}, {5, 6}), RandomCsr(33, 200, 0.5, 14, {0})}) {
    const BitmapFormat f = Build(m, false);
    const size_t extra = ((f.goff.size() - 1) * f.max_group_chunks - f.goff.back()) * 16;
    std::vector<uint32_t> slots = {7};
    ASSERT_GT(extra, 0u);
    EXPECT_FALSE(PadRecordsToSlots(f, extra - 1, &slots));
    EXPECT_FALSE(PadRecordsToSlots(f, 0, &slots));
    EXPECT_EQ(slots, std::vector<uint32_t>{7}) << "nothing written when refused";
    ASSERT_TRUE(PadRecordsToSlots(f, extra, &slots));
    BitmapFormat fixed = f;
    fixed.data = slots;
    for (size_t i = 0; i < fixed.goff.size(); ++i) fixed.goff[i] = static_cast<uint32_t>(i * f.max_group_chunks);
    EXPECT_TRUE(ExpandByBlock(fixed, 0) == ExpandByBlock(f, 0));
    for (size_t i = 0; i + 1 < f.goff.size(); ++i)
      for (size_t w = (f.goff[i + 1] - f.goff[i]) * 4; w < f.max_group_chunks * 4; ++w)
        ASSERT_EQ(slots[i * f.max_group_chunks * 4 + w], 0u) << "record " << i;
  }
}

// ---- TF32 rounding and the 3xTF32 split -------------------------------------------------------------

TEST(BitmapTf32x3Split, RoundsToNearestTiesAwayLikeCvtRna) {
  struct Case {
    float x, want;
  };
  const float ulp = std::ldexp(1.0f, -10);  // of TF32 at 1
  for (const Case& c : std::vector<Case>{{1.0f, 1.0f},
                                         {1.0f + ulp / 2, 1.0f + ulp},               // tie: away from zero
                                         {-(1.0f + ulp / 2), -(1.0f + ulp)},
                                         {1.0f + ulp / 2 - std::ldexp(1.0f, -23), 1.0f},  // below the tie
                                         {1.0f + 1.5f * ulp, 1.0f + 2 * ulp},         // tie from an odd ulp: away
                                         {0.0f, 0.0f},
                                         {std::ldexp(1.0f, -126), std::ldexp(1.0f, -126)}}) {  // smallest normal
    EXPECT_EQ(ToFloat(Tf32Bits(c.x)), c.want) << c.x;
    EXPECT_EQ(Tf32Bits(c.x) & 0x1FFFu, 0u) << c.x;
  }
  EXPECT_TRUE(std::isinf(ToFloat(Tf32Bits(INFINITY))));
}

TEST(BitmapTf32x3Split, HiPlusLoIsTheValueTo22Bits) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> mantissa(-2, 2);
  for (int i = 0; i < 100000; ++i) {
    const float x = std::ldexp(mantissa(rng), static_cast<int>(rng() % 60) - 30);
    uint32_t hi, lo;
    SplitTf32(x, &hi, &lo);
    ASSERT_EQ((hi | lo) & 0x1FFFu, 0u);
    ASSERT_LE(std::abs(ToFloat(hi) - x), std::ldexp(std::abs(x), -11));
    ASSERT_LE(std::abs(double{ToFloat(hi)} + ToFloat(lo) - x), std::ldexp(std::abs(double{x}), -22)) << x;
  }
}

// ---- the kernel's arithmetic, emulated, against the evaluator's fp32 check ---------------------------

enum class Math { k3xTf32, k1xTf32 };

// C as the kernel computes it: per split z (groups in order), per warp wk (its k-tile of each group), per k
// step of 8, each mma adding 8 products of TF32 operands (fp32 sums); the 3xTF32 terms a_lo*b_hi, a_hi*b_lo
// (into their own accumulator under SMALL_ACC, added after the K loop), a_hi*b_hi in that order (1xTF32:
// a_hi*b_hi only); then the warps' partials summed in order 0..WARPS_K-1, the splits' in split order.
std::vector<float> Emulate(const BitmapFormat& f, int64_t rows, const std::vector<float>& b, int64_t n, int splits,
                           Math math) {
  std::vector<float> a_hi, a_lo;
  ExpandByLane(f, &a_hi, &a_lo);
  const int64_t pcol = PaddedCols(f), cols = static_cast<int64_t>(b.size()) / n;
  std::vector<float> b_hi(pcol * n, 0.0f), b_lo(pcol * n, 0.0f), c(rows * n);
  for (int64_t i = 0; i < cols * n; ++i) {
    uint32_t h, l;
    SplitTf32(b[i], &h, &l);
    b_hi[i] = ToFloat(h), b_lo[i] = ToFloat(l);
  }
  auto mma = [&](const std::vector<float>& a, const std::vector<float>& bb, int64_t r, int64_t col, int64_t k0) {
    float sum = 0.0f;
    for (int64_t k = k0; k < k0 + 8; ++k) sum += a[r * pcol + k] * bb[k * n + col];
    return sum;
  };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < n; ++col) {
      float total = 0.0f;
      for (int z = 0; z < splits; ++z) {
        float split_sum = 0.0f;
        for (int wk = 0; wk < WARPS_K; ++wk) {
          float acc = 0.0f, small = 0.0f;
          float& corr = SMALL_ACC ? small : acc;
          for (int g = SplitBegin(z, splits, f.groups); g < SplitBegin(z + 1, splits, f.groups); ++g)
            for (int kb = 0; kb < TILE_K / 8; ++kb) {
              const int64_t k0 = int64_t{g} * kGroupK + wk * TILE_K + kb * 8;
              if (math == Math::k3xTf32) corr += mma(a_lo, b_hi, r, col, k0), corr += mma(a_hi, b_lo, r, col, k0);
              acc += mma(a_hi, b_hi, r, col, k0);
            }
          split_sum += SMALL_ACC ? acc + small : acc;
        }
        total += split_sum;
      }
      c[r * n + col] = total;
    }
  return c;
}

TEST(BitmapTf32x3Accuracy, ThreeTf32PassesTheFp32CheckAndOneTf32DoesNot) {
  struct Case {
    int64_t rows, cols, n;
    double density;
    int splits;
  };
  for (const Case& t : {Case{64, 512, 32, 0.5, 1}, Case{48, 512, 24, 0.3, 2}, Case{32, 2048, 16, 0.2, 3},
                        Case{37, 1000, 9, 0.1, 1}}) {
    SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " n " << t.n << " splits " << t.splits);
    const Csr m = RandomCsr(t.rows, t.cols, t.density, static_cast<uint32_t>(t.rows * t.cols), {1}, {2});
    std::mt19937 rng(static_cast<uint32_t>(t.n));
    std::normal_distribution<float> normal;
    std::vector<float> b(t.cols * t.n), ref, abs_sum;
    for (float& v : b) v = normal(rng);
    const std::vector<float> a = Dense(m, t.rows, t.cols);
    for (int64_t r = 0; r < t.rows; ++r)  // exact, in double
      for (int64_t col = 0; col < t.n; ++col) {
        double sum = 0, abs = 0;
        for (int64_t k = 0; k < t.cols; ++k) {
          sum += double{a[r * t.cols + k]} * b[k * t.n + col];
          abs += std::abs(double{a[r * t.cols + k]} * b[k * t.n + col]);
        }
        ref.push_back(static_cast<float>(sum)), abs_sum.push_back(static_cast<float>(abs));
      }
    for (bool presplit : {false, true}) {
      const BitmapFormat f = Build(m, presplit);
      ASSERT_GE(f.groups, t.splits);
      const std::vector<float> three = Emulate(f, t.rows, b, t.n, t.splits, Math::k3xTf32);
      const auto pass = sparseditto::CheckOutput(three.data(), ref.data(), abs_sum.data(), t.rows, t.n,
                                                 sparseditto::v1::DTYPE_FP32, t.cols);
      EXPECT_TRUE(pass.passed) << pass.detail;
      EXPECT_LT(pass.worst_ratio, 0.1) << "3xTF32 should sit well inside the fp32 tolerance";
      const std::vector<float> one = Emulate(f, t.rows, b, t.n, t.splits, Math::k1xTf32);
      const auto fail = sparseditto::CheckOutput(one.data(), ref.data(), abs_sum.data(), t.rows, t.n,
                                                 sparseditto::v1::DTYPE_FP32, t.cols);
      EXPECT_FALSE(fail.passed) << "plain TF32, worst error / tolerance " << fail.worst_ratio;
    }
  }
}

// ---- split K and the launch plan -------------------------------------------------------------------

State TestState(int rows, int cols, int sms) {  // an H100-like state with dense-worst-case records
  State s;
  s.rows = rows, s.cols = cols, s.groups = CeilDiv(cols, kGroupK), s.max_smem = 227 * 1024, s.sms = sms;
  s.region_chunks = 1 + WARPS_K * (kBitmapChunks + 16 * TILE_K * (A_PRESPLIT ? 2 : 1) / 4);
  return s;
}

TEST(BitmapTf32x3Plan, SplitsFillIdleSmsOnlyAndPartitionTheGroups) {
  const int want = SPLIT_CTAS_PER_SM * 132;
  EXPECT_EQ(ChooseSplits(std::max(want, 1), 1, 1000, 132), 1);  // the grid alone fills the GPU
  EXPECT_EQ(ChooseSplits(1, 1, 7, 132), SPLIT_CTAS_PER_SM == 0 ? 1 : 3);  // never more than groups / 2
  EXPECT_EQ(ChooseSplits(1, 1, 1, 132), 1);
  EXPECT_EQ(ChooseSplits(1, 1, 1000, 0), 1);  // no SM count: no split
  for (int64_t ctas = 1; ctas <= 600; ctas += 7)
    for (int groups = 0; groups <= 40; ++groups) {
      const int s = ChooseSplits(ctas, 1, groups, 132);
      ASSERT_GE(s, 1);
      ASSERT_LE(s, std::max(1, groups / 2));
      if (ctas >= want) ASSERT_EQ(s, 1);
      for (int z = 0; z < s; ++z) {
        const int size = SplitBegin(z + 1, s, groups) - SplitBegin(z, s, groups);
        ASSERT_TRUE(size == groups / s || size == (groups + s - 1) / s);
        if (s > 1) ASSERT_GE(size, 2);
      }
    }
}

TEST(BitmapTf32x3Plan, PlansCoverNFitSharedMemoryAndIndexTheWorkspaceOnce) {
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{2048, 512}, {512, 2048}, {512, 512}, {4096, 11008}}) {
    const State s = TestState(rows, cols, 132);
    for (int64_t n : {1, 7, 16, 32, 33, 128, 256, 1024}) {
      SCOPED_TRACE(testing::Message() << rows << "x" << cols << " n " << n);
      Plan plan;
      ASSERT_TRUE(MakePlan(&s, n, &plan));
      EXPECT_EQ(plan.ncols % 16, 0);
      EXPECT_GE(plan.ncols * int64_t{plan.grid.y}, n);
      EXPECT_LT(plan.ncols * int64_t{plan.grid.y - 1}, n);
      EXPECT_LE(plan.smem, static_cast<size_t>(s.max_smem));
      EXPECT_EQ(plan.grid.x, static_cast<unsigned>(CeilDiv(CeilDiv(rows, 16), WARPS_M)));
      if (plan.grid.z == 1) {
        EXPECT_EQ(plan.ws_floats, 0u);
        continue;
      }
      std::vector<char> seen(plan.ws_floats, 0);
      for (size_t t = 0; t < size_t{plan.grid.x} * plan.grid.y; ++t)
        for (int z = 0; z < static_cast<int>(plan.grid.z); ++z)
          for (int wm = 0; wm < WARPS_M; ++wm)
            for (int i = 0; i < 16 * plan.ncols; ++i) {  // (j, r, lane) = (i / 128, i / 32 % 4, i % 32)
              const size_t at = WsIndex(t, z, plan.grid.z, wm, plan.ncols, i / 128, i / 32 % 4, i % 32);
              ASSERT_LT(at, plan.ws_floats);
              ASSERT_EQ(seen[at]++, 0);
            }
    }
  }
  Plan none;
  const State s = TestState(64, 64, 132);
  EXPECT_FALSE(MakePlan(&s, 0, &none));
}

}  // namespace
