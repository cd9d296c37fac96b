// CPU tests of the 2:4 seed (no GPU, no CUDA runtime calls): BuildNm24's compressed values + metadata
// re-expanded by a decoder written from the PTX ISA definition of mma.sp m16n8k32 (.f16/.bf16, sparsity
// selector 0) and compared with the CSR input; the split-K plan; and a replay of the kernel's data flow
// (its load order, fragment offsets, accumulator coordinates) through emulated ldmatrix.trans and
// mma.sp against a plain product, for every tile instance, split-K, awkward shapes and n.
#include "kernels/seeds/nm24_mma_sp.cu"
#include "kernels/seeds/testing/nm24_layout_checks.h"

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

TEST(Nm24Build, ReexpandsToTheCsrMatrix) { ExpectBuildReexpands(); }

TEST(Nm24Build, RefusesThreeNonzerosInAGroup) { ExpectBuildRefusesThreeOfFour(); }

TEST(Nm24Plan, SplitsCoverKOnceAndFitTheWorkspace) {
  for (int64_t n : {1, 7, 16, 32, 100, 128, 2048})
    for (int64_t rows : {7, 130, 4096, 11008})
      for (int64_t kp : {64, 256, 4096, 11008}) {
        const int64_t mp = (rows + 127) / 128 * 128;
        const Plan p = MakePlan(rows, mp, kp, n, 132, INT64_MAX, INT64_MAX);
        const int64_t ktiles = kp / 64;
        EXPECT_GE(p.splits, 1);
        EXPECT_GE(int64_t(p.splits) * p.kt_per_split, ktiles);
        EXPECT_LT(int64_t(p.splits - 1) * p.kt_per_split, ktiles);  // no empty split
        EXPECT_EQ(MakePlan(rows, mp, kp, n, 132, rows * n, INT64_MAX).splits, 1);  // workspace for one split only
        EXPECT_EQ(MakePlan(rows, mp, kp, n, 132, INT64_MAX, p.tiles - 1).splits, 1);  // too few tile counters
        EXPECT_EQ(p.small, n <= SMALL_N_MAX);
        if (p.splits > 1) EXPECT_LE(int64_t(p.splits) * rows * n * 4, kp * rows * 9 / 8 + 1);  // partials <= ~A's bytes
      }
  EXPECT_GT(MakePlan(4096, 4096, 4096, 16, 132, INT64_MAX, INT64_MAX).splits, 1);  // n = 16 spreads K over CTAs
  EXPECT_EQ(MakePlan(4096, 4096, 4096, 2048, 132, INT64_MAX, INT64_MAX).splits, 1);
}

