#include "coordinator/budget.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

TEST(BudgetTrackerTest, StopsAtTheFirstLimitReached) {
  struct Case {
    const char* name;
    v1::Budget limits;
    int evaluations, improving_at;  // evaluations recorded; the one (1-based) that improves, 0: none
    Cost cost;
    int wasted;
    StopReason want;
  };
  auto budget = [](int64_t evals, double wall, int64_t tokens, double money, int stagnation) {
    v1::Budget b;
    b.set_max_evaluations(evals);
    b.set_max_wall_seconds(wall);
    b.set_max_tokens(tokens);
    b.set_max_money_usd(money);
    b.set_stagnation_evaluations(stagnation);
    return b;
  };
  const Case cases[] = {
      {"fresh", budget(10, 0, 0, 0, 0), 0, 0, {}, 0, StopReason::kNone},
      {"evaluations", budget(10, 0, 0, 0, 0), 10, 1, {}, 0, StopReason::kEvaluations},
      {"default_evaluations", budget(0, 0, 0, 0, 0), 199, 1, {}, 0, StopReason::kNone},
      {"default_evaluations_reached", budget(0, 0, 0, 0, 0), 200, 1, {}, 0, StopReason::kEvaluations},
      {"wall", budget(10, 60, 0, 0, 0), 1, 1, {.wall_seconds = 60}, 0, StopReason::kWallTime},
      {"wall_no_limit", budget(10, 0, 0, 0, 0), 1, 1, {.wall_seconds = 1e9}, 0, StopReason::kNone},
      {"tokens", budget(10, 0, 1000, 0, 0), 1, 1, {.tokens = 1000}, 0, StopReason::kTokens},
      {"money", budget(10, 0, 0, 2.5, 0), 1, 1, {.money_usd = 2.6}, 0, StopReason::kMoney},
      {"stagnation", budget(100, 0, 0, 0, 5), 6, 1, {}, 0, StopReason::kStagnation},
      {"improved_recently", budget(100, 0, 0, 0, 5), 6, 2, {}, 0, StopReason::kNone},
      {"exhausted", budget(100, 0, 0, 0, 0), 0, 0, {}, 4, StopReason::kExhausted},
      {"evaluations_first", budget(5, 1, 0, 0, 0), 5, 1, {.wall_seconds = 2}, 4, StopReason::kEvaluations},
  };
  for (const Case& c : cases) {
    BudgetTracker tracker(c.limits, /*max_wasted_in_a_row=*/4);
    tracker.AddCost(c.cost);
    for (int i = 1; i <= c.evaluations; ++i) tracker.RecordEvaluation(i == c.improving_at);
    for (int i = 0; i < c.wasted; ++i) tracker.RecordWasted(i % 2 == 0);
    EXPECT_EQ(tracker.Check(), c.want) << c.name << ": " << tracker.Explain(tracker.Check());
    EXPECT_EQ(tracker.Explain(tracker.Check()).empty(), c.want == StopReason::kNone) << c.name;
  }
}

// A request refused because its worst case would overrun a limit stops the search at that limit, with
// the refusal's reason, before anything was overrun; and it survives a save and load.
TEST(BudgetTrackerTest, ARefusedReservationStopsAtItsLimit) {
  struct Case {
    const char* name;
    int64_t max_tokens;
    double max_money;
    StopReason refused;  // given to RefuseOverBudget
    StopReason want;
    const char* explained;
  };
  const Case cases[] = {
      {"tokens", 1000, 0, StopReason::kTokens, StopReason::kTokens, "max_tokens 1000: worst case too big (10 spent)"},
      {"money", 0, 2.5, StopReason::kMoney, StopReason::kMoney, "max_money_usd 2.5: worst case too big (0.01 spent)"},
      {"not a budget limit", 1000, 0, StopReason::kStagnation, StopReason::kNone, ""},
  };
  for (const Case& c : cases) {
    v1::Budget limits;
    limits.set_max_evaluations(10);
    limits.set_max_tokens(c.max_tokens);
    limits.set_max_money_usd(c.max_money);
    BudgetTracker tracker(limits, 0);
    tracker.AddCost({.tokens = 10, .money_usd = 0.01});
    ASSERT_EQ(tracker.Check(), StopReason::kNone) << c.name;
    tracker.RefuseOverBudget(c.refused, "worst case too big");
    EXPECT_EQ(tracker.Check(), c.want) << c.name;
    EXPECT_EQ(tracker.Explain(tracker.Check()), c.explained) << c.name;
    BudgetTracker resumed(limits, 0);
    resumed.Load(tracker.spent());
    EXPECT_EQ(resumed.Check(), c.want) << c.name;
  }
}

TEST(BudgetTrackerTest, WastedRunsResetOnANewCandidate) {
  BudgetTracker tracker(v1::Budget(), 3);
  tracker.RecordWasted(true);
  tracker.RecordWasted(false);
  tracker.RecordNewCandidate();
  tracker.RecordWasted(true);
  EXPECT_EQ(tracker.spent().duplicates(), 2);
  EXPECT_EQ(tracker.spent().wasted_in_a_row(), 1);
  EXPECT_EQ(tracker.Check(), StopReason::kNone);
  EXPECT_EQ(StopReasonName(StopReason::kExhausted), "exhausted");
}

// A target fitness stops the search once the best reaches it, before any other limit, says so, and
// survives a save and load; 0 never stops it.
TEST(BudgetTrackerTest, ATargetFitnessReachedStopsTheSearch) {
  const struct {
    const char* name;
    double target;
    std::vector<double> bests;  // the best's fitness after each evaluation
    StopReason want;
  } cases[] = {
      {"below", 1.5, {0.5, 1.0, 1.4}, StopReason::kNone},
      {"reached", 1.5, {0.5, 1.5}, StopReason::kTarget},
      {"passed then kept", 1.5, {2.0, 0}, StopReason::kTarget},  // the best never goes down
      {"no target", 0, {5.0}, StopReason::kNone},
      {"before evaluations", 1.0, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, StopReason::kTarget},
  };
  for (const auto& c : cases) {
    v1::Budget limits;
    limits.set_max_evaluations(10);
    limits.set_target_fitness(c.target);
    BudgetTracker tracker(limits, 0);
    for (double best : c.bests) tracker.RecordEvaluation(true, best);
    EXPECT_EQ(tracker.Check(), c.want) << c.name;
    if (c.want == StopReason::kTarget) {
      EXPECT_NE(tracker.Explain(StopReason::kTarget).find("target_fitness 1"), std::string::npos) << c.name;
      EXPECT_EQ(StopReasonName(tracker.Check()), "target_fitness");
    }
    BudgetTracker resumed(limits, 0);
    resumed.Load(tracker.spent());
    EXPECT_EQ(resumed.Check(), c.want) << c.name;
  }
}

}  // namespace
}  // namespace sparseditto
