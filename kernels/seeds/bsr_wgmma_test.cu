// CPU tests of the wgmma BSR seed (no GPU): BuildBsr against a dense re-expansion of the CSR input, the
// stored block images, the shared-memory layout (each operand's swizzle is the address map of wgmma's
// 128-byte mode, a bijection onto the stage), the matrix descriptors' fields, and a replay of every CTA — the kernel's own stage
// offsets, step addresses and descriptors read through wgmma's canonical 128-byte-swizzled layouts
// (PTX ISA: K-major A, MN-major B), its accumulator coordinates — against a plain product over awkward
// shapes. What the hardware does with a descriptor is checked on the GPU (evaluator correctness).
#define SD_BSR_WGMMA_HOST_TEST 1
#include "kernels/seeds/bsr_wgmma.cu"

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

BsrHost Build(const Csr& m) {
  BsrHost h;
  std::string why;
  EXPECT_TRUE(BuildBsr(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  return h;
}

TEST(BsrWgmmaBuild, ReexpandsToTheCsrMatrixWithZeroPadding) {
  struct Case { int64_t rows, cols; double keep; };
  for (const Case& c : {Case{7, 96, 1.0}, Case{65, 33, 0.7}, Case{128, 192, 0.3}, Case{1, 1, 1.0}, Case{200, 130, 0.4}}) {
    SCOPED_TRACE(testing::Message() << c.rows << "x" << c.cols);
    const Csr m = RandomBlockCsr(c.rows, c.cols, 64, c.keep, static_cast<uint32_t>(c.rows * 7 + c.cols));
    const BsrHost h = Build(m);
    const int64_t bb = 64 * 64, width = h.block_cols * 64;
    ASSERT_EQ(h.block_rows, (c.rows + 63) / 64);
    ASSERT_EQ(h.values.size(), h.col_idx.size() * bb);
    std::vector<float> back(h.block_rows * 64 * width, 0.0f);
    for (int64_t br = 0; br < h.block_rows; ++br)
      for (int32_t j = h.row_ptr[br]; j < h.row_ptr[br + 1]; ++j) {
        if (j > h.row_ptr[br]) EXPECT_LT(h.col_idx[j - 1], h.col_idx[j]);
        for (int64_t i = 0; i < bb; ++i) back[(br * 64 + i / 64) * width + h.col_idx[j] * 64 + i % 64] = h.values[j * bb + i];
      }
    const std::vector<float> dense = Dense(m);
    for (int64_t r = 0; r < h.block_rows * 64; ++r)
      for (int64_t k = 0; k < width; ++k)
        ASSERT_EQ(back[r * width + k], r < c.rows && k < c.cols ? dense[r * c.cols + k] : 0.0f) << r << "," << k;
    for (size_t i = 1; i < h.order.size(); ++i)  // heaviest block-rows first
      EXPECT_GE(h.row_ptr[h.order[i - 1] + 1] - h.row_ptr[h.order[i - 1]], h.row_ptr[h.order[i] + 1] - h.row_ptr[h.order[i]]);
    ASSERT_EQ(h.runs.size(), 4 * h.order.size());  // a CTA row's run record: the same block-row, its blocks
    for (size_t i = 0; i < h.order.size(); ++i) {
      const int32_t br = h.order[i];
      EXPECT_EQ(h.runs[4 * i], br);
      EXPECT_EQ(h.runs[4 * i + 1], h.row_ptr[br]);
      EXPECT_EQ(h.runs[4 * i + 2], h.row_ptr[br + 1] - h.row_ptr[br]);
    }
  }
}

TEST(BsrWgmmaBuild, WideTileOnlyForLongBlockRows) {
  static_assert(WIDE_MIN_BLOCKS > 0, "the shipped default uses the wide tile somewhere");
  EXPECT_TRUE(LongBlockRows(int64_t(WIDE_MIN_BLOCKS) * 64, 64));
  EXPECT_FALSE(LongBlockRows(int64_t(WIDE_MIN_BLOCKS) * 64 - 1, 64));
  EXPECT_FALSE(LongBlockRows(0, 64));
}

TEST(BsrWgmmaBuild, TileChoice) {
  static_assert(SMALL_N_MAX < 128 && WIDE_MIN_N > 128 && DEEP_STAGES > STAGES, "the shipped defaults reach every instance");
  const int64_t col_tiles = (WIDE_MIN_N + BigTile::kNt - 1) / BigTile::kNt;  // N_TILE-column tiles at n = WIDE_MIN_N
  struct Case { int64_t n, block_rows; bool wide; int64_t deep_slots; TileKind want; };
  const Case cases[] = {
      {1, 64, true, 1000, TileKind::kSmall},
      {SMALL_N_MAX, 172, false, 0, TileKind::kSmall},
      {SMALL_N_MAX + 1, 64, false, 64, TileKind::kDeep},   // 64 CTAs, 64 slots
      {SMALL_N_MAX + 1, 65, false, 64, TileKind::kBig},    // one CTA more than a wave
      {128, 128, false, 264, TileKind::kDeep},
      {129, 128, false, 255, TileKind::kBig},              // 256 CTAs
      {WIDE_MIN_N, 64, true, 1 << 20, TileKind::kWide},     // long block-rows take the wide tile first
      {WIDE_MIN_N, 64, false, 64 * col_tiles, TileKind::kDeep},
      {WIDE_MIN_N, 64, false, 64 * col_tiles - 1, TileKind::kBig},
      {WIDE_MIN_N - 1, 64, true, 0, TileKind::kBig},
  };
  for (const Case& c : cases)
    EXPECT_EQ(static_cast<int>(ChooseTile(c.n, c.block_rows, c.wide, c.deep_slots)), static_cast<int>(c.want))
        << "n " << c.n << ", block-rows " << c.block_rows << ", wide " << c.wide << ", slots " << c.deep_slots;
}

TEST(BsrWgmmaBuild, LongestFirstGridOnlyForFewWavesAndEveryTileOnce) {
  static_assert(LPT_MAX_WAVES > 0, "the shipped default uses the 1-D grid somewhere");
  EXPECT_TRUE(UseLpt(int64_t(LPT_MAX_WAVES) * 396, 396));
  EXPECT_FALSE(UseLpt(int64_t(LPT_MAX_WAVES) * 396 + 1, 396));
  EXPECT_FALSE(UseLpt(1, 0)) << "no occupancy known: the 2-D grid";
  for (int tiles : {1, 3, 16}) {  // the 1-D grid: ranks in order, each rank's column tiles together
    std::vector<int> seen(5 * tiles, 0);
    int last_rank = 0;
    for (int x = 0; x < 5 * tiles; ++x) {
      const GridTile at = GridTileOf(x, 0, tiles);
      ASSERT_TRUE(at.rank >= 0 && at.rank < 5 && at.column_tile >= 0 && at.column_tile < tiles) << x;
      EXPECT_GE(at.rank, last_rank) << "heaviest block-rows first";
      last_rank = at.rank;
      ++seen[at.rank * tiles + at.column_tile];
    }
    for (int v : seen) EXPECT_EQ(v, 1);
  }
  const GridTile two_d = GridTileOf(7, 3, 0);
  EXPECT_EQ(two_d.rank, 7);
  EXPECT_EQ(two_d.column_tile, 3);
}

TEST(BsrWgmmaBuild, BadInputNamesWhere) {
  Csr bad = RandomBlockCsr(16, 70, 64, 1.0, 1);
  bad.ci[3] = 70;
  BsrHost out;
  std::string why;
  EXPECT_FALSE(BuildBsr(bad.rows, bad.cols, bad.ro.data(), bad.ci.data(), bad.v.data(), &out, &why));
  EXPECT_NE(why.find("out of range at entry 3"), std::string::npos) << why;
}

// wgmma's 128-byte swizzle on a 1 KB-aligned region: byte address bits [4:6] ^= bits [7:9].
int Swizzle128(int linear) { return linear ^ (((linear >> 7) & 7) << 4); }

TEST(BsrWgmmaLayout, OperandsAreTheSwizzledAddressMapAndFillTheStage) {
  std::set<int> a_bytes, b_bytes;
  for (int row = 0; row < 64; ++row)
    for (int k = 0; k < 64; ++k) {
      EXPECT_EQ(AOffset(row, k), Swizzle128(row * 128 + k * 2));
      a_bytes.insert(AOffset(row, k));
    }
  EXPECT_EQ(a_bytes.size(), 4096u);
  EXPECT_EQ(*a_bytes.rbegin(), kABytes - 2);
  for (int k = 0; k < 64; ++k)
    for (int col = 0; col < BigTile::kNt; ++col) {
      EXPECT_EQ(BOffset(k, col), (col / 64) * kBAtomBytes + Swizzle128(k * 128 + (col % 64) * 2));
      b_bytes.insert(BOffset(k, col));
    }
  EXPECT_EQ(b_bytes.size(), static_cast<size_t>(64 * BigTile::kNt));
  EXPECT_EQ(*b_bytes.rbegin(), BigTile::kBBytes - 2);
  EXPECT_EQ(BigTile::kStageBytes % 1024, 0) << "every stage's atoms stay 1 KB aligned";
}

TEST(BsrWgmmaLayout, StoredBlocksAreTheirSharedMemoryImage) {
  std::vector<float> plain(2 * 4096);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<float>(i);
  const std::vector<float> image = SwizzleBlocks(plain);
  ASSERT_EQ(image.size(), plain.size());
  for (int blk = 0; blk < 2; ++blk)
    for (int row = 0; row < 64; ++row)
      for (int k = 0; k < 64; ++k) ASSERT_EQ(image[blk * 4096 + AOffset(row, k) / 2], plain[blk * 4096 + row * 64 + k]) << row << "," << k;
}

TEST(BsrWgmmaLayout, DescriptorFields) {
  const uint64_t d = Descriptor(0x12340);
  EXPECT_EQ(d & 0x3FFF, 0x12340u >> 4);           // start address, 16-byte units
  EXPECT_EQ((d >> 16) & 0x3FFF, static_cast<uint64_t>(kAtomBytes) >> 4);  // leading byte offset
  EXPECT_EQ((d >> 32) & 0x3FFF, static_cast<uint64_t>(kAtomBytes) >> 4);  // stride byte offset: 8-line groups
  EXPECT_EQ((d >> 49) & 7, 0u);                   // base offset: atoms are 1 KB aligned
  EXPECT_EQ(d >> 62, 1u);                         // 128-byte swizzle
}

// The TMA kernel's epilogue: StageTile's words (thread t, registers i, i + 1 of piece q of warpgroup wg)
// land once each where StoreStaged's 16-byte chunks read whole runs of 8 columns; a warp's words hit 32
// different banks.
template <class TL>
void ExpectStagedStoreIsTheTile() {
  std::vector<float> staged(kBlock * TL::kCRowBytes / 2, NAN);
  std::set<int> words;
  constexpr int kWarpgroups = TL::kThreads / 128;
  for (int wg = 0; wg < kWarpgroups; ++wg)
    for (int q = 0; q < TL::kPieces; ++q)
      for (int i = 0; i < 32; i += 2) {
        for (int warp = 0; warp < 4; ++warp) {
          std::set<int> banks;
          for (int lane = 0; lane < 32; ++lane) {
            const int t = 32 * warp + lane;
            int r, cc;
            AccCoord(t, i, &r, &cc);
            const int col = (wg * TL::kPieces + q) * 64 + cc, at = CStageOffset<TL>(r, col);
            ASSERT_EQ(at % 4, 0);
            EXPECT_TRUE(words.insert(at).second) << "word written twice: row " << r << " col " << col;
            banks.insert((at / 4) % 32);
            staged[at / 2] = static_cast<float>(r * 1000 + col), staged[at / 2 + 1] = static_cast<float>(r * 1000 + col + 1);
          }
          EXPECT_EQ(banks.size(), 32u) << "bank conflict: warpgroup " << wg << " piece " << q << " register " << i;
        }
      }
  for (int r = 0; r < kBlock; ++r)
    for (int ch = 0; ch < TL::kNt / 8; ++ch) {
      ASSERT_EQ(CStageOffset<TL>(r, ch * 8) % 16, 0);
      for (int e = 0; e < 8; ++e) ASSERT_EQ(staged[CStageOffset<TL>(r, ch * 8) / 2 + e], r * 1000 + ch * 8 + e) << r << "," << ch;
    }
}

TEST(BsrWgmmaLayout, StagedStoreWritesWholeRowsOfTheTile) {
  ExpectStagedStoreIsTheTile<BigTile>();
  ExpectStagedStoreIsTheTile<SmallTile>();
  ExpectStagedStoreIsTheTile<WideTile>();
  ExpectStagedStoreIsTheTile<DeepTile>();
  ExpectStagedStoreIsTheTile<Tile<256, 1, 3>>();
}

// Value at shared byte address `addr` of a stage image (2-byte elements stored as floats by address / 2).
float At(const std::vector<float>& smem, int addr) {
  EXPECT_TRUE(addr >= 0 && addr % 2 == 0 && addr / 2 < static_cast<int>(smem.size())) << addr;
  return smem[addr / 2];
}
// wgmma.m64n64k16 with A K-major and B MN-major (imm-trans-b = 1), both 128-byte swizzled, read through
// the descriptors' fields: A(m, k) at start + (m / 8) * SBO + (m % 8) * 128 + 2k; B(k, n) at start +
// (n / 64) * LBO + (k / 8) * SBO + (k % 8) * 128 + 2n % 128; the swizzle applied to the absolute address.
// D fragment: thread t, register i holds (16 (t/32) + (t%32)/4 + 8 ((i/2)%2), 8 (i/4) + 2 (t%4) + i%2).
void EmuWgmmaN64(const std::vector<float>& smem, uint64_t da, uint64_t db, std::vector<float>& d /* 128 x 32 */) {
  const auto start = [](uint64_t x) { return static_cast<int>((x & 0x3FFF) << 4); };
  const auto lbo = [](uint64_t x) { return static_cast<int>(((x >> 16) & 0x3FFF) << 4); };
  const auto sbo = [](uint64_t x) { return static_cast<int>(((x >> 32) & 0x3FFF) << 4); };
  float A[64][16], Bm[16][64];
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < 16; ++k) A[m][k] = At(smem, Swizzle128(start(da) + (m / 8) * sbo(da) + (m % 8) * 128 + 2 * k));
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 64; ++n)
      Bm[k][n] = At(smem, Swizzle128(start(db) + (n / 64) * lbo(db) + (k / 8) * sbo(db) + (k % 8) * 128 + (2 * n) % 128));
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 32; ++i) {
      const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
      double s = 0;
      for (int k = 0; k < 16; ++k) s += double(A[row][k]) * Bm[k][col];
      d[t * 32 + i] += static_cast<float>(s);
    }
}

