// CPU tests of the 2:4 seed (no GPU, no CUDA runtime calls): BuildNm24's compressed values + metadata
// re-expanded by a decoder written from the PTX ISA definition of mma.sp m16n8k32 (.f16/.bf16, sparsity
// selector 0) and compared with the CSR input; the split-K plan; and a replay of the kernel's data flow
// (its load order, fragment offsets, accumulator coordinates) through emulated ldmatrix.trans and
// mma.sp against a plain product, for every tile instance, split-K, awkward shapes and n.
#include "kernels/seeds/nm24_mma_sp.cu"

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace {

struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> ro{0}, ci;
  std::vector<float> v;
};

float Eighths(std::mt19937& rng) {  // nonzero multiples of 1/8 in [-1, 1]: products and sums stay exact
  const int x = static_cast<int>(rng() % 16) - 8;
  return (x == 0 ? 3 : x) / 8.0f;
}

// At most two nonzeros in every aligned group of four; mixes 2:4, 1:4 (including a lone value at
// position 3) and empty groups, plus empty rows.
Csr RandomNmCsr(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  Csr m;
  m.rows = rows, m.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    if (r % 5 != 3) {
      for (int64_t g = 0; g < cols; g += 4) {
        const int width = static_cast<int>(std::min<int64_t>(4, cols - g)), kind = static_cast<int>(rng() % 6);
        int keep[4] = {0, 0, 0, 0};
        if (kind <= 2) {  // two of four
          const int a = static_cast<int>(rng() % 4);
          const int b = (a + 1 + static_cast<int>(rng() % 3)) % 4;
          keep[a] = keep[b] = 1;
        } else if (kind == 3) {
          keep[rng() % 4] = 1;
        } else if (kind == 4) {
          keep[3] = 1;
        }
        for (int i = 0; i < width; ++i)
          if (keep[i]) m.ci.push_back(static_cast<int32_t>(g + i)), m.v.push_back(Eighths(rng));
      }
    }
    m.ro.push_back(static_cast<int32_t>(m.ci.size()));
  }
  return m;
}

std::vector<float> Dense(const Csr& m) {
  std::vector<float> d(m.rows * m.cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.ro[r]; e < m.ro[r + 1]; ++e) d[r * m.cols + m.ci[e]] = m.v[e];
  return d;
}

Nm24Host Build(const Csr& m) {
  Nm24Host h;
  std::string why;
  EXPECT_TRUE(BuildNm24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  return h;
}

using Reg = std::array<float, 2>;  // a .b32 register of two 16-bit values, lower half first
using Lanes4 = std::array<std::array<Reg, 4>, 32>;

// mma.sp m16n8k32 (.f16/.bf16) operand A as the hardware reads it, sparsity selector 0. Values: lane
// 4g + t holds registers a0..a3 = compressed (row g, cols 2t, 2t+1), (row g+8, same), (row g, cols 2t+8,
// 2t+9), (row g+8, same) of the 16x16 compressed tile (the m16n8k16 A layout). Metadata: lanes with
// t = 0, 1 hold it; bits 0-15 describe row g, bits 16-31 row g+8; lane t = 0 the logical columns 0-15
// (compressed 0-7), t = 1 columns 16-31 (compressed 8-15); 4 bits per 4-column chunk j (bits 4j..4j+3):
// low 2 bits the position of compressed value 2j of that half, next 2 bits of value 2j+1, increasing.
void DecodeA(const Lanes4& a, const std::array<uint32_t, 32>& e, float (*out)[32]) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 32; ++c) out[r][c] = 0.0f;
  for (int r = 0; r < 16; ++r) {
    const int g = r % 8, hi = r / 8;
    for (int half = 0; half < 2; ++half) {
      const uint32_t bits = (e[4 * g + half] >> (16 * hi)) & 0xFFFFu;
      for (int j = 0; j < 4; ++j) {
        const int i0 = (bits >> (4 * j)) & 3, i1 = (bits >> (4 * j + 2)) & 3;
        EXPECT_LT(i0, i1) << "ordered metadata needs increasing indices (row " << r << ")";
        for (int slot = 0; slot < 2; ++slot) {
          const int cc = 8 * half + 2 * j + slot, lane = 4 * g + (cc % 8) / 2, reg = hi + 2 * (cc / 8);
          out[r][16 * half + 4 * j + (slot ? i1 : i0)] = a[lane][reg][cc % 2];
        }
      }
    }
  }
}

// What the kernel hands mma.sp for tile (mt, kc): a lane's 16 bytes and its metadata word.
void TileOperands(const Nm24Host& h, int64_t mt, int64_t kc, Lanes4* a, std::array<uint32_t, 32>* e) {
  const int64_t kchunks = h.kp / 32;
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r)
      for (int x = 0; x < 2; ++x) (*a)[l][r][x] = h.vals[ValTile(mt, kc, kchunks) + l * 8 + r * 2 + x];
    (*e)[l] = h.meta[MetaRecord(mt, kc / 2, kchunks / 2) + MetaLaneWord(l) + kc % 2];
  }
}

