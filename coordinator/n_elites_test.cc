// The per-n elites (Coordinator::n_elites, SelectionOptions::per_n_ratio): the fastest full timing at
// each n is kept (not a screen's, not a failed candidate's), survives SaveState/Restore, loses its
// movable tunables with its exhausted space, and parents plans in proportion to the gap to the best
// baseline at its n.
#include <cmath>
#include <map>
#include <string>

#include "coordinator/coordinator.h"
#include "coordinator/testing/test_util.h"
#include "coordinator/testing/timed_result.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using testing::MakeCandidate;

v1::Task MakeTask() {
  v1::Task task;
  task.set_name("t");
  task.set_seed(5);
  task.mutable_budget()->set_max_evaluations(100000);
  return task;
}

// A correct result with times at n: ms_by_n; every n's best baseline takes 1 ms.
v1::EvalResult Timed(const std::string& id, const std::map<int64_t, double>& ms_by_n, bool screen = false,
                     v1::FailureCategory failure = v1::FAILURE_CATEGORY_NONE) {
  v1::EvalResult r = testing::MakeResult(id, 1.0, failure);
  if (failure != v1::FAILURE_CATEGORY_NONE) r.set_fitness(0);
  r.set_timing_screen(screen);
  testing::AddTimings(r, {ms_by_n.begin(), ms_by_n.end()});
  return r;
}

void Feed(Coordinator& c, const v1::Candidate& candidate, const v1::EvalResult& result) {
  auto dup = c.RegisterCandidate(candidate);
  ASSERT_TRUE(dup.ok() && !dup->has_value()) << candidate.id();
  ASSERT_TRUE(c.ReportResult(candidate, result, {.wall_seconds = 1}).ok());
}

TEST(NElitesTest, TheFastestFullTimingAtEachNIsKept) {
  auto c = Coordinator::Create(MakeTask(), CoordinatorOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  struct Step {
    const char* id;
    std::map<int64_t, double> ms;
    bool screen;
    v1::FailureCategory failure;
  };
  const Step steps[] = {
      {"a", {{16, 0.5}, {2048, 2.0}}, false, v1::FAILURE_CATEGORY_NONE},  // a leads both
      {"b", {{16, 0.8}, {2048, 0.9}}, false, v1::FAILURE_CATEGORY_NONE},  // b takes 2048
      {"c", {{16, 0.1}, {2048, 0.1}}, true, v1::FAILURE_CATEGORY_NONE},   // a screen: ignored
      {"d", {{16, 0.1}}, false, v1::FAILURE_CATEGORY_WRONG},              // failed: ignored
      {"e", {{16, 0.4}}, false, v1::FAILURE_CATEGORY_NONE},               // e takes 16
  };
  int i = 0;
  for (const Step& s : steps) {
    v1::Candidate cand = MakeCandidate(s.id, "seed" + std::to_string(i++));
    Feed(*c, cand, Timed(s.id, s.ms, s.screen, s.failure));
  }
  ASSERT_EQ(c->n_elites().size(), 2u);
  EXPECT_EQ(c->n_elites().at(16).candidate_id(), "e");
  EXPECT_DOUBLE_EQ(c->n_elites().at(16).fitness(), 1.0 / 0.4);
  EXPECT_EQ(c->n_elites().at(2048).candidate_id(), "b");

  auto restored = Coordinator::Restore(MakeTask(), CoordinatorOptions(), c->SaveState());
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->SaveState().SerializeAsString(), c->SaveState().SerializeAsString());
  EXPECT_EQ(restored->n_elites().at(2048).candidate_id(), "b");

  coordinator::ExhaustedSpace space;
  space.set_space_key("space-of-b");
  c->MarkSpaceExhausted(space, {"b"});
  EXPECT_EQ(c->n_elites().at(2048).movable_tunables(), 0) << "an exhausted space parents no built-in plan";
}

TEST(NElitesTest, PlansGoWhereTheGapToTheBestBaselineIsWidest) {
  CoordinatorOptions options;
  options.selection.per_n_ratio = 1.0;  // every plan from the per-n elites
  auto c = Coordinator::Create(MakeTask(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  // slow16 is the best at n = 16 with a speed-up of 1.25; fast2048 at 2048 with 5.
  Feed(*c, MakeCandidate("slow16", "s1"), Timed("slow16", {{16, 0.8}, {2048, 10}}));
  Feed(*c, MakeCandidate("fast2048", "s2"), Timed("fast2048", {{16, 10}, {2048, 0.2}}));
  std::map<std::string, int> parents;
  constexpr int kPlans = 4000;
  for (int i = 0; i < kPlans; ++i) {
    auto plan = c->PlanMutation();
    ASSERT_TRUE(plan.ok()) << plan.status();
    ++parents[plan->parent_id];
  }
  // Weights 1/1.25 : 1/5 = 0.8 : 0.2.
  EXPECT_NEAR(parents["slow16"] / static_cast<double>(kPlans), 0.8, 0.03);
  EXPECT_NEAR(parents["fast2048"] / static_cast<double>(kPlans), 0.2, 0.03);

  CoordinatorOptions off;
  off.selection.per_n_ratio = 0;
  auto islands_only = Coordinator::Create(MakeTask(), off);
  ASSERT_TRUE(islands_only.ok());
  EXPECT_NE(islands_only->SaveState().config(), c->SaveState().config()) << "the ratio is part of the fingerprint";
  off.selection.per_n_ratio = 1.5;
  EXPECT_FALSE(Coordinator::Create(MakeTask(), off).ok());
}

}  // namespace
}  // namespace sparseditto