// Every CTA of BsrWgmmaKernel<T, TL>: the stage image built with the kernel's offsets, the steps and
// pieces its ComputeBlock issues, its store coordinates.
template <class TL>
std::vector<float> Replay(const BsrHost& h, int64_t rows, int64_t cols, const std::vector<float>& b, int64_t n) {
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  const std::vector<float> image = SwizzleBlocks(h.values);  // what prepare uploads
  constexpr int kWarpgroups = TL::kThreads / 128;
  for (int64_t br = 0; br < h.block_rows; ++br) {
    for (int64_t n0 = 0; n0 < n; n0 += TL::kNt) {
      std::vector<float> acc(kWarpgroups * TL::kPieces * 128 * 32, 0.0f);
      for (int32_t j = h.row_ptr[br]; j < h.row_ptr[br + 1]; ++j) {
        std::vector<float> stage(TL::kStageBytes / 2, NAN);
        std::copy(image.begin() + int64_t(j) * 4096, image.begin() + int64_t(j + 1) * 4096, stage.begin());  // LoadABlock / BulkCopy
        for (int r = 0; r < 64; ++r)
          for (int col = 0; col < TL::kNt; ++col) {
            const int64_t k = int64_t(h.col_idx[j]) * 64 + r, cn = n0 + col;
            stage[(kABytes + BOffset(r, col)) / 2] = k < cols && cn < n ? b[k * n + cn] : 0.0f;
          }
        for (int wg = 0; wg < kWarpgroups; ++wg)
          for (int s = 0; s < 4; ++s)
            for (int q = 0; q < TL::kPieces; ++q) {
              std::vector<float> piece(acc.begin() + (wg * TL::kPieces + q) * 4096, acc.begin() + (wg * TL::kPieces + q + 1) * 4096);
              EmuWgmmaN64(stage, Descriptor(AStepAddress(0, s)), Descriptor(BStepAddress(kABytes, wg * TL::kPieces + q, s)), piece);
              std::copy(piece.begin(), piece.end(), acc.begin() + (wg * TL::kPieces + q) * 4096);
            }
      }
      for (int wg = 0; wg < kWarpgroups; ++wg)
        for (int q = 0; q < TL::kPieces; ++q)
          for (int t = 0; t < 128; ++t)
            for (int i = 0; i < 32; ++i) {
              int r, cc;
              AccCoord(t, i, &r, &cc);
              const int64_t row = br * 64 + r, col = n0 + (wg * TL::kPieces + q) * 64 + cc;
              if (row < rows && col < n) c[row * n + col] = acc[(wg * TL::kPieces + q) * 4096 + t * 32 + i];
            }
    }
  }
  return c;
}

