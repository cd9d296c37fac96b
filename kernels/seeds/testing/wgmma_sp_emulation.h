// CPU emulation of Hopper's sparse warpgroup MMA, wgmma.mma_async.sp m64nNk32 with .f16/.bf16 operands
// from shared memory (both through matrix descriptors) and fp32 accumulators, written from the PTX ISA
// (the wgmma sections of "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"), not from any seed:
//  - descriptor (ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading dimension
//    byte offset (LBO) >> 4, 32-45 stride dimension byte offset (SBO) >> 4, 62-63 swizzle mode (1: 128 B,
//    2: 64 B, 3: 32 B); base offset (49-51) 0, so swizzle atoms sit on their natural alignment.
//  - major-ness (ISA "Shared Memory Matrix Layout"): imm-trans-b = 0 reads B K-major, 1 N-major (for A,
//    imm-trans-a = 0 K-major, the only form used here).
//  - canonical layouts for 16-bit values (same section; T = 8 values = 16 bytes, a swizzle atom is 8 rows of
//    the swizzle width): K-major with 64-/128-byte swizzle: ((8, m), (T, 2k)) : ((8T, SBO), (1, T)), i.e.
//    row r of the M/N extent at (r / 8) * SBO + (r % 8) * width, K value k at 2k bytes along it; LBO is not
//    used while the instruction's K (32 values of B, 16 compressed of A: at most 64 bytes) stays inside one
//    swizzle row. MN-major with 128-byte swizzle: ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)), i.e. 64
//    values of the M/N extent a 128-byte line, 64-value pieces LBO apart, K line k at (k / 8) * SBO +
//    (k % 8) * 128.
//  - swizzle (same section's atom figures; CUDA's CU_TENSOR_MAP_SWIZZLE_* give the same pattern): within an
//    atom, the 16-byte chunk index of an address (bits 4-6 for 128 B, 4-5 for 64 B) is XORed with its line
//    index inside the atom (bits 7-9, 7-8), a function of the full shared-memory address.
//  - sparse A (ISA "Sparse Warpgroup Level Matrix Multiply-Accumulate", metadata figure for .f16/.bf16 with
//    sparsity selector 0): threads 4g and 4g + 1 of each warp w give the metadata; bits 0-15 describe row
//    16 w + g, bits 16-31 row 16 w + g + 8; thread 4g + h covers logical K 16 h .. 16 h + 15, four bits a
//    group of four (low 2 bits: position of the first kept value, next 2: the second; increasing).
//  - D fragments (ISA "Register Fragments", m64nNk16/k32 accumulator figure): thread t, register i holds
//    row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4) + i % 2.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_WGMMA_SP_EMULATION_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_WGMMA_SP_EMULATION_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace sparseditto::seed_testing {

// Shared memory as bytes; 2-byte values of type T (__half or __nv_bfloat16; the tests' values are
// multiples of 1/8 in [-1, 1]: exact in both).
using Smem = std::vector<unsigned char>;
template <typename T> float ValueAt(const Smem& s, uint32_t addr) {
  EXPECT_TRUE(addr % 2 == 0 && addr + 2 <= s.size()) << addr;
  T x;
  std::memcpy(&x, s.data() + addr, 2);
  return static_cast<float>(x);
}
template <typename T> void PutValue(Smem& s, uint32_t addr, float v) {
  const T x = T(v);
  std::memcpy(s.data() + addr, &x, 2);
}
inline uint32_t Swz64(uint32_t a) { return a ^ (((a >> 7) & 3) << 4); }
inline uint32_t Swz128(uint32_t a) { return a ^ (((a >> 7) & 7) << 4); }
inline uint32_t DescStart(uint64_t d) { return static_cast<uint32_t>((d & 0x3FFF) << 4); }
inline uint32_t DescLbo(uint64_t d) { return static_cast<uint32_t>(((d >> 16) & 0x3FFF) << 4); }
inline uint32_t DescSbo(uint64_t d) { return static_cast<uint32_t>(((d >> 32) & 0x3FFF) << 4); }

// The logical 64 x 32 A of one wgmma.sp: compressed values (m, kc), kc < 16, K-major 64-byte swizzle at
// the descriptor, expanded to their logical K through thread t's metadata e[t].
template <typename T>
void DecodeSparseA(const Smem& s, uint64_t da, const std::array<uint32_t, 128>& e, float (*a)[32]) {
  ASSERT_EQ(da >> 62, 2u) << "A: 64-byte swizzle (the only A layout emulated)";
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < 32; ++k) a[m][k] = 0.0f;
  for (int m = 0; m < 64; ++m)
    for (int gq = 0; gq < 8; ++gq) {
      const int t = 32 * (m / 16) + 4 * (m % 8) + gq / 4;
      const uint32_t bits = (e[t] >> (16 * ((m % 16) / 8) + 4 * (gq % 4))) & 0xF;
      const int i0 = bits & 3, i1 = bits >> 2;
      ASSERT_LT(i0, i1) << "metadata of row " << m << " group " << gq << ": invalid or unordered";
      for (int x = 0; x < 2; ++x) {
        const uint32_t addr = DescStart(da) + (m / 8) * DescSbo(da) + (m % 8) * 64 + 2 * (2 * gq + x);
        a[m][4 * gq + (x ? i1 : i0)] = ValueAt<T>(s, Swz64(addr));
      }
    }
}

// B (32 x n) as the instruction reads it: 128-byte swizzle, N-major (trans_b = 1) or K-major (trans_b = 0).
template <typename T>
std::vector<float> ReadB(const Smem& s, uint64_t db, int trans_b, int n) {
  EXPECT_EQ(db >> 62, 1u) << "B: 128-byte swizzle (the only B layout emulated)";
  std::vector<float> b(32 * n);
  for (int k = 0; k < 32; ++k)
    for (int c = 0; c < n; ++c) {
      uint32_t addr;
      if (trans_b == 1) {
        addr = DescStart(db) + (c / 64) * DescLbo(db) + (k / 8) * DescSbo(db) + (k % 8) * 128 + (2 * c) % 128;
      } else {
        // The row's 32 K values must not leave the 128-byte line the start address is in (LBO unused).
        EXPECT_LE(DescStart(db) % 128 + 2 * 32, 128u) << "K-major step crosses a swizzle row";
        addr = DescStart(db) + (c / 8) * DescSbo(db) + (c % 8) * 128 + 2 * k;
      }
      b[k * n + c] = ValueAt<T>(s, Swz128(addr));
    }
  return b;
}

// d (thread t, register i as the D fragment) += A (64 x 32) * B (32 x n).
template <typename T>
void EmuWgmmaSp(const Smem& s, uint64_t da, uint64_t db, int trans_b, const std::array<uint32_t, 128>& e, int n, std::vector<float>& d) {
  static float a[64][32];
  DecodeSparseA<T>(s, da, e, a);
  const std::vector<float> b = ReadB<T>(s, db, trans_b, n);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < n / 2; ++i) {
      const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
      double acc = 0;
      for (int k = 0; k < 32; ++k) acc += double(a[row][k]) * b[k * n + col];
      d[t * (n / 2) + i] += static_cast<float>(acc);
    }
}

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_WGMMA_SP_EMULATION_H_
