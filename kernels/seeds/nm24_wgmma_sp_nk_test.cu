// CPU tests of the wgmma.sp 2:4 seed's NK layout (PyTorch's Linear: X = B^T, n x K row-major, in; Y = C^T,
// n x M row-major, out), no GPU: X's slab (thread copy) lies where the tensor copy lands it; the K-major B
// descriptor and imm-trans-b read it back as B through the PTX ISA's rules (testing/wgmma_sp_emulation.h
// says which rule came from where); the transposed staged store; which transport run picks; and a replay of
// every CTA of both transports, fp16 and bf16, against a plain product on awkward shapes.
// What the hardware does with a descriptor is only checked on the GPU (nm24_wgmma_sp_nk_gpu_check.sh).
#define SD_NM24_WGMMA_SP_HOST_TEST 1
#include "kernels/seeds/nm24_wgmma_sp.cu"

#include <random>
#include <set>

#include "gtest/gtest.h"
#include "kernels/seeds/testing/nm24_emulation.h"
#include "kernels/seeds/testing/nm24_wgmma_replay.h"
#include "kernels/seeds/testing/wgmma_sp_emulation.h"

namespace {

using sparseditto::seed_testing::DescSbo;
using sparseditto::seed_testing::DescStart;

TEST(Nm24WgmmaSpNk, TheSeedSaysItTakesBothLayouts) {
  EXPECT_EQ(sparseditto_layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
}

TEST(Nm24WgmmaSpNk, DescriptorAndSlab) {
  EXPECT_EQ(TransB<false>(), 1) << "KN: B MN-major";
  EXPECT_EQ(TransB<true>(), 0) << "NK: B K-major, wgmma's non-transposed B";
  const uint64_t d = BDescNk(0x4000, 1);
  EXPECT_EQ(DescStart(d), 0x4000u + 64) << "k32 step 1: 32 values in";
  EXPECT_EQ(DescSbo(d), 1024u) << "8 rows of 128 bytes";
  EXPECT_EQ(d >> 62, 1u) << "128-byte swizzle";
  EXPECT_EQ((d >> 49) & 7, 0u) << "base offset 0: the slab is 1 KB aligned";
  // The threads' slab is byte for byte where the tensor copy's 64 x 64 boxes of X land: box q (rows
  // 64 q .. 64 q + 63) at q * 8 KB, line r of the box at r * 128 with its 16-byte chunks XORed with r % 8.
  std::set<int> bytes;
  for (int col = 0; col < 256; ++col)
    for (int k = 0; k < kBk; ++k) {
      const int at = BOffsetNk(k, col);
      ASSERT_EQ(at, (col / 64) * kBPieceBytes + static_cast<int>(sparseditto::seed_testing::Swz128((col % 64) * 128 + 2 * k)));
      bytes.insert(at);
    }
  EXPECT_EQ(bytes.size(), 256u * kBk);
  EXPECT_EQ(*bytes.rbegin(), 256 * kBk * 2 - 2);
}

// The copy engine's boxes hold what the replay lays into the slab: a tensor map of shape BMapShape (element
// (i0, i1) at i1 * inner + i0, zeros outside, as cuTensorMapEncodeTiled defines it) read at BoxOrigin + (x, y)
// gives line y, value x of the box = B's (k, col) with line k, value col % 64 (KN) or line col % 64,
// value k (NK), for every piece of every K tile.
TEST(Nm24WgmmaSpNk, TensorMapBoxesAreTheReplaysSlab) {
  const int64_t k = 150, n = 140;
  for (bool nk : {false, true}) {
    SCOPED_TRACE(nk ? "NK" : "KN");
    const ReplayLayout layout{nk};
    std::vector<float> mem(k * n);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<float>(i + 1);
    const MapShape shape = BMapShape(nk, k, n);
    ASSERT_EQ(shape.inner * shape.outer, k * n);
    for (int kt = 0; kt < 3; ++kt)
      for (int col0 = 0; col0 < n; col0 += 64) {
        int c0, c1;
        BoxOrigin(nk, kt, col0, &c0, &c1);
        for (int y = 0; y < 64; ++y)
          for (int x = 0; x < 64; ++x) {
            const int64_t i0 = c0 + x, i1 = c1 + y;
            const float got = i0 < shape.inner && i1 < shape.outer ? mem[i1 * shape.inner + i0] : 0.0f;
            const int64_t gk = kt * kBk + (nk ? x : y), gc = col0 + (nk ? y : x);
            const float want = gk < k && gc < n ? mem[layout.BIndex(gk, gc, k, n)] : 0.0f;
            ASSERT_EQ(got, want) << "K tile " << kt << " piece at " << col0 << " line " << y << " value " << x;
          }
      }
  }
}

// The emulation is not vacuous: X's slab read with the KN instruction form (imm-trans-b 1) is not B.
TEST(Nm24WgmmaSpNk, TheWrongTransposeBitIsCaught) {
  using sparseditto::seed_testing::ReadB;
  Smem s(64 * 128, 0);
  std::mt19937 rng(3);
  std::vector<float> x(64 * kBk);  // X rows 0..63 (B columns), 64 K values each
  for (float& v : x) v = Eighths(rng);
  for (int col = 0; col < 64; ++col)
    for (int k = 0; k < kBk; ++k) sparseditto::seed_testing::PutValue<__half>(s, BOffsetNk(k, col), x[col * kBk + k]);
  for (int step = 0; step < 2; ++step) {
    const std::vector<float> right = ReadB<__half>(s, BDescNk(0, step), TransB<true>(), 64);
    for (int k = 0; k < 32; ++k)
      for (int col = 0; col < 64; ++col) ASSERT_EQ(right[k * 64 + col], x[col * kBk + 32 * step + k]) << "k " << k << " col " << col;
    EXPECT_NE(ReadB<__half>(s, BDescNk(0, step), TransB<false>(), 64), right);
  }
}

// StoreStaged's NK path: every value of a warpgroup's fragments lands once in the transposed tile, and the
// 16-byte chunks it stores read rows 8 ch .. 8 ch + 7 of one column of C (a piece of a row of Y), in order.
template <class TL>
void ExpectTransposedStagingIsTheTile() {
  SCOPED_TRACE(::testing::Message() << "tile " << TL::kBn << " stages " << TL::kStages);
  std::vector<int> who(TL::kBn * kCColBytes / 2, -1);
  for (int wg = 0; wg < 2; ++wg)
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < TL::kBn / 2; i += 2) {
        int r, cc;
        AccCoord(t, i, &r, &cc);
        for (int x = 0; x < 2; ++x) {
          const int at = CStageOffsetNk(64 * wg + r, cc + x);
          ASSERT_TRUE(at % 2 == 0 && at + 2 <= TL::kDataBytes) << at;
          ASSERT_EQ(who[at / 2], -1) << "written twice";
          who[at / 2] = (64 * wg + r) * 1000 + cc + x;
        }
      }
  for (int col = 0; col < TL::kBn; ++col)
    for (int ch = 0; ch < kBm / 8; ++ch) {
      const int at = CStageOffsetNk(ch * 8, col);
      ASSERT_EQ(at % 16, 0);
      for (int e = 0; e < 8; ++e) ASSERT_EQ(who[at / 2 + e], (ch * 8 + e) * 1000 + col);
    }
}
TEST(Nm24WgmmaSpNk, StagedStoreWritesWholeYRows) {
  ExpectTransposedStagingIsTheTile<BigTile>();
  ExpectTransposedStagingIsTheTile<SmallTile>();
  ExpectTransposedStagingIsTheTile<Tile<128, 2>>();
  ExpectTransposedStagingIsTheTile<Tile<256, 2>>();
}

// run's choice: the copy engine needs 16-byte rows of B (KN: n, NK: K values) and of C (KN: n, NK: M)
// and 16-byte aligned pointers; else the threads copy (16-byte chunks of B when its rows allow).
TEST(Nm24WgmmaSpNk, TransportFollowsTheLayoutsRows) {
  struct Case { bool nk; int64_t m, k, n; uintptr_t b, c; bool vec, pair, tma; };
  const Case cases[] = {
      {false, 4096, 4096, 2048, 256, 512, true, true, true},
      {false, 4096, 4096, 2047, 256, 512, false, false, false},  // n odd
      {false, 4095, 4097, 16, 256, 512, true, true, true},       // KN ignores M and K
      {false, 64, 64, 16, 258, 512, false, true, false},         // B misaligned
      {false, 64, 64, 16, 256, 516, true, true, false},          // C off 16 bytes: pairs still
      {false, 64, 64, 18, 256, 512, false, true, false},         // n even, not a multiple of 8
      {true, 4096, 4096, 2048, 256, 512, true, false, true},
      {true, 4096, 4096, 17, 256, 512, true, false, true},       // NK: any n
      {true, 4096, 4096, 1, 256, 512, true, false, true},
      {true, 4096, 4100, 16, 256, 512, false, false, false},     // K not a multiple of 8
      {true, 4100, 4096, 16, 256, 512, true, false, false},      // M not a multiple of 8: no staged Y chunks
      {true, 4096, 4096, 16, 272, 512, true, false, true},       // 16-byte aligned
      {true, 4096, 4096, 16, 264, 512, false, false, false},     // X 8-byte aligned only
      {true, 4096, 4096, 16, 256, 520, true, false, false},      // Y 8-byte aligned only
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << (c.nk ? "NK" : "KN") << " M " << c.m << " K " << c.k << " n " << c.n << " b % 16 " << c.b % 16
                                      << " c % 16 " << c.c % 16);
    const Transport t = TransportFor(c.nk, c.m, c.k, c.n, c.b, c.c);
    EXPECT_EQ(t.vec, c.vec);
    EXPECT_EQ(t.pair, c.pair);
    EXPECT_EQ(t.tma, c.tma);
  }
}