TEST(Nm24Build, ReexpandsToTheCsrMatrix) {
  struct Case { int64_t rows, cols; };
  for (const Case& c : {Case{7, 96}, Case{65, 36}, Case{33, 200}, Case{1, 4}, Case{16, 32}, Case{130, 68}, Case{3, 6}}) {
    SCOPED_TRACE(testing::Message() << c.rows << "x" << c.cols);
    const Csr m = RandomNmCsr(c.rows, c.cols, static_cast<uint32_t>(c.rows * 13 + c.cols));
    const Nm24Host h = Build(m);
    ASSERT_EQ(h.mp % 128, 0);
    ASSERT_EQ(h.kp % 64, 0);
    ASSERT_GE(h.mp, c.rows);
    ASSERT_GE(h.kp, c.cols);
    const std::vector<float> dense = Dense(m);
    for (int64_t mt = 0; mt < h.mp / 16; ++mt)
      for (int64_t kc = 0; kc < h.kp / 32; ++kc) {
        Lanes4 a;
        std::array<uint32_t, 32> e;
        TileOperands(h, mt, kc, &a, &e);
        float tile[16][32];
        DecodeA(a, e, tile);
        for (int r = 0; r < 16; ++r)
          for (int k = 0; k < 32; ++k) {
            const int64_t row = mt * 16 + r, col = kc * 32 + k;
            const float want = row < c.rows && col < c.cols ? dense[row * c.cols + col] : 0.0f;
            ASSERT_EQ(tile[r][k], want) << "A[" << row << "][" << col << "]";
          }
      }
  }
}

TEST(Nm24Build, RefusesThreeNonzerosInAGroup) {
  Csr m;
  m.rows = 2, m.cols = 8;
  m.ci = {0, 1, 2, 5};
  m.v = {1, 1, 1, 1};
  m.ro = {0, 3, 4};
  Nm24Host h;
  std::string why;
  EXPECT_FALSE(BuildNm24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("more than 2"), std::string::npos) << why;
  m.v = {1, 0, 1, 1};  // an explicit zero does not count
  EXPECT_TRUE(BuildNm24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
}

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

// ldmatrix.m8n8.x{num}.trans: lane 8j + i gives row i of matrix j; lane t gets in register j the elements
// (rows 2(t%4), 2(t%4)+1, column t/4). Also checks each 8-lane phase hits 8 distinct 16-byte bank groups.
Lanes4 EmuLdmTrans(const std::vector<float>& smem, const std::array<int, 32>& addr) {
  Lanes4 out{};
  for (int j = 0; j < 4; ++j) {
    std::set<int> banks;
    for (int i = 0; i < 8; ++i) {
      EXPECT_TRUE(addr[8 * j + i] >= 0 && addr[8 * j + i] % 8 == 0 && addr[8 * j + i] + 8 <= int(smem.size()));
      banks.insert((addr[8 * j + i] / 8) % 8);
    }
    EXPECT_EQ(banks.size(), 8u) << "bank conflict in ldmatrix matrix " << j;
    for (int t = 0; t < 32; ++t)
      for (int e = 0; e < 2; ++e) out[t][j][e] = smem[addr[8 * j + 2 * (t % 4) + e] + t / 4];
  }
  return out;
}

// mma.sp m16n8k32: D(16x8) += A(16x32, decoded as above) * B(32x8); B register r of lane 4g + t holds
// (rows 2t, 2t+1) + 8r, column g; D c_i: row g + 8(i/2), column 2t + i%2.
void EmuMmaSp(const Lanes4& a, const std::array<uint32_t, 32>& e, const Lanes4& b, float* d /*[32][4]*/) {
  float A[16][32], B[32][8];
  DecodeA(a, e, A);
  for (auto& r : B) for (float& x : r) x = std::numeric_limits<float>::quiet_NaN();
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 4; ++r)
      for (int x = 0; x < 2; ++x) B[2 * (l % 4) + x + 8 * r][l / 4] = b[l][r][x];
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      double s = 0;
      for (int k = 0; k < 32; ++k) s += double(A[l / 4 + 8 * (i / 2)][k]) * B[k][2 * (l % 4) + i % 2];
      d[l * 4 + i] += static_cast<float>(s);
    }
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
  std::mt19937 rng(static_cast<uint32_t>(n * 3 + 1));
  std::vector<float> b(cols * n);
  for (float& x : b) x = Eighths(rng);
  const std::vector<float> c = Replay<TL>(h, b, n, plan), dense = Dense(m);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t k = 0; k < cols; ++k) want += double(dense[r * cols + k]) * b[k * n + j];
      ASSERT_EQ(c[r * n + j], static_cast<float>(want)) << "C[" << r << "][" << j << "]";
    }
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

}  // namespace
