// CPU tests of the BSR seed (no GPU, no CUDA runtime calls): BuildBsr against a dense re-expansion of the
// CSR input, the shared-memory swizzle (a bijection; every ldmatrix phase conflict-free), and a replay of
// one CTA's data flow on the CPU — the kernel's own load order, fragment offsets and accumulator
// coordinates fed through ldmatrix / mma.sync.m16n8k16 emulated from the PTX ISA fragment definitions —
// against a plain product, for every block size, both tile instances and awkward n.
#include "kernels/seeds/bsr_mma.cu"

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "gtest/gtest.h"
#include "kernels/seeds/testing/random_block_csr.h"

namespace {

using sparseditto::seed_testing::BlockCsr;
using sparseditto::seed_testing::Dense;
using sparseditto::seed_testing::Eighths;
using sparseditto::seed_testing::RandomBlockCsr;
using Csr = BlockCsr;

BsrHost Build(const Csr& m, int block) {
  BsrHost h;
  std::string why;
  EXPECT_TRUE(BuildBsr(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), block, &h, &why)) << why;
  return h;
}

TEST(BsrMmaBuild, ReexpandsToTheCsrMatrixWithZeroPadding) {
  struct Case { int64_t rows, cols; int block; double keep; };
  for (const Case& c : {Case{7, 96, 16, 0.5}, Case{33, 200, 32, 0.4}, Case{65, 33, 64, 0.7}, Case{128, 192, 64, 0.3},
                        Case{1, 1, 16, 1.0}, Case{96, 7, 32, 0.6}, Case{200, 130, 16, 0.2}}) {
    SCOPED_TRACE(testing::Message() << c.rows << "x" << c.cols << " block " << c.block);
    const Csr m = RandomBlockCsr(c.rows, c.cols, c.block, c.keep, static_cast<uint32_t>(c.rows * 7 + c.cols));
    const BsrHost h = Build(m, c.block);
    const int64_t B = c.block, bb = B * B;
    ASSERT_EQ(h.block_rows, (c.rows + B - 1) / B);
    ASSERT_EQ(h.row_ptr.size(), static_cast<size_t>(h.block_rows + 1));
    ASSERT_EQ(h.values.size(), h.col_idx.size() * bb);
    std::vector<float> back(h.block_rows * B * h.block_cols * B, 0.0f);
    for (int64_t br = 0; br < h.block_rows; ++br) {
      ASSERT_LE(h.row_ptr[br], h.row_ptr[br + 1]);
      for (int32_t j = h.row_ptr[br]; j < h.row_ptr[br + 1]; ++j) {
        if (j > h.row_ptr[br]) EXPECT_LT(h.col_idx[j - 1], h.col_idx[j]);
        for (int64_t i = 0; i < bb; ++i) back[(br * B + i / B) * h.block_cols * B + h.col_idx[j] * B + i % B] = h.values[j * bb + i];
      }
    }
    const std::vector<float> dense = Dense(m);
    for (int64_t r = 0; r < h.block_rows * B; ++r)
      for (int64_t k = 0; k < h.block_cols * B; ++k)
        ASSERT_EQ(back[r * h.block_cols * B + k], r < c.rows && k < c.cols ? dense[r * c.cols + k] : 0.0f) << r << "," << k;
    // Every block holds at least one entry of A (no empty blocks are stored).
    for (size_t j = 0; j < h.col_idx.size(); ++j) {
      bool any = false;
      for (int64_t i = 0; i < bb; ++i) any |= h.values[j * bb + i] != 0.0f;
      EXPECT_TRUE(any) << "block " << j;
    }
    // Heaviest block-rows first; a permutation.
    std::vector<int32_t> sorted(h.order);
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < h.block_rows; ++i) ASSERT_EQ(sorted[i], i);
    for (size_t i = 1; i < h.order.size(); ++i) {
      EXPECT_GE(h.row_ptr[h.order[i - 1] + 1] - h.row_ptr[h.order[i - 1]], h.row_ptr[h.order[i] + 1] - h.row_ptr[h.order[i]]);
    }
  }
}

