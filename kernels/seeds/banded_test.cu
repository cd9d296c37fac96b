// CPU tests of the banded seed's host side: the band re-expands to the matrix, every window lies inside
// [0, K), and each CTA's window is exactly the union of its rows' windows. No CUDA runtime calls.
#include "kernels/seeds/banded.cu"

#include "gtest/gtest.h"

namespace {

struct Csr {
  int64_t rows, cols;
  std::vector<int32_t> offsets{0}, cols_of;
  std::vector<float> values;
};

// The generator's band: row r holds [c - w, c + w] clipped, c = r * cols / rows; rows in `empty` hold nothing.
Csr GeneratedBand(int64_t rows, int64_t cols, int64_t w, std::vector<int64_t> empty = {}) {
  Csr m{rows, cols};
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r * cols / rows;
    if (std::find(empty.begin(), empty.end(), r) == empty.end()) {
      for (int64_t k = std::max<int64_t>(0, c - w); k < std::min(cols, c + w + 1); ++k) {
        m.cols_of.push_back(static_cast<int32_t>(k));
        m.values.push_back(static_cast<float>(1 + m.values.size() % 89));
      }
    }
    m.offsets.push_back(static_cast<int32_t>(m.cols_of.size()));
  }
  return m;
}

void CheckBand(const Csr& m) {
  SCOPED_TRACE(testing::Message() << m.rows << "x" << m.cols << " nnz " << m.values.size());
  const Band b = ExtractBand(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.values.data());
  ASSERT_GE(b.width, 1);
  ASSERT_LE(b.width, m.cols);
  ASSERT_EQ(b.start.size(), static_cast<size_t>(m.rows));
  ASSERT_EQ(b.values.size(), static_cast<size_t>(m.rows * b.width));
  int64_t widest = 1;
  std::vector<float> want(m.rows * m.cols, 0.0f), got(m.rows * m.cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r) {
    EXPECT_GE(b.start[r], 0);
    EXPECT_LE(b.start[r] + b.width, m.cols);
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) {
      want[r * m.cols + m.cols_of[e]] = m.values[e];
      EXPECT_GE(m.cols_of[e], b.start[r]);
      EXPECT_LT(m.cols_of[e], b.start[r] + b.width);
    }
    if (m.offsets[r + 1] > m.offsets[r]) {
      widest = std::max<int64_t>(widest, m.cols_of[m.offsets[r + 1] - 1] - m.cols_of[m.offsets[r]] + 1);
    }
    for (int64_t w = 0; w < b.width; ++w) got[r * m.cols + b.start[r] + w] = b.values[r * b.width + w];
  }
  EXPECT_EQ(b.width, widest);
  EXPECT_TRUE(got == want);
  const size_t ctas = (m.rows + BAND_ROWS - 1) / BAND_ROWS;
  ASSERT_EQ(b.lo.size(), ctas);
  ASSERT_EQ(b.hi.size(), ctas);
  for (size_t cta = 0; cta < ctas; ++cta) {
    int32_t lo = INT32_MAX, hi = 0;
    for (int64_t r = cta * BAND_ROWS; r < std::min<int64_t>((cta + 1) * BAND_ROWS, m.rows); ++r) {
      lo = std::min(lo, b.start[r]);
      hi = std::max<int32_t>(hi, b.start[r] + b.width);
    }
    EXPECT_EQ(b.lo[cta], lo);
    EXPECT_EQ(b.hi[cta], hi);
    EXPECT_LE(hi, m.cols);
  }
}

TEST(Banded, GeneratedBandsRoundTrip) {
  CheckBand(GeneratedBand(7, 96, 3));
  CheckBand(GeneratedBand(65, 33, 5));
  CheckBand(GeneratedBand(33, 200, 0));   // diagonal only
  CheckBand(GeneratedBand(33, 200, 64));
  CheckBand(GeneratedBand(300, 300, 16));
  CheckBand(GeneratedBand(20, 10, 100));  // band wider than the matrix: every row dense
}

TEST(Banded, EmptyRowsTakeTheWindowBefore) {
  CheckBand(GeneratedBand(100, 100, 4, {0, 1, 50, 51, 99}));
  CheckBand(GeneratedBand(7, 96, 2, {0, 1, 2, 3, 4, 5, 6}));  // nothing at all
  const Csr m = GeneratedBand(10, 40, 2, {5});
  const Band b = ExtractBand(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.values.data());
  EXPECT_EQ(b.start[5], b.start[4]);
}

TEST(Banded, StartsAreLoweredToKeepWindowsInside) {
  // The last rows' bands are clipped at K: their windows start early enough to end at K.
  const Csr m = GeneratedBand(16, 64, 8);
  const Band b = ExtractBand(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.values.data());
  EXPECT_EQ(b.width, 17);
  EXPECT_EQ(b.start[15], 64 - 17);
  EXPECT_EQ(b.start[0], 0);
}

}  // namespace
