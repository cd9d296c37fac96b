// CPU tests of the small-n dense stream seed (no GPU, no CUDA runtime calls): its fragment layout (decoded as
// the PTX ISA defines the m16n8k16 A operand), its plan (cluster splits, B slab bound), and a replay of every
// CTA's data flow in both layouts (its pointer walk over A, the B slab's swizzle, ldmatrix(.trans) and mma
// emulated, the cluster's rank-order sum, the store coordinates) against a plain product.
#include "kernels/seeds/dense_stream.cu"
#include "kernels/seeds/testing/cluster_stream_checks.h"

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

DenseHost BuildD(const Csr& m) {
  DenseHost h;
  std::string why;
  EXPECT_TRUE(BuildDense(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  return h;
}

// mma.m16n8k16 operand A (.f16/.bf16): lane 4g + t's register r holds (row g + 8 (r % 2), columns 2t + 8 (r / 2)
// and +1), lower half first.
void DecodeFragment(const Lanes4& a, float (*out)[16]) {
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < 2; ++e) out[l / 4 + 8 * (r % 2)][2 * (l % 4) + 8 * (r / 2) + e] = a[l][r][e];
}
// mma.m16n8k16: D(16x8) += A(16x16) * B(16x8), B register r of lane 4g + t = (rows 2t, 2t+1) + 8r, column g;
// D c_i: row g + 8(i/2), column 2t + i%2. b[l] = {b0, b1} of lane l.
void EmuMma(const Lanes4& a, const std::array<std::array<Reg, 2>, 32>& b, float* d /*[32][4]*/) {
  float A[16][16], B[16][8];
  DecodeFragment(a, A);
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < 2; ++e) B[2 * (l % 4) + e + 8 * r][l / 4] = b[l][r][e];
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      double s = 0;
      for (int k = 0; k < 16; ++k) s += double(A[l / 4 + 8 * (i / 2)][k]) * B[k][2 * (l % 4) + i % 2];
      d[l * 4 + i] += static_cast<float>(s);
    }
}

Lanes4 TileOperand(const DenseHost& h, int64_t mt, int64_t ks) {
  Lanes4 a;
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 4; ++r)
      for (int x = 0; x < 2; ++x) a[l][r][x] = h.vals[FragTile(mt, ks, h.kp / 16) + l * 8 + r * 2 + x];
  return a;
}

TEST(DenseStreamBuild, FragmentsDecodeToTheCsrMatrix) {
  struct Case { int64_t rows, cols; double density; };
  for (const Case& c : {Case{7, 96, 0.5}, Case{65, 36, 0.3}, Case{33, 200, 1.0}, Case{1, 4, 1.0}, Case{130, 68, 0.1}, Case{3, 6, 0.5}}) {
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " density " << c.density);
    const Csr m = RandomCsr(c.rows, c.cols, c.density, static_cast<uint32_t>(c.rows * 13 + c.cols));
    const DenseHost h = BuildD(m);
    ASSERT_EQ(h.mp % 128, 0);
    ASSERT_EQ(h.kp % 64, 0);
    ASSERT_GE(h.mp, c.rows);
    ASSERT_GE(h.kp, c.cols);
    const std::vector<float> dense = Dense(m);
    for (int64_t mt = 0; mt < h.mp / 16; ++mt)
      for (int64_t ks = 0; ks < h.kp / 16; ++ks) {
        float tile[16][16];
        DecodeFragment(TileOperand(h, mt, ks), tile);
        for (int r = 0; r < 16; ++r)
          for (int k = 0; k < 16; ++k) {
            const int64_t row = mt * 16 + r, col = ks * 16 + k;
            const float want = row < c.rows && col < c.cols ? dense[row * c.cols + col] : 0.0f;
            ASSERT_EQ(tile[r][k], want) << "A[" << row << "][" << col << "]";
          }
      }
  }
}

