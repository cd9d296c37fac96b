// SpreadOf: count, median (mean of the middle two for an even count), least and greatest, in any input order.
#include "common/spread.h"

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

TEST(SpreadTest, MedianLowAndHighOfAnyOrder) {
  struct Case { const char* name; std::vector<double> values; int count; double median, low, high; };
  const Case cases[] = {
      {"none", {}, 0, 0, 0, 0},
      {"one", {2.5}, 1, 2.5, 2.5, 2.5},
      {"odd, unsorted", {3, -1, 2}, 3, 2, -1, 3},
      {"even: mean of the middle two", {4, 1, 3, 2}, 4, 2.5, 1, 4},
      {"ties", {0.84, 0.84, 0.5, 1.1}, 4, 0.84, 0.5, 1.1},
  };
  for (const Case& c : cases) {
    const Spread s = SpreadOf(c.values);
    EXPECT_EQ(s.count, c.count) << c.name;
    EXPECT_DOUBLE_EQ(s.median, c.median) << c.name;
    EXPECT_DOUBLE_EQ(s.low, c.low) << c.name;
    EXPECT_DOUBLE_EQ(s.high, c.high) << c.name;
  }
}

}  // namespace
}  // namespace sparseditto
