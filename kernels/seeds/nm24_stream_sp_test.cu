// CPU tests of the small-n 2:4 seed (no GPU, no CUDA runtime calls): the compressed layout it shares with
// nm24_mma_sp (re-expanded through the PTX definition of mma.sp), its plan (cluster splits, B slab bound),
// and a replay of every CTA's data flow in both layouts (its pointer walk over A, the B slab's swizzle,
// ldmatrix(.trans) and mma.sp emulated, the cluster's rank-order sum, the store coordinates) against a plain
// product.
#include "kernels/seeds/nm24_stream_sp.cu"
#include "kernels/seeds/testing/cluster_stream_checks.h"
#include "kernels/seeds/testing/nm24_layout_checks.h"

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

TEST(Nm24StreamBuild, ReexpandsToTheCsrMatrix) { ExpectBuildReexpands(); }

TEST(Nm24StreamBuild, RefusesThreeNonzerosInAGroup) { ExpectBuildRefusesThreeOfFour(); }

TEST(Nm24StreamPlan, PushReduceGivesEveryTileAndRankItsOwnSlotAtItsOwner) {
  ExpectPushReduceCoversEveryTile(WARPS, kMaxSplits, kRedBytes / (32 * 8 * 4), PushOwner, PushSlot);
}

TEST(Nm24StreamPlan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  static_assert(kBk == 64 && kNt == 16, "the shared checks' K tile and n tile");
  ExpectClusterStreamPlan([](int64_t mp, int64_t kp, int64_t n, int sms, int max) { return MakePlan(mp, kp, n, sms, max); },
                          {kMaxSplits, kMaxSlabTiles, 16 * WARPS, size_t(kRedBytes), size_t(kBk) * kSlabRowBytes, SLAB_KB * 1024});
}

// Nm24StreamKernel<T, kNk> for every CTA of the plan (grid splits x row groups x n tiles): its pointer walk
// over A, its B slab (LoadBSlab's swizzle and zero fill: KN's rows of B or NK's rows of X), ldmatrix(.trans) at
// (Nk)BFragOffset, mma.sp, and the cluster's sum of the ranks' partials in rank order, stored at StoreTile's
// coordinates (OutIndex: C, or Y = C^T in NK). Returns C (rows x n) either way.
std::vector<float> Replay(const Nm24Host& h, const std::vector<float>& b, int64_t n, const Plan& plan, bool nk) {
  const int64_t kchunks = h.kp / 32, kpairs = kchunks / 2;
  auto warp_product = [&](int64_t mt, int kt0, int count, const std::vector<float>& sb, std::vector<float>* acc) {
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
          for (int l = 0; l < 32; ++l) addr[l] = nk ? NkBFragOffset(j, q, ni, l) : BFragOffset(j, q, ni, l);
          EmuMmaSp(a, e, nk ? EmuLdm(sb, addr) : EmuLdmTrans(sb, addr), &(*acc)[ni * 128]);
        }
      }
  };
  if (!nk) return ReplayClusterStream(h.rows, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &SlabChunk, warp_product);
  return ReplayClusterStreamNk(h.rows, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &NkSlabOffset, &OutIndex,
                               warp_product);
}

void ExpectReplayMatches(int64_t rows, int64_t cols, int64_t n, int max_splits, bool nk) {
  const Csr m = RandomNmCsr(rows, cols, static_cast<uint32_t>(rows + 17 * cols + n));
  const Nm24Host h = Build(m);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " n " << n << " splits " << plan.splits << (nk ? " NK" : " KN"));
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  ExpectPlainProduct(m, b, n, Replay(h, b, n, plan, nk));
}

TEST(Nm24StreamReplay, AwkwardShapesSplitsAndNInBothLayouts) {
  for (bool nk : {false, true})
    for (int64_t n : {1, 7, 16, 20}) {
      ExpectReplayMatches(7, 96, n, 8, nk);
      ExpectReplayMatches(65, 36, n, 8, nk);
      ExpectReplayMatches(33, 200, n, 8, nk);  // 4 K tiles over 4 ranks
      ExpectReplayMatches(33, 200, n, 3, nk);  // 2 ranks of 2 tiles
      ExpectReplayMatches(130, 600, n, 8, nk);  // 10 K tiles: 8 would leave a rank empty, so 5 ranks of 2
      ExpectReplayMatches(130, 600, n, 1, nk);
    }
}

TEST(Nm24StreamLayouts, ExportsKnAndNk) {
  EXPECT_EQ(sparseditto_layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
  // The store index: C[row][col] in KN, Y[col][row] in NK.
  EXPECT_EQ(OutIndex(false, 3, 5, 10, 7), 3 * 7 + 5);
  EXPECT_EQ(OutIndex(true, 3, 5, 10, 7), 5 * 10 + 3);
}

}  // namespace
