// CPU tests of the 2:4-cover-plus-residual seed (no GPU, no CUDA runtime calls): its format (the cover
// re-expanded through the PTX definition of mma.sp, the residual lists and their K tile table), its plan, and a
// replay of every CTA's data flow (the stream warps' cover through emulated ldmatrix.trans and mma.sp, the
// residual threads' AddResidualEntry itself over the swizzled slab, the residual tile at PartialIndex, the
// cluster's rank-order sum) against a plain product.
#include "kernels/seeds/u24_stream_sp.cu"
#include "kernels/seeds/testing/nm24_emulation.h"

#include "gtest/gtest.h"

namespace {

using namespace sparseditto::seed_testing;

// Each element nonzero with probability `density`; row 0 dense, row 2 empty (when they exist).
Csr RandomCsr(int64_t rows, int64_t cols, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Csr m;
  m.rows = rows, m.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (r == 2 || !(r == 0 || u(rng) < density)) continue;
      m.ci.push_back(static_cast<int32_t>(c)), m.v.push_back(Eighths(rng));
    }
    m.ro.push_back(static_cast<int32_t>(m.ci.size()));
  }
  return m;
}

U24Host BuildU(const Csr& m) {
  U24Host h;
  std::string why;
  EXPECT_TRUE(BuildU24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  return h;
}

// What the kernel hands mma.sp for tile (mt, kc): a lane's 16 bytes and its metadata word.
void TileOperands(const U24Host& h, int64_t mt, int64_t kc, Lanes4* a, std::array<uint32_t, 32>* e) {
  const int64_t kchunks = h.kp / 32;
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r)
      for (int x = 0; x < 2; ++x) (*a)[l][r][x] = h.vals[ValTile(mt, kc, kchunks) + l * 8 + r * 2 + x];
    (*e)[l] = h.meta[MetaRecord(mt, kc / 2, kchunks / 2) + MetaLaneWord(l) + kc % 2];
  }
}

// The cover (decoded as mma.sp reads it) plus the residual lists equals the CSR matrix; the cover holds the
// first two nonzeros of each group, the residual only the later ones, each row's list in column order and its
// K tile table pointing at the first entry of each tile.
TEST(U24Format, CoverPlusResidualIsTheCsrMatrix) {
  struct Case { int64_t rows, cols; double density; };
  for (const Case& c : {Case{7, 96, 0.1}, Case{65, 36, 0.5}, Case{33, 200, 0.5}, Case{130, 68, 0.9}, Case{16, 64, 1.0}, Case{3, 6, 0.5}}) {
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " density " << c.density);
    const Csr m = RandomCsr(c.rows, c.cols, c.density, static_cast<uint32_t>(c.rows * 13 + c.cols));
    const U24Host h = BuildU(m);
    ASSERT_EQ(h.mp % 128, 0);
    ASSERT_EQ(h.kp % 64, 0);
    const int64_t ktiles = h.kp / kBk;
    ASSERT_EQ(h.rstart.size(), size_t(h.mp * (ktiles + 1)));
    std::vector<float> got(h.mp * h.kp, 0.0f);
    for (int64_t mt = 0; mt < h.mp / 16; ++mt)
      for (int64_t kc = 0; kc < h.kp / 32; ++kc) {
        Lanes4 a;
        std::array<uint32_t, 32> e;
        TileOperands(h, mt, kc, &a, &e);
        float tile[16][32];
        DecodeA(a, e, tile);
        for (int r = 0; r < 16; ++r)
          for (int k = 0; k < 32; ++k) got[(mt * 16 + r) * h.kp + kc * 32 + k] = tile[r][k];
      }
    std::vector<int> in_cover(h.mp * h.kp / 4, 0);  // nonzeros the cover holds, per group
    for (int64_t i = 0; i < h.mp * h.kp; ++i) in_cover[i / 4] += got[i] != 0.0f;
    for (int64_t r = 0; r < h.mp; ++r) {
      const uint32_t begin = h.rstart[RowStart(r, 0, ktiles)], end = h.rstart[RowStart(r, ktiles, ktiles)];
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        const uint32_t from = h.rstart[RowStart(r, kt, ktiles)], to = h.rstart[RowStart(r, kt + 1, ktiles)];
        ASSERT_LE(from, to);
        for (uint32_t i = from; i < to; ++i) ASSERT_EQ(h.residual_col[i] / kBk, uint32_t(kt)) << "row " << r << " entry " << i;
      }
      for (uint32_t i = begin; i < end; ++i) {
        if (i > begin) ASSERT_LT(h.residual_col[i - 1], h.residual_col[i]) << "row " << r << ": column order";
        ASSERT_EQ(in_cover[(r * h.kp + h.residual_col[i]) / 4], 2) << "only a group the cover filled overflows";
        float& at = got[r * h.kp + h.residual_col[i]];
        ASSERT_EQ(at, 0.0f) << "the cover and the residual overlap at row " << r << " column " << h.residual_col[i];
        at = h.residual_val[i];
      }
      if (r + 1 < h.mp) ASSERT_EQ(end, h.rstart[RowStart(r + 1, 0, ktiles)]) << "rows' lists back to back";
    }
    const std::vector<float> dense = Dense(m);
    for (int64_t r = 0; r < h.mp; ++r)
      for (int64_t k = 0; k < h.kp; ++k) {
        const float want = r < c.rows && k < c.cols ? dense[r * c.cols + k] : 0.0f;
        ASSERT_EQ(got[r * h.kp + k], want) << "A[" << r << "][" << k << "]";
      }
  }
}

