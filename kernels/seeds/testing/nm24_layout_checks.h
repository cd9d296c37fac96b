// Checks of the 2:4 compressed layout nm24_mma_sp and nm24_stream_sp both build. Include it after the seed's
// .cu: it uses the seed's Nm24Host, BuildNm24, ValTile, MetaRecord and MetaLaneWord.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_LAYOUT_CHECKS_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_LAYOUT_CHECKS_H_

#include "kernels/seeds/testing/nm24_emulation.h"

namespace sparseditto::seed_testing {

inline Nm24Host Build(const Csr& m) {
  Nm24Host h;
  std::string why;
  EXPECT_TRUE(BuildNm24(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  return h;
}

// What the kernel hands mma.sp for tile (mt, kc): a lane's 16 bytes and its metadata word.
inline void TileOperands(const Nm24Host& h, int64_t mt, int64_t kc, Lanes4* a, std::array<uint32_t, 32>* e) {
  const int64_t kchunks = h.kp / 32;
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r)
      for (int x = 0; x < 2; ++x) (*a)[l][r][x] = h.vals[ValTile(mt, kc, kchunks) + l * 8 + r * 2 + x];
    (*e)[l] = h.meta[MetaRecord(mt, kc / 2, kchunks / 2) + MetaLaneWord(l) + kc % 2];
  }
}

// The re-expanded compressed layout equals the CSR input over awkward shapes (padding included).
inline void ExpectBuildReexpands() {
  struct Case { int64_t rows, cols; };
  for (const Case& c : {Case{7, 96}, Case{65, 36}, Case{33, 200}, Case{1, 4}, Case{16, 32}, Case{130, 68}, Case{3, 6}}) {
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols);
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

// Three nonzeros in a group of four are refused with a reason; an explicit zero does not count.
inline void ExpectBuildRefusesThreeOfFour() {
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

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_LAYOUT_CHECKS_H_