TEST(BsrMmaBuild, EmptyMatrixAndBadInput) {
  Csr empty;
  empty.rows = 40, empty.cols = 50;
  empty.ro.assign(41, 0);
  const BsrHost h = Build(empty, 32);
  EXPECT_EQ(h.block_rows, 2);
  EXPECT_TRUE(h.col_idx.empty());
  EXPECT_EQ(h.row_ptr, std::vector<int32_t>(3, 0));

  Csr bad = RandomBlockCsr(16, 16, 16, 1.0, 1);
  bad.ci[3] = 16;  // out of range
  BsrHost out;
  std::string why;
  EXPECT_FALSE(BuildBsr(bad.rows, bad.cols, bad.ro.data(), bad.ci.data(), bad.v.data(), 16, &out, &why));
  EXPECT_NE(why.find("out of range"), std::string::npos) << why;
}

template <int CPR>
void ExpectSwizzleBijective(int rows) {
  std::set<int> seen;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < CPR; ++c) seen.insert(SwzChunk<CPR>(r, c));
  EXPECT_EQ(seen.size(), static_cast<size_t>(rows * CPR)) << "CPR " << CPR;
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), rows * CPR - 1);
}

TEST(BsrMmaSwizzle, IsABijectionOfTheTile) {
  for (int rows : {16, 32, 64}) {
    ExpectSwizzleBijective<2>(rows);
    ExpectSwizzleBijective<4>(rows);
    ExpectSwizzleBijective<8>(rows);
    ExpectSwizzleBijective<16>(rows);
    ExpectSwizzleBijective<32>(rows);
  }
}

// ---- ldmatrix / mma.sync emulation (PTX ISA: warp-level matrix fragments, m16n8k16 .f16/.bf16) ------
using Reg = std::array<float, 2>;  // a .b32 register of two 16-bit values, lower half first
using Lanes4 = std::array<std::array<Reg, 4>, 32>;

// ldmatrix.m8n8.x{num}[.trans]: lane 8j + i gives the address of row i of matrix j; lane t receives in
// register j the elements (row t/4, columns 2(t%4), 2(t%4)+1) of matrix j, or with .trans (rows 2(t%4),
// 2(t%4)+1, column t/4). Also checks each 8-lane phase touches 8 distinct 16-byte bank groups.
Lanes4 EmuLdm(const std::vector<float>& smem, const std::array<int, 32>& addr, int num, bool trans) {
  Lanes4 out{};
  for (int j = 0; j < num; ++j) {
    std::set<int> banks;
    for (int i = 0; i < 8; ++i) {
      const int a = addr[8 * j + i];
      EXPECT_TRUE(a >= 0 && a % 8 == 0 && a + 8 <= static_cast<int>(smem.size())) << a;
      banks.insert((a / 8) % 8);
    }
    EXPECT_EQ(banks.size(), 8u) << "bank conflict in ldmatrix matrix " << j;
    for (int t = 0; t < 32; ++t)
      for (int e = 0; e < 2; ++e) {
        const int row = trans ? 2 * (t % 4) + e : t / 4, col = trans ? t / 4 : 2 * (t % 4) + e;
        out[t][j][e] = smem[addr[8 * j + row] + col];
      }
  }
  return out;
}

// mma.m16n8k16.row.col: A a0..a7 = regs 0..3: row g (+8 for regs 1, 3), col 2t + e (+8 for regs 2, 3);
// B b0..b3 = regs 0..1: row 2t + e (+8 for reg 1), col g; C c_i: row g + 8(i/2), col 2t + i%2.
void EmuMma(const Lanes4& a, const std::array<std::array<Reg, 2>, 32>& b, float (*d)[4]) {
  float A[16][16], Bm[16][8];
  for (auto& r : A) for (float& x : r) x = std::numeric_limits<float>::quiet_NaN();
  for (auto& r : Bm) for (float& x : r) x = std::numeric_limits<float>::quiet_NaN();
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < 2; ++e) A[g + 8 * (r % 2)][2 * t + e + 8 * (r / 2)] = a[l][r][e];
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < 2; ++e) Bm[2 * t + e + 8 * r][g] = b[l][r][e];
  }
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      double s = 0;
      for (int k = 0; k < 16; ++k) s += static_cast<double>(A[l / 4 + 8 * (i / 2)][k]) * Bm[k][2 * (l % 4) + i % 2];
      d[l][i] += static_cast<float>(s);
    }
}

