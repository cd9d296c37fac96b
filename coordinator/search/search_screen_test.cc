// The timing screen (SearchLoopOptions::screen_margin) over the fake evaluator with a screen of its
// own: children are screened, only those near an elite (fitness or a per-n time) are timed again in
// full, seeds are never screened, the budget stays exact, and a run killed part-way resumes to the
// end of the uninterrupted one (the per-n elites are rebuilt from the store).
#include <cmath>
#include <map>
#include <string>

#include "common/screen_bar.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/store_test.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using testing::CountingEvaluator;

using testing::ScreeningEvaluator;

class SearchScreenTest : public testing::StoreTest {
 protected:
  SearchScreenTest() : StoreTest("search_screen_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *seeds;
    task_ = testing::SmallTask(50);
    landscape_ = testing::Landscape(task_, seeds_);
    landscape_.n_values = {16, 128, 2048};
    // Some seeds are fast at one n only: what the per-n rule exists for.
    landscape_.speed_at_n["csr_warp_per_row"] = {{16, 1.6}, {2048, 0.5}};
    landscape_.speed_at_n["csr_sputnik_1d"] = {{16, 0.4}, {2048, 2.5}};
  }
  std::vector<SeedKernel> seeds_;
  v1::Task task_;
  testing::FakeLandscape landscape_;
};

TEST_F(SearchScreenTest, ChildrenAreScreenedAndOnlyThoseNearAnEliteAreTimedInFull) {
  ScreeningEvaluator evaluator(landscape_);
  auto store = OpenStore("screen");
  SearchLoopOptions options = testing::TestLoopOptions();
  options.plan_stage = false;
  options.max_finalists = 0;
  auto summary = RunTaskSearch(*store, "run", task_, seeds_, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->evaluations, 50) << "a screen and its full timing are one evaluation";

  int64_t children = 0, full = 0;
  for (const auto& [id, n] : evaluator.calls_by_id) EXPECT_EQ(n, 1) << id << " timed in full twice";
  for (const auto& [id, n] : evaluator.screened_by_id) {
    EXPECT_EQ(n, 1) << id << " screened twice";
    ++children;
    auto stored = store->GetEvaluation("run", id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    const bool timed_in_full = evaluator.calls_by_id.contains(id);
    full += timed_in_full ? 1 : 0;
    EXPECT_EQ(stored->timing_screen(), !timed_in_full) << id << ": the full result stands where there is one";
  }
  auto candidates = store->ListCandidates("run", task_.name());
  ASSERT_TRUE(candidates.ok());
  for (const v1::Candidate& c : *candidates) {
    if (c.operator_() == v1::MUTATION_OPERATOR_SEED) {
      EXPECT_FALSE(evaluator.screened_by_id.contains(c.id())) << "seed " << c.id() << " screened";
    }
  }
  EXPECT_GT(children, 10);
  EXPECT_GT(full, 0) << "children near an elite are timed in full";
  EXPECT_LT(full, children) << "children far below every elite keep their screen";
  EXPECT_EQ(summary->throughput.screened, children);
  EXPECT_EQ(summary->throughput.timed_in_full, full);
  auto best = store->GetEvaluation("run", summary->best_candidate_id);
  ASSERT_TRUE(best.ok());
  EXPECT_FALSE(best->timing_screen()) << "the best is a full timing";
}

TEST_F(SearchScreenTest, AnEvaluatorThatGoesOnInFullItselfTimesTheSameChildrenOnce) {
  SearchLoopOptions options = testing::TestLoopOptions();
  options.plan_stage = false;
  options.max_finalists = 0;
  ScreeningEvaluator asked_again(landscape_);
  auto store = OpenStore("asked");
  auto expected = RunTaskSearch(*store, "run", task_, seeds_, asked_again, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ScreeningEvaluator itself(landscape_);
  itself.continues_itself = true;
  auto store2 = OpenStore("itself");
  auto summary = RunTaskSearch(*store2, "run", task_, seeds_, itself, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->evaluations, expected->evaluations);
  EXPECT_EQ(summary->best_candidate_id, expected->best_candidate_id);
  EXPECT_DOUBLE_EQ(summary->best_fitness, expected->best_fitness);
  EXPECT_EQ(itself.screened_by_id, asked_again.screened_by_id);
  // The children the loop timed again are exactly those the evaluator went on with, and no child was
  // asked for a second evaluation (the seeds' full evaluations are the only Evaluate calls).
  std::map<std::string, int> children_timed_again;
  for (const auto& [id, n] : asked_again.calls_by_id) {
    if (asked_again.screened_by_id.contains(id)) children_timed_again[id] = n;
  }
  EXPECT_FALSE(children_timed_again.empty());
  EXPECT_EQ(itself.full_after_screen_by_id, children_timed_again);
  for (const auto& [id, n] : itself.calls_by_id) EXPECT_FALSE(itself.screened_by_id.contains(id)) << id;
  EXPECT_EQ(summary->throughput.screened, expected->throughput.screened);
  EXPECT_EQ(summary->throughput.timed_in_full, expected->throughput.timed_in_full);
  for (const auto& [id, n] : itself.full_after_screen_by_id) {
    auto stored = store2->GetEvaluation("run", id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_FALSE(stored->timing_screen()) << id;
    EXPECT_TRUE(stored->timed_in_full_after_screen()) << id;
  }
}

TEST_F(SearchScreenTest, NoScreenWhenTheMarginIsZero) {
  ScreeningEvaluator evaluator(landscape_);
  auto store = OpenStore("off");
  SearchLoopOptions options = testing::TestLoopOptions();
  options.screen_margin = 0;
  auto summary = RunTaskSearch(*store, "run", task_, seeds_, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(evaluator.screened_by_id.empty());
  EXPECT_EQ(summary->throughput.screened, 0);
}

TEST_F(SearchScreenTest, AnInterruptedScreenedSearchResumesToTheUninterruptedEnd) {
  SearchLoopOptions options = testing::TestLoopOptions();
  options.compile_ahead = 3;
  ScreeningEvaluator straight(landscape_);
  absl::StatusOr<SearchSummary> expected;
  {
    auto store = OpenStore("straight");
    expected = RunTaskSearch(*store, "run", task_, seeds_, straight, options);
  }
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int64_t k : {5, 31}) {
    SCOPED_TRACE(fmt::format("interrupted after {} evaluations", k));
    ScreeningEvaluator evaluator(landscape_);
    const std::string name = fmt::format("cut{}", k);
    {
      auto store = OpenStore(name);
      SearchLoopOptions interrupted = options;
      interrupted.stop_after_evaluations = k;
      auto first = RunTaskSearch(*store, "run", task_, seeds_, evaluator, interrupted);
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_EQ(first->stop_reason, "interrupted");
    }
    auto store = OpenStore(name);
    auto second = RunTaskSearch(*store, "run", task_, seeds_, evaluator, options);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
    EXPECT_DOUBLE_EQ(second->best_fitness, expected->best_fitness);
    EXPECT_EQ(second->evaluations, expected->evaluations);
    EXPECT_EQ(evaluator.screened_by_id, straight.screened_by_id) << "the same children screened, each once";
    EXPECT_EQ(evaluator.calls_by_id, straight.calls_by_id) << "the same timed in full, each once";
  }
}

}  // namespace
}  // namespace sparseditto
