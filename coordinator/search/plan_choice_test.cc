// ChoosePlan on hand-made results: winners per n merged into variants with their ranges, ties, missing
// times, failed candidates, and the cases that need or allow no plan.
#include "coordinator/search/plan_choice.h"

#include <cmath>
#include <limits>
#include <utility>

#include "fmt/format.h"
#include "coordinator/testing/timed_result.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

constexpr int64_t kTop = std::numeric_limits<int64_t>::max();
const std::vector<int64_t> kTaskN = {2048, 16, 128};  // any order

using testing::TimedResult;

struct Case {
  std::string what;
  std::vector<v1::EvalResult> results;
  std::vector<PlanVariantChoice> want;  // empty: no plan
  double want_fitness = 0;
};

TEST(PlanChoiceTest, PicksTheFastestPerNAndMergesWinsIntoVariants) {
  const std::vector<Case> cases = {
      {"a wins the small n, b the large",
       {TimedResult("a", 1.5, {{16, 0.5}, {128, 0.5}, {2048, 2.0}}), TimedResult("b", 1.2, {{16, 1.0}, {128, 1.0}, {2048, 0.25}})},
       {{"a", {{1, 128}}}, {"b", {{129, kTop}}}},
       std::cbrt(2.0 * 2.0 * 4.0)},
      {"a wins two n that are not neighbours: one variant, two ranges",
       {TimedResult("a", 1.5, {{16, 0.5}, {128, 2.0}, {2048, 0.5}}), TimedResult("b", 1.2, {{16, 1.0}, {128, 0.5}, {2048, 1.0}})},
       {{"a", {{1, 16}, {129, kTop}}}, {"b", {{17, 128}}}},
       2.0},
      {"a tie goes to the higher fitness",
       {TimedResult("a", 1.1, {{16, 0.5}, {128, 1.0}, {2048, 2.0}}), TimedResult("b", 1.3, {{16, 1.0}, {128, 1.0}, {2048, 0.5}})},
       {{"a", {{1, 16}}}, {"b", {{17, kTop}}}},
       std::cbrt(2.0 * 1.0 * 2.0)},
      {"a tie of equal fitness goes to the smaller id",
       {TimedResult("b", 1.0, {{16, 1.0}, {128, 1.0}, {2048, 0.5}}), TimedResult("a", 1.0, {{16, 0.5}, {128, 1.0}, {2048, 2.0}})},
       {{"a", {{1, 128}}}, {"b", {{129, kTop}}}},
       std::cbrt(2.0 * 1.0 * 2.0)},
      {"a candidate missing an n does not serve it",
       {TimedResult("a", 2.0, {{16, 0.5}, {128, 0.5}}), TimedResult("b", 0.9, {{16, 1.0}, {128, 1.0}, {2048, 1.0}})},
       {{"a", {{1, 128}}}, {"b", {{129, kTop}}}},
       std::cbrt(2.0 * 2.0 * 1.0)},
      {"a wrong candidate competes nowhere; a slower one does",
       {TimedResult("fast-but-wrong", 0, {{16, 0.01}, {128, 0.01}, {2048, 0.01}}, v1::FAILURE_CATEGORY_WRONG),
        TimedResult("a", 1.1, {{16, 0.5}, {128, 0.5}, {2048, 2.0}}),
        TimedResult("slow", 0.8, {{16, 4.0}, {128, 4.0}, {2048, 1.0}}, v1::FAILURE_CATEGORY_SLOWER)},
       {{"a", {{1, 128}}}, {"slow", {{129, kTop}}}},
       std::cbrt(2.0 * 2.0 * 1.0)},
      {"one candidate fastest at every n: no plan needed",
       {TimedResult("a", 2.0, {{16, 0.5}, {128, 0.5}, {2048, 0.5}}), TimedResult("b", 1.0, {{16, 1.0}, {128, 1.0}, {2048, 1.0}})},
       {},
       0},
      {"an n nobody timed: no plan",
       {TimedResult("a", 2.0, {{16, 0.5}, {128, 2.0}}), TimedResult("b", 1.0, {{16, 1.0}, {128, 1.0}})},
       {},
       0},
      {"no results", {}, {}, 0},
  };
  for (const Case& c : cases) {
    const std::optional<PlanChoice> plan = ChoosePlan(kTaskN, c.results);
    if (c.want.empty()) {
      EXPECT_FALSE(plan.has_value()) << c.what << ": " << DescribePlan(*plan);
      continue;
    }
    ASSERT_TRUE(plan.has_value()) << c.what;
    ASSERT_EQ(plan->variants.size(), c.want.size()) << c.what << ": " << DescribePlan(*plan);
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_EQ(plan->variants[i].candidate_id, c.want[i].candidate_id) << c.what;
      EXPECT_EQ(plan->variants[i].serves, c.want[i].serves) << c.what << ": " << DescribePlan(*plan);
    }
    EXPECT_NEAR(plan->predicted_fitness, c.want_fitness, 1e-12) << c.what;
    ASSERT_EQ(plan->timings.size(), 3u) << c.what;
    EXPECT_EQ(plan->timings[0].n(), 16) << c.what;
    EXPECT_EQ(plan->timings[2].n(), 2048) << c.what;
  }
}

TEST(PlanChoiceTest, NoTaskNNoPlan) {
  EXPECT_FALSE(ChoosePlan({}, {TimedResult("a", 1, {{16, 1.0}}), TimedResult("b", 1, {{16, 0.5}})}).has_value());
}

TEST(PlanChoiceTest, DescribesTheVariantsAndThePrediction) {
  const std::optional<PlanChoice> plan = ChoosePlan(
      {16, 128}, {TimedResult("a", 1, {{16, 0.5}, {128, 2.0}}), TimedResult("b", 1, {{16, 1.0}, {128, 1.0}})});
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(DescribePlan(*plan), std::string("a n 1-16, b n 17 and up (predicted fitness 1.414)"));
}

}  // namespace
}  // namespace sparseditto