// Nm24Kernel<T, TL> for every CTA of the plan; under split-K C = the partials summed in split order.
template <class TL>
std::vector<float> Replay(const Nm24Host& h, const std::vector<float>& b, int64_t n, const Plan& plan) {
  constexpr int CPR = TL::kBn / 8, W = TL::kThreads / 32;
  const int64_t rows = h.rows, kchunks = h.kp / 32, ktiles = h.kp / kBk;
  std::vector<float> ws(plan.splits * rows * n, std::numeric_limits<float>::quiet_NaN());
  for (int z = 0; z < plan.splits; ++z)
    for (int64_t mt0 = 0; mt0 < h.mp / 16; mt0 += TL::kBm / 16)
      for (int64_t n0 = 0; n0 < n; n0 += TL::kBn) {
        std::vector<float> acc(W * TL::kMi * TL::kNi * 128, 0.0f);
        const int kt0 = z * plan.kt_per_split, count = static_cast<int>(std::min<int64_t>(ktiles, kt0 + plan.kt_per_split)) - kt0;
        EXPECT_GT(count, 0);
        for (int kt = kt0; kt < kt0 + count; ++kt) {
          std::vector<float> sa(TL::kAElems, NAN), sb(TL::kBElems, NAN);
          std::vector<uint32_t> sm(TL::kMetaWords, 0xDEADBEEFu);
          for (int i = 0; i < (TL::kBm / 16) * 64; ++i)
            for (int x = 0; x < 8; ++x) sa[i * 8 + x] = h.vals[ValTile(mt0 + i / 64, 2 * kt, kchunks) + (i % 64) * 8 + x];
          for (int i = 0; i < (TL::kBm / 16) * 8; ++i)
            for (int x = 0; x < 4; ++x) sm[i * 4 + x] = h.meta[MetaRecord(mt0 + i / 8, kt, kchunks / 2) + (i % 8) * 4 + x];
          for (int i = 0; i < kBk * CPR; ++i)
            for (int x = 0; x < 8; ++x) {
              const int64_t k = int64_t(kt) * kBk + i / CPR, col = n0 + (i % CPR) * 8 + x;
              sb[SwzChunk<CPR>(i / CPR, i % CPR) * 8 + x] = k < h.cols && col < n ? b[k * n + col] : 0.0f;
            }
          for (int w = 0; w < W; ++w)
            for (int q = 0; q < 2; ++q)
              for (int mi = 0; mi < TL::kMi; ++mi) {
                Lanes4 a;
                std::array<uint32_t, 32> e;
                for (int l = 0; l < 32; ++l) {
                  for (int r = 0; r < 4; ++r)
                    for (int x = 0; x < 2; ++x) a[l][r][x] = sa[AFragOffset<TL>(w, mi, q, l) + r * 2 + x];
                  e[l] = sm[MetaOffset<TL>(w, mi, l) + q];  // uint2 .x / .y
                }
                for (int ni = 0; ni < TL::kNi; ++ni) {
                  std::array<int, 32> addr;
                  for (int l = 0; l < 32; ++l) addr[l] = BFragOffset<TL>(w, ni, q, l);
                  EmuMmaSp(a, e, EmuLdmTrans(sb, addr), &acc[((w * TL::kMi + mi) * TL::kNi + ni) * 128]);
                }
              }
        }
        for (int w = 0; w < W; ++w)
          for (int l = 0; l < 32; ++l)
            for (int mi = 0; mi < TL::kMi; ++mi)
              for (int ni = 0; ni < TL::kNi; ++ni)
                for (int hh = 0; hh < 2; ++hh) {
                  int r, cc;
                  AccCoord<TL>(w, l, mi, ni, hh, &r, &cc);
                  const int64_t row = mt0 * 16 + r, col = n0 + cc;
                  const float* v = &acc[((w * TL::kMi + mi) * TL::kNi + ni) * 128 + l * 4 + 2 * hh];
                  if (row >= rows) continue;
                  if (col < n) ws[(z * rows + row) * n + col] = v[0];
                  if (col + 1 < n) ws[(z * rows + row) * n + col + 1] = v[1];
                }
      }
  std::vector<float> c(rows * n, 0.0f);
  for (int64_t i = 0; i < rows * n; ++i)
    for (int z = 0; z < plan.splits; ++z) c[i] += ws[z * rows * n + i];
  return c;
}

template <class TL>
void ExpectReplayMatches(int64_t rows, int64_t cols, int64_t n, int splits) {
  SCOPED_TRACE(testing::Message() << rows << "x" << cols << " tile " << TL::kBm << "x" << TL::kBn << " n " << n
                                  << " splits " << splits);
  const Csr m = RandomNmCsr(rows, cols, static_cast<uint32_t>(rows + 17 * cols + n));
  const Nm24Host h = Build(m);
  const int ktiles = static_cast<int>(h.kp / kBk);
  Plan plan;
  plan.kt_per_split = (ktiles + splits - 1) / splits;
  plan.splits = (ktiles + plan.kt_per_split - 1) / plan.kt_per_split;
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  ExpectPlainProduct(m, b, n, Replay<TL>(h, b, n, plan));
}

TEST(Nm24Replay, SmallTileWithSplitK) {
  for (int64_t n : {1, 7, 16}) {
    ExpectReplayMatches<SmallTile>(7, 96, n, 1);
    ExpectReplayMatches<SmallTile>(65, 36, n, 1);
    ExpectReplayMatches<SmallTile>(33, 200, n, 3);
    ExpectReplayMatches<SmallTile>(70, 260, n, 5);
  }
}

TEST(Nm24Replay, Tile64x64) {
  for (int64_t n : {1, 20, 64, 70}) {
    ExpectReplayMatches<Tile<64, 64, 2, 2, 3>>(33, 200, n, 1);
    ExpectReplayMatches<Tile<64, 64, 2, 2, 3>>(130, 68, n, 2);
  }
}