TEST(DenseStreamBuild, RefusesMalformedCsr) {
  Csr m;
  m.rows = 2, m.cols = 8, m.ci = {0, 9}, m.v = {1, 1}, m.ro = {0, 1, 2};
  DenseHost h;
  std::string why;
  EXPECT_FALSE(BuildDense(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("out of range in row 1"), std::string::npos) << why;
  m.ci = {0, 1}, m.ro = {0, 2, 1};
  EXPECT_FALSE(BuildDense(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("row offsets decrease at row 1"), std::string::npos) << why;
}

TEST(DenseStreamPlan, PushReduceGivesEveryTileAndRankItsOwnSlotAtItsOwner) {
  ExpectPushReduceCoversEveryTile(WARPS, kMaxSplits, &RedBytes, PushOwner, PushSlot);
}

TEST(DenseStreamLayouts, LdmatrixAddressIsTileZerosPlusTheTiles) {  // ComputeBatch's address against the swizzled offsets
  ExpectTileAddressesAddUp(
      kMaxSlabTiles, 4, 1, kSlabTileBytes, [](bool nk, int q, int, int l) { return nk ? TileFragBytes<true>(q, l) : TileFragBytes<false>(q, l); },
      [](bool nk, int j, int q, int, int l) { return nk ? NkBFragOffset(j, q, l) : BFragOffset(j, q, l); });
}

TEST(DenseStreamPlan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  static_assert(kBk == 64 && kNt == 16, "the shared checks' K tile and n tile");
  ExpectClusterStreamPlan([](int64_t mp, int64_t kp, int64_t n, int sms, int max) { return MakePlan(mp, kp, n, sms, max); },
                          {kMaxSplits, kMaxSlabTiles, 16 * WARPS, &RedBytes, 0, size_t(kBk) * kSlabRowBytes, SLAB_KB * 1024});
}

// DenseStreamKernel<T, kNk> for every CTA of the plan (grid splits x row groups x n tiles), in either layout.
std::vector<float> Replay(const DenseHost& h, const std::vector<float>& b, int64_t n, const Plan& plan, bool nk) {
  const int64_t ksteps = h.kp / 16;
  auto warp_product = [&](int64_t mt, int kt0, int count, const std::vector<float>& sb, std::vector<float>* acc) {
    for (int j = 0; j < count; ++j)
      for (int q = 0; q < 4; ++q) {
        Lanes4 a;  // vals + FragTile(mt, 4 kt0) + 8 lane + ((4 j + q) * 256)
        for (int l = 0; l < 32; ++l)
          for (int r = 0; r < 4; ++r)
            for (int x = 0; x < 2; ++x) a[l][r][x] = h.vals[FragTile(mt, 4 * int64_t(kt0), ksteps) + l * 8 + (4 * j + q) * 256 + r * 2 + x];
        std::array<int, 32> addr;
        for (int l = 0; l < 32; ++l) addr[l] = nk ? NkBFragOffset(j, q, l) : BFragOffset(j, q, l);
        const Lanes4 bm = nk ? EmuLdm(sb, addr) : EmuLdmTrans(sb, addr);  // matrices 0, 1: n8 tile 0's b0, b1; 2, 3: tile 1's
        for (int ni = 0; ni < 2; ++ni) {
          std::array<std::array<Reg, 2>, 32> bb;
          for (int l = 0; l < 32; ++l) bb[l] = {bm[l][2 * ni], bm[l][2 * ni + 1]};
          EmuMma(a, bb, &(*acc)[ni * 128]);
        }
      }
  };
  if (nk) {
    return ReplayClusterStreamNk(h.rows, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &NkSlabOffset, &OutIndex,
                                 warp_product);
  }
  return ReplayClusterStream(h.rows, h.cols, h.mp, h.kp, b, n, plan.splits, plan.kt_per_split, WARPS, &SlabChunk, warp_product);
}

void ExpectReplayMatches(int64_t rows, int64_t cols, double density, int64_t n, int max_splits, bool nk) {
  const Csr m = RandomCsr(rows, cols, density, static_cast<uint32_t>(rows + 17 * cols + n));
  const DenseHost h = BuildD(m);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " density " << density << " n " << n << " splits " << plan.splits
                                    << (nk ? " NK" : " KN"));
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  ExpectPlainProduct(m, b, n, Replay(h, b, n, plan, nk));
}

TEST(DenseStreamReplay, AwkwardShapesSplitsAndNInBothLayouts) {
  for (bool nk : {false, true})
    for (int64_t n : {1, 7, 16, 20}) {
      ExpectReplayMatches(7, 96, 0.5, n, 8, nk);
      ExpectReplayMatches(65, 36, 1.0, n, 8, nk);
      ExpectReplayMatches(33, 200, 0.5, n, 8, nk);   // 4 K tiles over 4 ranks
      ExpectReplayMatches(33, 200, 0.3, n, 3, nk);   // 2 ranks of 2 tiles
      ExpectReplayMatches(130, 600, 0.5, n, 8, nk);  // 10 K tiles: 5 ranks of 2
      ExpectReplayMatches(130, 600, 0.9, n, 1, nk);
    }
}

TEST(DenseStreamLayouts, ExportsKnAndNk) {
  EXPECT_EQ(sparseditto_layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
}

}  // namespace