// Every CTA replayed, NK, on the shapes the brief names: n = 1, 16, 17 (small tile), 128, 2048, odd n past
// a tile (the big one); M and K off their tile multiples. The copy engine's path needs K % 8 == 0 and
// M % 8 == 0 (TransportFor), the threads' path takes any shape.
constexpr bool kTma = true, kThreads = false, kNk = true;
TEST(Nm24WgmmaSpNk, ReplayThreadCopy) {
  for (int64_t n : {1, 16, 17, 63}) {
    ExpectReplayMatches<SmallTile>(7, 96, n, kThreads, 0, kNk);
    ExpectReplayMatches<SmallTile>(130, 150, n, kThreads, 0, kNk);  // K % 8 != 0: guarded loads
  }
  for (int64_t n : {128, 129, 300, 2048}) ExpectReplayMatches<BigTile>(130, 200, n, kThreads, 0, kNk);
  ExpectReplayMatches<BigTile>(1, 4, 257, kThreads, 0, kNk);
  ExpectReplayMatches<Tile<256, 3>>(70, 150, 257, kThreads, 0, kNk);
}
TEST(Nm24WgmmaSpNk, ReplayCopyEngine) {
  for (int64_t n : {1, 16, 17, 64}) ExpectReplayMatches<SmallTile>(136, 200, n, kTma, 0, kNk);
  for (int64_t n : {65, 128, 300, 2048}) ExpectReplayMatches<BigTile>(72, 200, n, kTma, 0, kNk);
  ExpectReplayMatches<Tile<256, 5>>(40, 64, 256, kTma, 0, kNk);
  ExpectReplayMatches<Tile<128, 3>>(8, 8, 3, kTma, 0, kNk);
}
TEST(Nm24WgmmaSpNk, ReplayBf16) {
  ExpectReplayMatches<SmallTile, __nv_bfloat16>(130, 150, 17, kThreads, 0, kNk);
  ExpectReplayMatches<SmallTile, __nv_bfloat16>(136, 200, 16, kTma, 0, kNk);
  ExpectReplayMatches<BigTile, __nv_bfloat16>(72, 200, 2048, kTma, 0, kNk);
  ExpectReplayMatches<BigTile, __nv_bfloat16>(130, 200, 129, kThreads, 0, kNk);
  // KN in bf16 too (the KN tests are fp16): the dtype changes nothing of the layouts.
  ExpectReplayMatches<BigTile, __nv_bfloat16>(130, 200, 72, kTma);
  ExpectReplayMatches<SmallTile, __nv_bfloat16>(7, 96, 7, kThreads);
}
// Split-K: the cluster sum's pair stores land a row of Y apart.
TEST(Nm24WgmmaSpNk, ReplaySplitK) {
  for (int per : {1, 2, 5}) {
    for (int64_t n : {1, 17}) ExpectReplayMatches<SmallTile>(300, 520, n, kThreads, per, kNk);
    ExpectReplayMatches<SmallTile>(296, 520, 16, kTma, per, kNk);
  }
  ExpectReplayMatches<BigTile>(70, 520, 257, kThreads, 2, kNk);
  ExpectReplayMatches<BigTile>(72, 520, 130, kTma, 4, kNk);
  ExpectReplayMatches<BigTile, __nv_bfloat16>(72, 520, 128, kTma, 3, kNk);
}

}  // namespace