template <class TL>
void ExpectReplayMatches(int64_t rows, int64_t cols, double keep, int64_t n) {
  SCOPED_TRACE(testing::Message() << rows << "x" << cols << " tile " << TL::kNt << " threads " << TL::kThreads << " n " << n);
  const Csr m = RandomBlockCsr(rows, cols, 64, keep, static_cast<uint32_t>(rows + 31 * cols + n));
  const BsrHost h = Build(m);
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

TEST(BsrWgmmaReplay, SmallTile) {
  for (int64_t n : {1, 7, 40, 64}) ExpectReplayMatches<SmallTile>(100, 130, 0.5, n);
}
TEST(BsrWgmmaReplay, BigTileAndTheOtherSplits) {
  for (int64_t n : {70, 130, 300}) ExpectReplayMatches<BigTile>(70, 150, 0.5, n);
  for (int64_t n : {65, 300}) ExpectReplayMatches<WideTile>(130, 200, 0.6, n);
  for (int64_t n : {100, 129}) ExpectReplayMatches<DeepTile>(70, 330, 0.4, n);
  ExpectReplayMatches<Tile<128, 1, 3>>(65, 64, 0.7, 200);
  ExpectReplayMatches<Tile<256, 1, 3>>(7, 96, 1.0, 257);
  ExpectReplayMatches<Tile<128, 2, 3>>(130, 40, 0.6, 129);
}

}  // namespace
