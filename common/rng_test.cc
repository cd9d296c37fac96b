#include "common/rng.h"

#include <vector>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

TEST(RngTest, SameSeedSameSequenceDifferentSeedDifferent) {
  Rng a(42), b(42), c(43);
  int same_as_c = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    same_as_c += (x == c.Next());
  }
  EXPECT_EQ(same_as_c, 0);
}

TEST(RngTest, BelowStaysInRangeAndCoversIt) {
  Rng rng(7);
  std::vector<int> hits(10, 0);
  for (int i = 0; i < 10000; ++i) {
    const uint64_t v = rng.Below(10);
    ASSERT_LT(v, 10u);
    hits[v]++;
  }
  for (int h : hits) EXPECT_GT(h, 800);
}

TEST(RngTest, UniformAndNormalMoments) {
  Rng rng(1);
  double sum = 0, sum_sq = 0;
  const int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const double z = rng.Normal();
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / kDraws, 1.0, 0.02);
}

}  // namespace
}  // namespace sparseditto