TEST(U24Format, ResidualHoldsTheThirdAndFourthNonzeroOfAGroup) {
  Csr m;  // row 0: columns 0-3 and 5; row 1: 4, 6, 7 (an explicit zero at 5 is dropped)
  m.rows = 2, m.cols = 8;
  m.ci = {0, 1, 2, 3, 5, 4, 5, 6, 7}, m.v = {1, 2, 3, 4, 5, 6, 0, 7, 8}, m.ro = {0, 5, 9};
  const U24Host h = BuildU(m);
  ASSERT_EQ(h.residual_val.size(), 3u);
  EXPECT_EQ(h.residual_col, (std::vector<uint32_t>{2, 3, 7}));
  EXPECT_EQ(h.residual_val, (std::vector<float>{3, 4, 8}));
  EXPECT_EQ(h.rstart[RowStart(1, 0, 1)], 2u);
  EXPECT_EQ(ResidualWords<__half>(h)[2], 0x4800u | (7u << 16)) << "fp16 8.0 with column 7";
}

TEST(U24Format, RefusesWhatItCannotHold) {
  Csr m;
  m.rows = 1, m.cols = kMaxResidualCols + 1, m.ci = {0}, m.v = {1}, m.ro = {0, 1};
  U24Host h;
  std::string why;
  EXPECT_FALSE(BuildU24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("16-bit residual columns"), std::string::npos) << why;
  m.cols = 8, m.ci = {3, 1}, m.v = {1, 1}, m.ro = {0, 2};
  EXPECT_FALSE(BuildU24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("not increasing in row 0"), std::string::npos) << why;
  m.ci = {1, 9};
  EXPECT_FALSE(BuildU24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("out of range"), std::string::npos) << why;
}

// PartialIndex is where StoreWarpPartial (the stream warps' layout) puts row r, column c of the CTA's tile.
TEST(U24Layout, PartialIndexIsTheStreamWarpsLayout) {
  std::vector<float> acc(2 * 128), red(WARPS * 32 * 8, -1.0f);
  for (int warp = 0; warp < WARPS; ++warp) {
    for (int l = 0; l < 32; ++l)
      for (int ni = 0; ni < 2; ++ni)
        for (int i = 0; i < 4; ++i)  // accumulator i of n8 tile ni: row lane/4 + 8(i/2), column 8ni + 2(lane%4) + i%2
          acc[ni * 128 + l * 4 + i] = float((warp * 16 + l / 4 + 8 * (i / 2)) * 16 + ni * 8 + 2 * (l % 4) + i % 2);
    StoreWarpPartial(acc, warp, &red);
  }
  std::set<int> seen;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kNt; ++c) {
      ASSERT_EQ(red[PartialIndex(r, c)], float(r * 16 + c)) << "row " << r << " column " << c;
      seen.insert(PartialIndex(r, c));
    }
  EXPECT_EQ(seen.size(), size_t(kRows * kNt));
}

TEST(U24Plan, SplitsCoverKOnceWithinTheClusterAndSlab) {
  for (int64_t n : {1, 7, 16, 128})
    for (int64_t mp : {128, 4096, 11008})
      for (int64_t kp : {64, 4096, 11008, 24576})
        for (int max_splits : {1, 3, 8}) {
          SCOPED_TRACE(::testing::Message() << "n " << n << " mp " << mp << " kp " << kp << " max " << max_splits);
          const Plan p = MakePlan(mp, kp, n, 132, max_splits);
          const int64_t ktiles = kp / kBk;
          ASSERT_GE(p.splits, 1);
          EXPECT_LE(p.splits, kMaxSplits);
          EXPECT_LE(p.kt_per_split, kMaxSlabTiles);
          EXPECT_GE(int64_t(p.splits) * p.kt_per_split, ktiles);
          EXPECT_LT(int64_t(p.splits - 1) * p.kt_per_split, ktiles);  // no empty split
          EXPECT_EQ(p.smem, size_t(2 * kRedBytes) + size_t(p.kt_per_split) * kBk * kSlabRowBytes);
        }
  const int64_t most = int64_t(kMaxSplits) * kMaxSlabTiles * kBk;
  EXPECT_EQ(MakePlan(128, most, 16, 132).splits, kMaxSplits);
  EXPECT_EQ(MakePlan(128, most + kBk, 16, 132).splits, 0);
}