// One CTA at a time, exactly as BsrMmaKernel<T, TL> stages, reads and stores.
template <class TL>
std::vector<float> Replay(const BsrHost& h, int64_t rows, int64_t cols, const std::vector<float>& b, int64_t n) {
  constexpr int B = TL::kBlock, CA = B / 8, CB = TL::kNt / 8, W = TL::kThreads / 32;
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  for (int64_t br = 0; br < h.block_rows; ++br) {
    for (int64_t n0 = 0; n0 < n; n0 += TL::kNt) {
      std::vector<float> acc(W * TL::kMi * TL::kNi * 32 * 4, 0.0f);
      auto at = [&](int w, int mi, int ni) { return reinterpret_cast<float(*)[4]>(&acc[((w * TL::kMi + mi) * TL::kNi + ni) * 128]); };
      for (int32_t j = h.row_ptr[br]; j < h.row_ptr[br + 1]; ++j) {
        std::vector<float> sa(TL::kAElems, NAN), sb(TL::kBElems, NAN);
        for (int i = 0; i < B * CA; ++i)
          for (int e = 0; e < 8; ++e) sa[SwzChunk<CA>(i / CA, i % CA) * 8 + e] = h.values[int64_t(j) * B * B + i * 8 + e];
        for (int i = 0; i < B * CB; ++i)
          for (int e = 0; e < 8; ++e) {
            const int64_t k = int64_t(h.col_idx[j]) * B + i / CB, col = n0 + (i % CB) * 8 + e;
            sb[SwzChunk<CB>(i / CB, i % CB) * 8 + e] = k < cols && col < n ? b[k * n + col] : 0.0f;
          }
        for (int w = 0; w < W; ++w)
          for (int kk = 0; kk < B / 16; ++kk) {
            std::vector<Lanes4> a(TL::kMi);
            std::vector<std::array<std::array<Reg, 2>, 32>> bf(TL::kNi);
            std::array<int, 32> addr;
            for (int mi = 0; mi < TL::kMi; ++mi) {
              for (int l = 0; l < 32; ++l) addr[l] = AFragOffset<TL>(w, mi, kk, l);
              a[mi] = EmuLdm(sa, addr, 4, false);
            }
            for (int ni = 0; ni + 1 < TL::kNi; ni += 2) {
              for (int l = 0; l < 32; ++l) addr[l] = BFragOffset<TL>(w, ni, kk, l);
              const Lanes4 r = EmuLdm(sb, addr, 4, true);
              for (int l = 0; l < 32; ++l) {
                const Reg regs[4] = {r[l][0], r[l][1], r[l][2], r[l][3]};
                Reg lo[2], hi[2];
                SplitX4(regs, lo, hi);  // the kernel's own register bookkeeping
                bf[ni][l] = {lo[0], lo[1]}, bf[ni + 1][l] = {hi[0], hi[1]};
              }
            }
            if (TL::kNi % 2 == 1) {
              for (int l = 0; l < 32; ++l) addr[l] = BFragOffset<TL>(w, TL::kNi - 1, kk, l & 15);
              const Lanes4 r = EmuLdm(sb, addr, 2, true);
              for (int l = 0; l < 32; ++l) bf[TL::kNi - 1][l] = {r[l][0], r[l][1]};
            }
            for (int mi = 0; mi < TL::kMi; ++mi)
              for (int ni = 0; ni < TL::kNi; ++ni) EmuMma(a[mi], bf[ni], at(w, mi, ni));
          }
      }
      for (int w = 0; w < W; ++w)
        for (int l = 0; l < 32; ++l)
          for (int mi = 0; mi < TL::kMi; ++mi)
            for (int ni = 0; ni < TL::kNi; ++ni)
              for (int hh = 0; hh < 2; ++hh) {
                int r, cc;
                AccCoord<TL>(w, l, mi, ni, hh, &r, &cc);
                const int64_t row = br * B + r, col = n0 + cc;
                if (row >= rows) continue;
                if (col < n) c[row * n + col] = at(w, mi, ni)[l][2 * hh];
                if (col + 1 < n) c[row * n + col + 1] = at(w, mi, ni)[l][2 * hh + 1];
              }
    }
  }
  return c;
}

