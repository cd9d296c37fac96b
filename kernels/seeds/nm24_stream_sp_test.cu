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
  ExpectPushReduceCoversEveryTile(WARPS, kMaxSplits, &RedBytes, PushOwner, PushSlot);
}

TEST(Nm24StreamLayouts, LdmatrixAddressIsTileZerosPlusTheTiles) {  // ComputeBatch's address against the swizzled offsets
  ExpectTileAddressesAddUp(
      kMaxSlabTiles, 2, 2, kSlabTileBytes,
      [](bool nk, int q, int ni, int l) { return nk ? TileFragBytes<true>(q, ni, l) : TileFragBytes<false>(q, ni, l); },
      [](bool nk, int j, int q, int ni, int l) { return nk ? NkBFragOffset(j, q, ni, l) : BFragOffset(j, q, ni, l); });
}

TEST(Nm24StreamPlan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  static_assert(kBk == 64 && kNt == 16, "the shared checks' K tile and n tile");
  ExpectClusterStreamPlan([](int64_t mp, int64_t kp, int64_t n, int sms, int max) { return MakePlan(mp, kp, n, sms, max); },
                          {kMaxSplits, kMaxSlabTiles, 16 * WARPS, &RedBytes, 0, size_t(kBk) * kSlabRowBytes, SLAB_KB * 1024});
}

// Nm24StreamKernel<T, kNk> for every CTA of the plan (grid splits x row groups x n tiles): its pointer walk
// over A, its B slab (LoadBSlab's swizzle and zero fill: KN's rows of B or NK's rows of X), ldmatrix(.trans) at
// (Nk)BFragOffset, mma.sp, and the cluster's sum of the ranks' partials in rank order, stored at StoreTile's
// coordinates (OutIndex: C, or Y = C^T in NK). Returns C (rows x n) either way. Staged (STAGE_A): each warp's
// K range copied as StageA copies it (values, then metadata records, the first `count` tiles; the rest of the
// region NaN / poison) and the operands read from there at StagedVal / StagedMeta.
std::vector<float> Replay(const Nm24Host& h, const std::vector<float>& b, int64_t n, const Plan& plan, bool nk, bool staged = false) {
  const int64_t kchunks = h.kp / 32, kpairs = kchunks / 2;
  const int per = plan.kt_per_split;
  auto warp_product = [&](int64_t mt, int kt0, int count, const std::vector<float>& sb, std::vector<float>* acc) {
    std::vector<float> region_vals(per * kTileValBytes / 2, std::numeric_limits<float>::quiet_NaN());
    std::vector<uint32_t> region_meta(per * kTileMetaBytes / 4, 0xDEADBEEFu);
    for (int64_t i = 0; i < count * kTileValBytes / 2; ++i) region_vals[i] = h.vals[ValTile(mt, 2 * int64_t(kt0), kchunks) + i];
    for (int64_t i = 0; i < count * kTileMetaBytes / 4; ++i) region_meta[i] = h.meta[MetaRecord(mt, kt0, kpairs) + i];
    for (int j = 0; j < count; ++j)
      for (int q = 0; q < 2; ++q) {
        Lanes4 a;
        std::array<uint32_t, 32> e;
        for (int l = 0; l < 32; ++l) {  // vals + ValTile(mt, 2 kt0) + 8 lane + 512 j + 256 q; meta + 32 j, .x/.y
          const int64_t at = ValTile(mt, 2 * int64_t(kt0), kchunks) + l * 8 + 512 * j + 256 * q;
          for (int r = 0; r < 4; ++r)
            for (int x = 0; x < 2; ++x) a[l][r][x] = staged ? region_vals[StagedVal(j, q, l) / 2 + r * 2 + x] : h.vals[at + r * 2 + x];
          e[l] = staged ? region_meta[(StagedMeta(per, j, l) - per * kTileValBytes) / 4 + q]
                        : h.meta[MetaRecord(mt, kt0, kpairs) + MetaLaneWord(l) + 32 * j + q];
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

void ExpectReplayMatches(int64_t rows, int64_t cols, int64_t n, int max_splits, bool nk) {  // streamed and staged
  const Csr m = RandomNmCsr(rows, cols, static_cast<uint32_t>(rows + 17 * cols + n));
  const Nm24Host h = Build(m);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " n " << n << " splits " << plan.splits << (nk ? " NK" : " KN"));
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  for (bool staged : {false, true}) ExpectPlainProduct(m, b, n, Replay(h, b, n, plan, nk, staged));
}

// STAGE_A's region: a tile's values and metadata where StageA's straight copy of the range puts them (StagedVal
// and StagedMeta against ValTile and MetaRecord), inside the warp's per * kStagedTileBytes; and the plan stages only
// when the CTA's share holds the slab and every warp's range, adding exactly that to its shared memory.
TEST(Nm24StreamPlan, StagedOperandsSitWhereTheCopyPutsThemAndThePlanStagesOnlyWhatFits) {
  const int64_t kchunks = 64, kpairs = 32, mt = 5;
  for (int per : {1, 3, 13})
    for (int kt0 : {0, 7})
      for (int j = 0; j < per; ++j)
        for (int lane = 0; lane < 32; ++lane) {
          for (int q = 0; q < 2; ++q) {
            const int64_t want = (ValTile(mt, 2 * int64_t(kt0 + j) + q, kchunks) - ValTile(mt, 2 * int64_t(kt0), kchunks) + lane * 8) * 2;
            ASSERT_EQ(StagedVal(j, q, lane), want) << "per " << per << " tile " << j << " step " << q << " lane " << lane;
            ASSERT_LE(StagedVal(j, q, lane) + 16, per * kTileValBytes);
          }
          const int64_t want = per * kTileValBytes + (MetaRecord(mt, kt0 + j, kpairs) - MetaRecord(mt, kt0, kpairs) + MetaLaneWord(lane)) * 4;
          ASSERT_EQ(StagedMeta(per, j, lane), want);
          ASSERT_EQ(StagedMeta(per, j, lane) % 8, 0) << "an 8-byte read";
          ASSERT_LE(StagedMeta(per, j, lane) + 8, per * kStagedTileBytes);
        }
  const Plan plan = MakePlan(4096, 4096, 16, 132, 5);  // 2:4 4096 x 4096, n = 16: 5 splits of 13 K tiles
  ASSERT_EQ(plan.kt_per_split, 13);
  const size_t staged = size_t(WARPS) * 13 * kStagedTileBytes;
  EXPECT_FALSE(WithStaging(plan, 1 << 30, false).staged) << "STAGE_A 0";
  const Plan roomy = WithStaging(plan, plan.smem + staged, true);
  EXPECT_TRUE(roomy.staged);
  EXPECT_EQ(roomy.smem, plan.smem + staged);
  const Plan tight = WithStaging(plan, plan.smem + staged - 1, true);
  EXPECT_FALSE(tight.staged);
  EXPECT_EQ(tight.smem, plan.smem);
  EXPECT_FALSE(WithStaging(MakePlan(4096, 11008, 16, 132), SmemBudget(232448, 233472), true).staged)
      << "a long K range streams through registers";
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