TEST(Nm24Replay, BigTile) {
  for (int64_t n : {9, 130, 256}) ExpectReplayMatches<BigTile>(140, 132, n, 1);
  ExpectReplayMatches<BigTile>(65, 200, 40, 2);
}

TEST(Nm24Replay, OtherTunedTiles) {  // shapes the tunables can produce
  ExpectReplayMatches<Tile<64, 64, 4, 4, 3>>(70, 96, 70, 1);
  ExpectReplayMatches<Tile<128, 64, 2, 2, 3>>(130, 64, 50, 1);
  ExpectReplayMatches<Tile<64, 128, 2, 4, 4>>(64, 128, 136, 2);
}

// LoadStage's chunks of a tile: over the CTA's threads, chunk t of thread tid is chunk i = t * kThreads + tid of the
// values, the metadata and B, each loaded once, from the row tile, record row and column its plan offsets name
// (ATile, MTile, BRow, BCol: a thread's chunks a fixed stride apart), and nothing past the stage.
template <class TL> void ExpectStagePlanLoadsEveryChunkOnce() {
  using Plan = StagePlan<TL>;
  SCOPED_TRACE(::testing::Message() << "tile " << TL::kBm << "x" << TL::kBn << ", " << TL::kThreads << " threads");
  std::vector<int> a(Plan::kAChunks, 0), m(Plan::kMChunks, 0), bs(Plan::kBChunks, 0);
  for (int tid = 0; tid < TL::kThreads; ++tid) {
    for (int t = 0; t < Plan::kA; ++t) {
      if (!Plan::Has(Plan::kAChunks, t, tid)) continue;
      const int i = t * TL::kThreads + tid;
      ASSERT_LT(i, Plan::kAChunks);
      ++a[i];
      EXPECT_EQ(Plan::ATile(t, tid), i / 64) << "value chunk " << i;  // ATile: chunk 0's tile plus LoadStage's stride
      EXPECT_EQ(i % 64, tid % 64) << "value chunk " << i;                // the same place in its tile
    }
    for (int t = 0; t < Plan::kM; ++t) {
      if (!Plan::Has(Plan::kMChunks, t, tid)) continue;
      const int i = t * TL::kThreads + tid;
      ASSERT_LT(i, Plan::kMChunks);
      ++m[i];
      EXPECT_EQ(Plan::MTile(t, tid), i / 8) << "metadata chunk " << i;  // MTile: chunk 0's record plus LoadStage's stride
      EXPECT_EQ(i % 8, tid % 8) << "metadata chunk " << i;
    }
    for (int t = 0; t < Plan::kB; ++t) {
      if (!Plan::Has(Plan::kBChunks, t, tid)) continue;
      const int i = t * TL::kThreads + tid;
      ASSERT_LT(i, Plan::kBChunks);
      ++bs[i];
      EXPECT_EQ(Plan::BRow(t, tid), i / Plan::kBCpr) << "B chunk " << i;
      EXPECT_EQ(Plan::BCol(tid), i % Plan::kBCpr) << "B chunk " << i;
    }
  }
  for (int i = 0; i < Plan::kAChunks; ++i) EXPECT_EQ(a[i], 1) << "value chunk " << i;
  for (int i = 0; i < Plan::kMChunks; ++i) EXPECT_EQ(m[i], 1) << "metadata chunk " << i;
  for (int i = 0; i < Plan::kBChunks; ++i) EXPECT_EQ(bs[i], 1) << "B chunk " << i;
}

TEST(Nm24StagePlan, LoadsEveryChunkOnce) {  // the default tiles and others the tunables can produce
  ExpectStagePlanLoadsEveryChunkOnce<SmallTile>();
  ExpectStagePlanLoadsEveryChunkOnce<BigTile>();
  ExpectStagePlanLoadsEveryChunkOnce<Tile<64, 64, 2, 2, 3>>();
  ExpectStagePlanLoadsEveryChunkOnce<Tile<64, 64, 4, 4, 3>>();
  ExpectStagePlanLoadsEveryChunkOnce<Tile<128, 64, 2, 2, 3>>();
  ExpectStagePlanLoadsEveryChunkOnce<Tile<64, 128, 2, 4, 4>>();
  ExpectStagePlanLoadsEveryChunkOnce<Tile<128, 128, 4, 4, 2>>();
}

}  // namespace