template <class TL>
void ExpectReplayMatches(int64_t rows, int64_t cols, double keep, int64_t n) {
  SCOPED_TRACE(testing::Message() << rows << "x" << cols << " block " << TL::kBlock << " tile " << TL::kNt << " n " << n);
  const Csr m = RandomBlockCsr(rows, cols, TL::kBlock, keep, static_cast<uint32_t>(rows + 31 * cols + n));
  const BsrHost h = Build(m, TL::kBlock);
  std::mt19937 rng(static_cast<uint32_t>(n));
  std::vector<float> b(cols * n);
  for (float& x : b) x = Eighths(rng);
  const std::vector<float> c = Replay<TL>(h, rows, cols, b, n), dense = Dense(m);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t k = 0; k < cols; ++k) want += double(dense[r * cols + k]) * b[k * n + j];
      ASSERT_EQ(c[r * n + j], static_cast<float>(want)) << "C[" << r << "][" << j << "]";
    }
}

template <int BLOCK>
void ReplayAllTiles(int64_t rows, int64_t cols) {
  for (int64_t n : {1, 7, 16, 20, 130}) {
    ExpectReplayMatches<SmallTile<BLOCK>>(rows, cols, 0.5, n);
    ExpectReplayMatches<MidTile<BLOCK>>(rows, cols, 0.5, n);
    ExpectReplayMatches<BigTile<BLOCK>>(rows, cols, 0.5, n);
  }
}

// The staged epilogue: StageTile's words (warp, lane, mma tile, half) land once each where StoreStaged's
// 16-byte chunks read whole runs of 8 columns; a warp's words of one register pair hit 32 different banks.
template <class TL>
void ExpectStagedStoreIsTheTile() {
  SCOPED_TRACE(testing::Message() << "block " << TL::kBlock << " tile " << TL::kNt);
  std::vector<float> staged(TL::kBlock * TL::kCRowBytes / 2, NAN);
  std::set<int> words;
  for (int w = 0; w < TL::kThreads / 32; ++w)
    for (int t = 0; t < TL::kMi * TL::kNi * 2; ++t) {
      const int mi = t / (TL::kNi * 2), ni = (t / 2) % TL::kNi, h = t % 2;
      std::set<int> banks;
      for (int lane = 0; lane < 32; ++lane) {
        int r, cc;
        AccCoord<TL>(w, lane, mi, ni, h, &r, &cc);
        const int at = CStageOffset<TL>(r, cc);
        ASSERT_EQ(at % 4, 0);
        EXPECT_TRUE(words.insert(at).second) << "word written twice: row " << r << " col " << cc;
        banks.insert((at / 4) % 32);
        staged[at / 2] = static_cast<float>(r * 1000 + cc), staged[at / 2 + 1] = static_cast<float>(r * 1000 + cc + 1);
      }
      EXPECT_EQ(banks.size(), 32u) << "bank conflict: warp " << w << " tile " << mi << "," << ni << " half " << h;
    }
  for (int r = 0; r < TL::kBlock; ++r)
    for (int ch = 0; ch < TL::kNt / 8; ++ch) {
      ASSERT_EQ(CStageOffset<TL>(r, ch * 8) % 16, 0);
      for (int e = 0; e < 8; ++e) ASSERT_EQ(staged[CStageOffset<TL>(r, ch * 8) / 2 + e], r * 1000 + ch * 8 + e) << r << "," << ch;
    }
}

TEST(BsrMmaStagedStore, WritesWholeRowsOfEveryTile) {
  ExpectStagedStoreIsTheTile<SmallTile<16>>();
  ExpectStagedStoreIsTheTile<MidTile<32>>();
  ExpectStagedStoreIsTheTile<BigTile<16>>();
  ExpectStagedStoreIsTheTile<BigTile<32>>();
  ExpectStagedStoreIsTheTile<BigTile<64>>();
  ExpectStagedStoreIsTheTile<SmallTile<64>>();
  ExpectStagedStoreIsTheTile<MidTile<64>>();
}

