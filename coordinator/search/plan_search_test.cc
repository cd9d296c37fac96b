// The plan stage in the search loop, over the fake evaluator with per-n times: where different seeds
// win at different n, the search ends with a plan of them that beats the best single candidate and
// leads the finalist order; a crash while the plan is evaluated evaluates it once more and ends like an
// uninterrupted run; where one candidate wins every n there is no plan.
#include <memory>
#include <string>
#include <vector>

#include "coordinator/search/plan_choice.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/testing/search_fixture.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using testing::CountingEvaluator;

constexpr int64_t kBudget = 30;

struct PlanWorld {
  v1::Task task;
  std::vector<SeedKernel> seeds;
  testing::FakeLandscape landscape;
  std::string other_seed;  // the seed that wins the largest n
};

// csr_warp_per_row (peak 3) is fastest at n 16 and 128 and slow at 2048, where another seed is 4x faster.
PlanWorld MakeWorld(bool one_winner = false) {
  PlanWorld w;
  w.task = testing::SmallTask(kBudget);
  for (int64_t n : {16, 128, 2048}) w.task.add_n(n);
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  if (seeds.ok()) w.seeds = *seeds;
  w.landscape = testing::Landscape(w.task, w.seeds);
  w.landscape.n_values = {16, 128, 2048};
  for (const auto& [seed, peak] : w.landscape.peak) {
    if (seed != "csr_warp_per_row" && w.other_seed.empty()) w.other_seed = seed;
  }
  for (const auto& [seed, peak] : w.landscape.peak) {  // the rest never win
    if (!one_winner && seed != "csr_warp_per_row" && seed != w.other_seed) {
      w.landscape.speed_at_n[seed] = {{16, 0.1}, {128, 0.1}, {2048, 0.1}};
    }
  }
  // Both seeds at their optimum as they stand, so their seeds already score 3 and 1.
  w.landscape.optimum.erase("csr_warp_per_row");
  w.landscape.optimum.erase(w.other_seed);
  if (!one_winner) {
    w.landscape.speed_at_n["csr_warp_per_row"] = {{2048, 0.2}};
    w.landscape.speed_at_n[w.other_seed] = {{16, 0.3}, {128, 0.3}, {2048, 4.0}};
  }
  return w;
}

