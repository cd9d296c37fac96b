// CPU tests of the small-n 2:4 seed (no GPU, no CUDA runtime calls): the compressed layout it shares with
// nm24_mma_sp (re-expanded through the PTX definition of mma.sp), its plan (cluster splits, B slab bound),
// and a replay of every CTA's data flow (its pointer walk over A, the B slab's swizzle, ldmatrix.trans and
// mma.sp emulated, the cluster's rank-order sum, the store coordinates) against a plain product.
#include "kernels/seeds/nm24_stream_sp.cu"
#include "kernels/seeds/testing/nm24_layout_checks.h"

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

TEST(Nm24StreamBuild, ReexpandsToTheCsrMatrix) { ExpectBuildReexpands(); }

TEST(Nm24StreamBuild, RefusesThreeNonzerosInAGroup) { ExpectBuildRefusesThreeOfFour(); }

TEST(Nm24StreamPlan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  for (int64_t n : {1, 7, 16, 32, 128})
    for (int64_t mp : {128, 4096, 11008})
      for (int64_t kp : {64, 256, 4096, 11008, 24576})
        for (int max_splits : {1, 3, 8}) {
          SCOPED_TRACE(::testing::Message() << "n " << n << " mp " << mp << " kp " << kp << " max " << max_splits);
          const Plan p = MakePlan(mp, kp, n, 132, max_splits);
          const int64_t ktiles = kp / kBk;
          ASSERT_GE(p.splits, 1);
          EXPECT_LE(p.splits, kMaxSplits);
          EXPECT_LE(p.kt_per_split, kMaxSlabTiles);
          EXPECT_GE(int64_t(p.splits) * p.kt_per_split, ktiles);
          EXPECT_LT(int64_t(p.splits - 1) * p.kt_per_split, ktiles);  // no empty split
          EXPECT_EQ(p.smem, size_t(kRedBytes) + size_t(p.kt_per_split) * kBk * kSlabRowBytes);
          EXPECT_LE(p.smem, size_t(kRedBytes) + SLAB_KB * 1024);
          EXPECT_EQ(p.clusters, mp / (16 * WARPS) * ((n + kNt - 1) / kNt));
          const int64_t slab_min = (ktiles + kMaxSlabTiles - 1) / kMaxSlabTiles;
          if (slab_min <= max_splits) EXPECT_LE(p.splits, max_splits);  // the cap holds unless the slab forbids it
        }
  EXPECT_GT(MakePlan(4096, 4096, 16, 132).splits, 1);  // n = 16 spreads K over the cluster
  EXPECT_EQ(MakePlan(4096, int64_t(kMaxSlabTiles) * kBk, 16, 132, 1).splits, 1);
  EXPECT_EQ(MakePlan(4096, int64_t(kMaxSlabTiles + 1) * kBk, 16, 132, 1).splits, 2);  // the slab wins over the cap
}

TEST(Nm24StreamPlan, RefusesAKBeyondEightSlabs) {
  const int64_t most = int64_t(kMaxSplits) * kMaxSlabTiles * kBk;
  EXPECT_EQ(MakePlan(128, most, 16, 132).splits, kMaxSplits);
  EXPECT_EQ(MakePlan(128, most + kBk, 16, 132).splits, 0);
}

// Nm24StreamKernel<T> for every CTA of the plan (grid splits x row groups x n tiles): its pointer walk
// over A, its B slab (LoadBSlab's swizzle, zero fill), ldmatrix.trans at BFragOffset, mma.sp, and the
// cluster's sum of the ranks' partials in rank order, stored at StoreTile's coordinates.
std::vector<float> Replay(const Nm24Host& h, const std::vector<float>& b, int64_t n, const Plan& plan) {
  const int64_t rows = h.rows, kchunks = h.kp / 32, kpairs = kchunks / 2, ktiles = h.kp / kBk;
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  for (int64_t group = 0; group < h.mp / (16 * WARPS); ++group)
    for (int64_t n0 = 0; n0 < n; n0 += kNt) {
      std::vector<float> red(plan.splits * WARPS * 32 * 8);  // each rank's partials, lane by lane
      for (int split = 0; split < plan.splits; ++split) {
        const int kt0 = split * plan.kt_per_split, count = static_cast<int>(std::min<int64_t>(ktiles - kt0, plan.kt_per_split));
        EXPECT_GT(count, 0);
        static_assert(kBk == 64 && kNt == 16, "FillSlab's slab");
        const std::vector<float> sb = FillSlab(b, h.cols, n, kt0, count, n0, &SlabChunk);
        for (int warp = 0; warp < WARPS; ++warp) {
          const int64_t mt = group * WARPS + warp;
          std::vector<float> acc(2 * 128, 0.0f);
          for (int j = 0; j < count; ++j)
            for (int q = 0; q < 2; ++q) {
              Lanes4 a;
              std::array<uint32_t, 32> e;
              for (int l = 0; l < 32; ++l) {  // vals + ValTile(mt, 2 kt0) + 8 lane + 512 j + 256 q; meta + 32 j, .x/.y
                const int64_t at = ValTile(mt, 2 * int64_t(kt0), kchunks) + l * 8 + 512 * j + 256 * q;
                for (int r = 0; r < 4; ++r)
                  for (int x = 0; x < 2; ++x) a[l][r][x] = h.vals[at + r * 2 + x];
                e[l] = h.meta[MetaRecord(mt, kt0, kpairs) + MetaLaneWord(l) + 32 * j + q];
              }
              for (int ni = 0; ni < 2; ++ni) {
                std::array<int, 32> addr;
                for (int l = 0; l < 32; ++l) addr[l] = BFragOffset(j, q, ni, l);
                EmuMmaSp(a, e, EmuLdmTrans(sb, addr), &acc[ni * 128]);
              }
            }
          StoreWarpPartial(acc, split * WARPS + warp, &red);
        }
      }
      ClusterSumAndStore(red, plan.splits, WARPS, group, n0, rows, n, &c);
    }
  return c;
}

void ExpectReplayMatches(int64_t rows, int64_t cols, int64_t n, int max_splits) {
  const Csr m = RandomNmCsr(rows, cols, static_cast<uint32_t>(rows + 17 * cols + n));
  const Nm24Host h = Build(m);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " n " << n << " splits " << plan.splits);
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  ExpectPlainProduct(m, b, n, Replay(h, b, n, plan));
}

TEST(Nm24StreamReplay, AwkwardShapesSplitsAndN) {
  for (int64_t n : {1, 7, 16, 20}) {
    ExpectReplayMatches(7, 96, n, 8);
    ExpectReplayMatches(65, 36, n, 8);
    ExpectReplayMatches(33, 200, n, 8);  // 4 K tiles over 4 ranks
    ExpectReplayMatches(33, 200, n, 3);  // 2 ranks of 2 tiles
    ExpectReplayMatches(130, 600, n, 8);  // 10 K tiles: 8 would leave a rank empty, so 5 ranks of 2
    ExpectReplayMatches(130, 600, n, 1);
  }
}

}  // namespace