// LoadStage's chunks of a tile: over the CTA's threads, chunk t of thread tid is chunk i = t * kThreads + tid of the A
// block and of the B slab, each chunk loaded once, at its swizzled place (ADst, BDst), from its own row and column
// (BRow, BCol: a thread's B chunks kRowStep rows apart in one column), and nothing past the stage.
template <class TL> void ExpectStagePlanLoadsEveryChunkOnce() {
  using Plan = StagePlan<TL>;
  SCOPED_TRACE(::testing::Message() << "tile " << TL::kBlock << "x" << TL::kNt << ", " << TL::kThreads << " threads");
  std::vector<int> a_seen(Plan::kAChunks, 0), b_seen(Plan::kBChunks, 0);
  for (int tid = 0; tid < TL::kThreads; ++tid) {
    for (int t = 0; t < Plan::kA; ++t) {
      if (!Plan::Has(Plan::kAChunks, t, tid)) continue;
      const int i = t * TL::kThreads + tid;
      ASSERT_LT(i, Plan::kAChunks);
      ++a_seen[i];
      EXPECT_EQ(Plan::ADst(t, tid), static_cast<uint32_t>(SwzChunk<TL::kBlock / 8>(i / (TL::kBlock / 8), i % (TL::kBlock / 8)) * 16));
    }
    for (int t = 0; t < Plan::kB; ++t) {
      if (!Plan::Has(Plan::kBChunks, t, tid)) continue;
      const int i = t * TL::kThreads + tid, cpr = TL::kNt / 8;
      ASSERT_LT(i, Plan::kBChunks);
      ++b_seen[i];
      EXPECT_EQ(Plan::BRow(t, tid), i / cpr) << "thread " << tid << " chunk " << t;
      EXPECT_EQ(Plan::BCol(tid), i % cpr) << "thread " << tid << " chunk " << t;
      EXPECT_EQ(Plan::BDst(t, tid), static_cast<uint32_t>(SwzChunk<TL::kNt / 8>(i / cpr, i % cpr) * 16));
    }
  }
  for (int i = 0; i < Plan::kAChunks; ++i) EXPECT_EQ(a_seen[i], 1) << "A chunk " << i;
  for (int i = 0; i < Plan::kBChunks; ++i) EXPECT_EQ(b_seen[i], 1) << "B chunk " << i;
}

TEST(BsrMmaStagePlan, LoadsEveryChunkOnceAtItsPlace) {
  ExpectStagePlanLoadsEveryChunkOnce<SmallTile<16>>();
  ExpectStagePlanLoadsEveryChunkOnce<MidTile<16>>();
  ExpectStagePlanLoadsEveryChunkOnce<BigTile<16>>();
  ExpectStagePlanLoadsEveryChunkOnce<SmallTile<32>>();
  ExpectStagePlanLoadsEveryChunkOnce<MidTile<32>>();
  ExpectStagePlanLoadsEveryChunkOnce<BigTile<32>>();
  ExpectStagePlanLoadsEveryChunkOnce<SmallTile<64>>();
  ExpectStagePlanLoadsEveryChunkOnce<MidTile<64>>();
  ExpectStagePlanLoadsEveryChunkOnce<BigTile<64>>();
  ExpectStagePlanLoadsEveryChunkOnce<Tile<16, 64, 1, 8, 3>>();  // WARPS 8
  ExpectStagePlanLoadsEveryChunkOnce<Tile<64, 256, 2, 2, 2>>();  // N_TILE 256
}

TEST(BsrMmaReplay, Block16) { ReplayAllTiles<16>(33, 70); }
TEST(BsrMmaReplay, Block32) { ReplayAllTiles<32>(65, 96); }
TEST(BsrMmaReplay, Block64) { ReplayAllTiles<64>(100, 130); }
TEST(BsrMmaReplay, OddWarpTileWidth) {  // 8 columns per warp: the ldmatrix.x2 path
  ExpectReplayMatches<Tile<16, 64, 1, 8, 3>>(20, 40, 0.7, 70);
  ExpectReplayMatches<Tile<64, 192, 2, 8, 2>>(70, 64, 0.7, 200);  // 24 columns: x4 then x2
}

}  // namespace