class PlanSearchTest : public ::testing::Test {
 protected:
  std::unique_ptr<PopulationStore> Open(const std::string& name, PopulationStoreOptions o = {}) {
    o.create_if_missing = true;
    auto store = PopulationStore::Open((folder_.path() / name).string(), o);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  testing_support::TempFolder folder_{"plan_search_test"};
};

TEST_F(PlanSearchTest, WinnersAtDifferentNMakeAPlanThatBeatsTheBestSingleAndLeadsTheFinalists) {
  const PlanWorld w = MakeWorld();
  ASSERT_FALSE(w.other_seed.empty());
  CountingEvaluator evaluator(w.landscape);
  auto store = Open("plan");
  absl::StatusOr<SearchSummary> summary = RunTaskSearch(*store, "run", w.task, w.seeds, evaluator, testing::TestLoopOptions());
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_FALSE(summary->plan_candidate_id.empty()) << summary->plan;
  const std::string& plan_id = summary->plan_candidate_id;
  EXPECT_EQ(summary->evaluations, kBudget + 1) << "the budget, then the plan";
  EXPECT_EQ(evaluator.calls_by_id[plan_id], 1);

  absl::StatusOr<std::vector<v1::Candidate>> all = store->ListCandidates("run", w.task.name());
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<v1::EvalResult> singles;
  double best_single = 0;
  v1::Candidate plan;
  for (const v1::Candidate& c : *all) {
    if (c.id() == plan_id) {
      plan = c;
      continue;
    }
    absl::StatusOr<v1::EvalResult> r = store->GetEvaluation("run", c.id());
    if (!r.ok()) continue;
    singles.push_back(*r);
    best_single = std::max(best_single, r->fitness());
  }
  EXPECT_EQ(plan.operator_(), v1::MUTATION_OPERATOR_PLAN);
  EXPECT_EQ(plan.seed_name(), "plan");
  ASSERT_GE(plan.parent_ids_size(), 2) << summary->plan;
  std::optional<PlanChoice> choice =
      ChoosePlan(std::vector<int64_t>(w.task.n().begin(), w.task.n().end()), singles);
  ASSERT_TRUE(choice.has_value());
  ASSERT_EQ(plan.parent_ids_size(), static_cast<int>(choice->variants.size()));
  for (int i = 0; i < plan.parent_ids_size(); ++i) EXPECT_EQ(plan.parent_ids(i), choice->variants[i].candidate_id);
  EXPECT_EQ(summary->plan, DescribePlan(*choice));

  absl::StatusOr<v1::EvalResult> measured = store->GetEvaluation("run", plan_id);
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_GT(measured->fitness(), best_single * 1.5);
  EXPECT_NEAR(measured->fitness(), choice->predicted_fitness, 1e-9) << "the fake's plan times are its variants'";
  EXPECT_EQ(summary->best_candidate_id, plan_id);
  ASSERT_FALSE(evaluator.finalist_ids.empty());
  EXPECT_EQ(evaluator.finalist_ids[0], plan_id) << "the plan is the finalists' first";
  EXPECT_EQ(summary->finalist_candidate_id, plan_id);
}

TEST_F(PlanSearchTest, APlanInFlightAtACrashIsEvaluatedOnceMoreAndEndsLikeAnUninterruptedRun) {
  const PlanWorld w = MakeWorld();
  CountingEvaluator straight(w.landscape);
  auto straight_store = Open("straight");
  absl::StatusOr<SearchSummary> expected =
      RunTaskSearch(*straight_store, "run", w.task, w.seeds, straight, testing::TestLoopOptions());
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_FALSE(expected->plan_candidate_id.empty());

  CountingEvaluator evaluator(w.landscape);
  {
    PopulationStoreOptions o;
    int commits = 0;
    o.before_write = [&](std::string_view operation) {
      if (operation == "CommitEvaluation" && ++commits == kBudget + 1) return absl::UnavailableError("power cut");
      return absl::OkStatus();
    };
    auto store = Open("crash", o);
    absl::StatusOr<SearchSummary> first = RunTaskSearch(*store, "run", w.task, w.seeds, evaluator, testing::TestLoopOptions());
    EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable) << first.status();
    absl::StatusOr<store::RunState> state = store->GetRunState("run", w.task.name());
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->in_flight_candidate_id(), expected->plan_candidate_id);
    EXPECT_TRUE(state->plan_done());
  }
  auto store = Open("crash");
  absl::StatusOr<SearchSummary> second = RunTaskSearch(*store, "run", w.task, w.seeds, evaluator, testing::TestLoopOptions());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->reevaluated_in_flight, expected->plan_candidate_id);
  for (const auto& [id, n] : evaluator.calls_by_id) EXPECT_EQ(n, id == expected->plan_candidate_id ? 2 : 1) << id;
  EXPECT_EQ(second->plan_candidate_id, expected->plan_candidate_id);
  EXPECT_EQ(second->evaluations, expected->evaluations);
  EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
  EXPECT_DOUBLE_EQ(second->best_fitness, expected->best_fitness);
  EXPECT_EQ(second->finalist_candidate_id, expected->finalist_candidate_id);
}

TEST_F(PlanSearchTest, NoPlanWhereOneCandidateWinsEveryNOrTheStageIsOff) {
  const PlanWorld w = MakeWorld(/*one_winner=*/true);
  CountingEvaluator evaluator(w.landscape);
  auto store = Open("single");
  absl::StatusOr<SearchSummary> summary = RunTaskSearch(*store, "run", w.task, w.seeds, evaluator, testing::TestLoopOptions());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->plan_candidate_id.empty());
  EXPECT_EQ(summary->plan.rfind("no plan", 0), 0u) << summary->plan;
  EXPECT_EQ(summary->evaluations, kBudget);

  const PlanWorld split = MakeWorld();
  CountingEvaluator off_evaluator(split.landscape);
  SearchLoopOptions off = testing::TestLoopOptions();
  off.plan_stage = false;
  auto off_store = Open("off");
  absl::StatusOr<SearchSummary> without = RunTaskSearch(*off_store, "run", split.task, split.seeds, off_evaluator, off);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_TRUE(without->plan_candidate_id.empty());
  EXPECT_EQ(without->plan, "");
  EXPECT_EQ(without->evaluations, kBudget);
}

}  // namespace
}  // namespace sparseditto
