// CPU emulation shared by the tensor-core stream seeds' tests (nm24_mma_sp, nm24_stream_sp, u14_stream_sp,
// dense_stream): test matrices (2:4 and any density), and the mma.sp m16n8k32 operand A and ldmatrix (plain and
// .trans) as the PTX ISA defines them.
// nm24_layout_checks.h adds the checks of the 2:4 compressed layout.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_EMULATION_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_EMULATION_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sparseditto::seed_testing {

struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> ro{0}, ci;
  std::vector<float> v;
};

inline float Eighths(std::mt19937& rng) {  // nonzero multiples of 1/8 in [-1, 1]: products and sums stay exact
  const int x = static_cast<int>(rng() % 16) - 8;
  return (x == 0 ? 3 : x) / 8.0f;
}

// At most two nonzeros in every aligned group of four; mixes 2:4, 1:4 (including a lone value at
// position 3) and empty groups, plus empty rows.
inline Csr RandomNmCsr(int64_t rows, int64_t cols, uint32_t seed) {
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

// Each element nonzero with probability `density`; row 0 dense, row 2 empty (when they exist).
inline Csr RandomCsr(int64_t rows, int64_t cols, double density, uint32_t seed) {
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

inline std::vector<float> Dense(const Csr& m) {
  std::vector<float> d(m.rows * m.cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.ro[r]; e < m.ro[r + 1]; ++e) d[r * m.cols + m.ci[e]] = m.v[e];
  return d;
}

using Reg = std::array<float, 2>;  // a .b32 register of two 16-bit values, lower half first
using Lanes4 = std::array<std::array<Reg, 4>, 32>;

// mma.sp m16n8k32 (.f16/.bf16) operand A as the hardware reads it, sparsity selector 0. Values: lane
// 4g + t holds registers a0..a3 = compressed (row g, cols 2t, 2t+1), (row g+8, same), (row g, cols 2t+8,
// 2t+9), (row g+8, same) of the 16x16 compressed tile (the m16n8k16 A layout). Metadata: lanes with
// t = 0, 1 hold it; bits 0-15 describe row g, bits 16-31 row g+8; lane t = 0 the logical columns 0-15
// (compressed 0-7), t = 1 columns 16-31 (compressed 8-15); 4 bits per 4-column chunk j (bits 4j..4j+3):
// low 2 bits the position of compressed value 2j of that half, next 2 bits of value 2j+1, increasing.
inline void DecodeA(const Lanes4& a, const std::array<uint32_t, 32>& e, float (*out)[32]) {
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

// The eight row addresses of ldmatrix matrix j (lanes 8j .. 8j + 7): 16-byte aligned, inside `smem`, and in
// eight distinct 16-byte bank groups (no bank conflict).
inline void ExpectLdmRows(const std::vector<float>& smem, const std::array<int, 32>& addr, int j) {
  std::set<int> banks;
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(addr[8 * j + i] >= 0 && addr[8 * j + i] % 8 == 0 && addr[8 * j + i] + 8 <= int(smem.size()));
    banks.insert((addr[8 * j + i] / 8) % 8);
  }
  EXPECT_EQ(banks.size(), 8u) << "bank conflict in ldmatrix matrix " << j;
}
// ldmatrix.m8n8.x{num}.trans: lane 8j + i gives row i of matrix j; lane t gets in register j the elements
// (rows 2(t%4), 2(t%4)+1, column t/4). Also checks each 8-lane phase hits 8 distinct 16-byte bank groups.
inline Lanes4 EmuLdmTrans(const std::vector<float>& smem, const std::array<int, 32>& addr) {
  Lanes4 out{};
  for (int j = 0; j < 4; ++j) {
    ExpectLdmRows(smem, addr, j);
    for (int t = 0; t < 32; ++t)
      for (int e = 0; e < 2; ++e) out[t][j][e] = smem[addr[8 * j + 2 * (t % 4) + e] + t / 4];
  }
  return out;
}

// ldmatrix.m8n8.x4 (not transposed): lane 8j + i gives row i of matrix j; lane t gets in register j the elements
// (row t/4, columns 2(t%4), 2(t%4)+1). Also checks each 8-lane phase hits 8 distinct 16-byte bank groups.
inline Lanes4 EmuLdm(const std::vector<float>& smem, const std::array<int, 32>& addr) {
  Lanes4 out{};
  for (int j = 0; j < 4; ++j) {
    ExpectLdmRows(smem, addr, j);
    for (int t = 0; t < 32; ++t)
      for (int e = 0; e < 2; ++e) out[t][j][e] = smem[addr[8 * j + t / 4] + 2 * (t % 4) + e];
  }
  return out;
}

// mma.sp m16n8k32: D(16x8) += A(16x32, decoded as above) * B(32x8); B register r of lane 4g + t holds
// (rows 2t, 2t+1) + 8r, column g; D c_i: row g + 8(i/2), column 2t + i%2.
inline void EmuMmaSp(const Lanes4& a, const std::array<uint32_t, 32>& e, const Lanes4& b, float* d /*[32][4]*/) {
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

// B (cols x n) of exact test values.
inline std::vector<float> RandomB(int64_t cols, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> b(cols * n);
  for (float& x : b) x = Eighths(rng);
  return b;
}

// c == m * b exactly (the test values keep every product and sum exact), element by element.
inline void ExpectPlainProduct(const Csr& m, const std::vector<float>& b, int64_t n, const std::vector<float>& c) {
  const std::vector<float> dense = Dense(m);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t k = 0; k < m.cols; ++k) want += double(dense[r * m.cols + k]) * b[k * n + j];
      ASSERT_EQ(c[r * n + j], static_cast<float>(want)) << "C[" << r << "][" << j << "]";
    }
}

// The streamed sparse-tensor-core seeds' cluster epilogue. A warp's accumulators acc[ni * 128 + lane * 4 + i]
// (n8 tile ni, mma.sp accumulator i) go to red[(slot * 32 + lane) * 8 + ni * 4 + i], slot = split * warps + warp;
// then each row tile's partials are summed in rank order and stored where the kernel's StoreTile puts them:
// row (group * warps + warp) * 16 + lane / 4 + 8 (i / 2), column n0 + 8 ni + 2 (lane % 4) + i % 2.
// The B slab of K tiles kt0 .. kt0 + count - 1 (64 rows each) and columns n0 .. n0 + 15 as the kernels'
// LoadBSlab lays it out: 16-byte chunk c of slab row r at chunk(r, c) * 8 elements; zero outside K x n.
inline std::vector<float> FillSlab(const std::vector<float>& b, int64_t cols, int64_t n, int64_t kt0, int count, int64_t n0,
                                   int (*chunk)(int, int)) {
  std::vector<float> sb(count * 64 * 16, std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < count * 64 * 2; ++i)
    for (int x = 0; x < 8; ++x) {
      const int64_t k = kt0 * 64 + i / 2, col = n0 + (i % 2) * 8 + x;
      sb[chunk(i / 2, i % 2) * 8 + x] = k < cols && col < n ? b[k * n + col] : 0.0f;
    }
  return sb;
}
// The NK slab (B given as X = B^T, n x K row-major) of K tiles kt0 .. kt0 + count - 1 and X rows n0 .. n0 + 15,
// written as the kernels' LoadBSlab<kNk> loop writes it: thread slot i is X row i / (8 count), 16-byte chunk
// c = i % (8 count) of the split's K range, at element offset(c / 8, row, c % 8); zero outside n x K. Every
// element of the slab is written exactly once (checked).
inline std::vector<float> FillNkSlab(const std::vector<float>& x, int64_t cols, int64_t n, int64_t kt0, int count, int64_t n0,
                                     int (*offset)(int, int, int)) {
  std::vector<float> sb(count * 64 * 16, std::numeric_limits<float>::quiet_NaN());
  std::vector<int> writes(sb.size(), 0);
  for (int i = 0; i < count * 64 * 2; ++i) {
    const int r = i / (count * 8), c = i % (count * 8);
    const int64_t row = n0 + r, k = kt0 * 64 + c * 8;
    const int at = offset(c >> 3, r, c & 7);
    for (int e = 0; e < 8; ++e) {
      EXPECT_TRUE(at + e >= 0 && at + e < int(sb.size()));
      if (at + e < 0 || at + e >= int(sb.size())) return sb;
      sb[at + e] = row < n && k + e < cols ? x[row * cols + k + e] : 0.0f;
      ++writes[at + e];
    }
  }
  for (size_t i = 0; i < sb.size(); ++i) EXPECT_EQ(writes[i], 1) << "NK slab element " << i;
  return sb;
}
// X = B^T: B is cols x n row-major, X n x cols.
inline std::vector<float> Transposed(const std::vector<float>& b, int64_t cols, int64_t n) {
  std::vector<float> x(b.size());
  for (int64_t k = 0; k < cols; ++k)
    for (int64_t j = 0; j < n; ++j) x[j * cols + k] = b[k * n + j];
  return x;
}
inline void StoreWarpPartial(const std::vector<float>& acc, int slot, std::vector<float>* red) {
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 8; ++i) (*red)[(slot * 32 + l) * 8 + i] = acc[(i / 4) * 128 + l * 4 + i % 4];
}
inline void ClusterSumAndStore(const std::vector<float>& red, int splits, int warps, int64_t group, int64_t n0, int64_t rows,
                               int64_t n, std::vector<float>* c) {
  for (int warp = 0; warp < warps; ++warp)
    for (int l = 0; l < 32; ++l)
      for (int ni = 0; ni < 2; ++ni)
        for (int i = 0; i < 4; ++i) {
          float sum = 0.0f;
          for (int s = 0; s < splits; ++s) sum += red[((s * warps + warp) * 32 + l) * 8 + ni * 4 + i];
          const int64_t row = (group * warps + warp) * 16 + l / 4 + 8 * (i / 2), col = n0 + ni * 8 + 2 * (l % 4) + i % 2;
          if (row < rows && col < n) (*c)[row * n + col] = sum;
        }
}

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_EMULATION_H_