// The slab as the kernel's LoadBSlab lays it out, in fp16 bits, 16-byte chunks.
std::vector<uint4> SlabChunks(const std::vector<float>& sb) {
  std::vector<uint4> chunks(sb.size() / 8);
  for (size_t i = 0; i < chunks.size(); ++i) {
    uint32_t w[4];
    for (int x = 0; x < 4; ++x) w[x] = Bits16<__half>(sb[i * 8 + 2 * x]) | (Bits16<__half>(sb[i * 8 + 2 * x + 1]) << 16);
    chunks[i] = make_uint4(w[0], w[1], w[2], w[3]);
  }
  return chunks;
}

// U24StreamKernel<__half> for every CTA of the plan.
std::vector<float> Replay(const U24Host& h, const std::vector<float>& b, int64_t n, const Plan& plan) {
  const int64_t rows = h.rows, kchunks = h.kp / 32, kpairs = kchunks / 2, ktiles = h.kp / kBk;
  const std::vector<uint32_t> words = ResidualWords<__half>(h);
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  for (int64_t group = 0; group < h.mp / kRows; ++group)
    for (int64_t n0 = 0; n0 < n; n0 += kNt) {
      std::vector<float> red(plan.splits * WARPS * 32 * 8);  // each rank's partials, lane by lane
      for (int split = 0; split < plan.splits; ++split) {
        const int kt0 = split * plan.kt_per_split, count = static_cast<int>(std::min<int64_t>(ktiles - kt0, plan.kt_per_split));
        const std::vector<float> sb = FillSlab(b, h.cols, n, kt0, count, n0, &SlabChunk);
        const std::vector<uint4> chunks = SlabChunks(sb);
        std::vector<float> part(WARPS * 32 * 8, std::numeric_limits<float>::quiet_NaN());
        for (int r = 0; r < kRows; ++r) {  // the residual threads
          float sums[kNt] = {};
          const int64_t row = group * kRows + r;
          for (uint32_t i = h.rstart[RowStart(row, kt0, ktiles)]; i < h.rstart[RowStart(row, kt0 + count, ktiles)]; ++i)
            AddResidualEntry<__half>(words[i], chunks.data(), kt0, sums);
          for (int col = 0; col < kNt; ++col) part[PartialIndex(r, col)] = sums[col];
        }
        for (int warp = 0; warp < WARPS; ++warp) {  // the stream warps
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
          for (int l = 0; l < 32; ++l)  // + the residual tile, lane by lane
            for (int i = 0; i < 8; ++i) acc[(i / 4) * 128 + l * 4 + i % 4] += part[(warp * 32 + l) * 8 + i];
          StoreWarpPartial(acc, split * WARPS + warp, &red);
        }
      }
      ClusterSumAndStore(red, plan.splits, WARPS, group, n0, rows, n, &c);
    }
  return c;
}

void ExpectReplayMatches(int64_t rows, int64_t cols, double density, int64_t n, int max_splits) {
  const Csr m = RandomCsr(rows, cols, density, static_cast<uint32_t>(rows + 17 * cols + n));
  const U24Host h = BuildU(m);
  const Plan plan = MakePlan(h.mp, h.kp, n, 132, max_splits);
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " density " << density << " n " << n << " splits " << plan.splits);
  const std::vector<float> b = RandomB(cols, n, static_cast<uint32_t>(n * 3 + 1));
  ExpectPlainProduct(m, b, n, Replay(h, b, n, plan));
}

TEST(U24Replay, AwkwardShapesSplitsDensitiesAndN) {
  for (int64_t n : {1, 7, 16, 20}) {
    ExpectReplayMatches(7, 96, 0.5, n, 8);
    ExpectReplayMatches(65, 36, 0.9, n, 8);
    ExpectReplayMatches(33, 200, 0.5, n, 8);   // 4 K tiles over 4 ranks
    ExpectReplayMatches(33, 200, 0.3, n, 3);   // 2 ranks of 2 tiles
    ExpectReplayMatches(130, 600, 0.5, n, 8);  // 10 K tiles: 5 ranks of 2
    ExpectReplayMatches(130, 600, 1.0, n, 1);  // half the matrix in the residual
  }
}

}  // namespace
