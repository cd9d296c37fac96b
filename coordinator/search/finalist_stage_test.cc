// The finalist stage: its order, its resumable attempts and its description (pure), and a whole search
// over a real RocksDB store with the fake evaluator whose best seed fails the finalist checks.
#include "coordinator/search/finalist_stage.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "coordinator/search/search_loop.h"
#include "coordinator/search/stored_search.h"
#include "coordinator/testing/search_fixture.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::EvalResult Outcome(v1::EvalStage stage, v1::FailureCategory failure, const std::string& detail = "") {
  v1::EvalResult r;
  r.set_stage_reached(stage);
  r.set_failure(failure);
  r.set_failure_detail(detail);
  return r;
}

TEST(FinalistStage, PassesOnlyADoneCorrectOrSlowerResult) {
  EXPECT_TRUE(PassedFinalistChecks(Outcome(v1::EVAL_STAGE_DONE, v1::FAILURE_CATEGORY_NONE)));
  EXPECT_TRUE(PassedFinalistChecks(Outcome(v1::EVAL_STAGE_DONE, v1::FAILURE_CATEGORY_SLOWER)));
  EXPECT_FALSE(PassedFinalistChecks(Outcome(v1::EVAL_STAGE_FINALIST, v1::FAILURE_CATEGORY_CRASH)));
  EXPECT_FALSE(PassedFinalistChecks(Outcome(v1::EVAL_STAGE_UNSPECIFIED, v1::FAILURE_CATEGORY_INTERNAL)));
  EXPECT_FALSE(PassedFinalistChecks(Outcome(v1::EVAL_STAGE_TIMING, v1::FAILURE_CATEGORY_WRONG)));
}

// Table: which candidates the stage evaluates, given what earlier calls stored and what fails.
TEST(FinalistStage, TriesInOrderUntilOnePassesAndSkipsWhatWasStored) {
  struct Case {
    const char* name;
    std::vector<std::string> stored_failed, stored_passed, failing;
    std::vector<std::string> evaluated;
    std::string passed;
  };
  const std::vector<std::string> order = {"a", "b", "c"};
  const Case cases[] = {
      {"the best passes", {}, {}, {}, {"a"}, "a"},
      {"the best fails, the next passes", {}, {}, {"a"}, {"a", "b"}, "b"},
      {"all fail", {}, {}, {"a", "b", "c"}, {"a", "b", "c"}, ""},
      {"resumed after a's failure was stored", {"a"}, {}, {"a"}, {"b"}, "b"},
      {"resumed after b passed", {"a"}, {"b"}, {"a"}, {}, "b"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FinalistAttempts attempts;
    for (const std::string& id : c.stored_failed) attempts.Add()->set_candidate_id(id);
    for (const std::string& id : c.stored_passed) {
      store::FinalistAttempt* a = attempts.Add();
      a->set_candidate_id(id);
      a->set_passed(true);
    }
    std::vector<std::string> evaluated;
    int stores = 0;
    auto evaluate = [&](const std::string& id) {
      evaluated.push_back(id);
      const bool fails = std::find(c.failing.begin(), c.failing.end(), id) != c.failing.end();
      return fails ? Outcome(v1::EVAL_STAGE_FINALIST, v1::FAILURE_CATEGORY_CRASH, "racecheck")
                   : Outcome(v1::EVAL_STAGE_DONE, v1::FAILURE_CATEGORY_NONE);
    };
    ASSERT_TRUE(RunFinalistStage(order, evaluate, [&] { ++stores; return absl::OkStatus(); }, &attempts).ok());
    EXPECT_EQ(evaluated, c.evaluated);
    EXPECT_EQ(stores, static_cast<int>(c.evaluated.size())) << "every new attempt is stored at once";
    store::RunState state;
    *state.mutable_finalist_attempts() = attempts;
    const store::FinalistAttempt* passed = PassedAttempt(state.finalist_attempts());
    EXPECT_EQ(passed == nullptr ? "" : passed->candidate_id(), c.passed);
  }
}

TEST(FinalistStage, AStoreErrorEndsTheStageWithIt) {
  FinalistAttempts attempts;
  int evaluated = 0;
  absl::Status s = RunFinalistStage(
      {"a", "b"}, [&](const std::string&) { ++evaluated; return Outcome(v1::EVAL_STAGE_FINALIST, v1::FAILURE_CATEGORY_CRASH); },
      [] { return absl::UnavailableError("disk full"); }, &attempts);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(evaluated, 1);
}

TEST(FinalistStage, DescribesThePassOrEveryFailure) {
  store::RunState state;
  EXPECT_EQ(DescribeFinalists(state.finalist_attempts()), "");
  store::FinalistAttempt* a = state.add_finalist_attempts();
  a->set_candidate_id("t.000007");
  a->set_result(Outcome(v1::EVAL_STAGE_FINALIST, v1::FAILURE_CATEGORY_CRASH, "racecheck reported errors").SerializeAsString());
  EXPECT_EQ(DescribeFinalists(state.finalist_attempts()),
            "none of 1 passed the finalist checks (t.000007: FAILURE_CATEGORY_CRASH: racecheck reported errors)");
  store::FinalistAttempt* b = state.add_finalist_attempts();
  b->set_candidate_id("t.000003");
  b->set_passed(true);
  EXPECT_EQ(DescribeFinalists(state.finalist_attempts()),
            "t.000003 passed the finalist checks; 1 before it failed (t.000007: FAILURE_CATEGORY_CRASH: racecheck "
            "reported errors)");
}

// A whole search: the best candidate's seed fails the finalist checks, so the stage goes down the
// archive to the best of another seed; a second call on the finished search runs nothing again.
TEST(FinalistStageSearch, TheBestThatPassesIsNamedAndStored) {
  const std::filesystem::path root =
      std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / fmt::format("finalist_stage_test.{}", getpid());
  std::filesystem::remove_all(root);
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  auto open = [&](const std::string& name) {
    PopulationStoreOptions o;
    o.create_if_missing = true;
    return PopulationStore::Open((root / name).string(), o);
  };
  const v1::Task task = testing::SmallTask(30);
  SearchLoopOptions options = testing::TestLoopOptions();

  // First, with no failures, to learn the best candidate and its seed.
  testing::CountingEvaluator clean(testing::Landscape(task, *seeds));
  auto store_a = open("a");
  ASSERT_TRUE(store_a.ok()) << store_a.status();
  auto first = RunTaskSearch(**store_a, "run", task, *seeds, clean, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(clean.finalist_ids, ElementsAre(first->best_candidate_id));
  EXPECT_EQ(first->finalist_candidate_id, first->best_candidate_id);
  EXPECT_EQ(first->finalists, first->best_candidate_id + " passed the finalist checks");
  auto best = (*store_a)->GetCandidate("run", first->best_candidate_id);
  ASSERT_TRUE(best.ok()) << best.status();

  // Then the same search with the best's seed failing the finalist checks.
  testing::FakeLandscape landscape = testing::Landscape(task, *seeds);
  landscape.finalist_failing_seeds = {best->seed_name()};
  testing::CountingEvaluator racy(landscape);
  auto store_b = open("b");
  ASSERT_TRUE(store_b.ok()) << store_b.status();
  std::vector<FinalistProgress> reported;  // what a person watching is told before each attempt
  SearchLoopOptions watched = options;
  watched.on_finalist = [&](const FinalistProgress& f) { reported.push_back(f); };
  auto second = RunTaskSearch(**store_b, "run", task, *seeds, racy, watched);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->best_candidate_id, first->best_candidate_id) << "the stage does not change the search";
  ASSERT_GE(racy.finalist_ids.size(), 2u);
  EXPECT_EQ(racy.finalist_ids.front(), first->best_candidate_id);
  EXPECT_EQ(second->finalist_candidate_id, racy.finalist_ids.back());
  auto passed = (*store_b)->GetCandidate("run", second->finalist_candidate_id);
  ASSERT_TRUE(passed.ok()) << passed.status();
  EXPECT_NE(passed->seed_name(), best->seed_name());
  auto stored = ReadStoredSearch(**store_b, "run", task.name());
  ASSERT_TRUE(stored.ok() && stored->state) << stored.status();
  EXPECT_TRUE(stored->state->finalist_done());
  EXPECT_EQ(stored->state->finalist_attempts_size(), static_cast<int>(racy.finalist_ids.size()));
  EXPECT_THAT(stored->state->finalist_attempts(0).result(), HasSubstr("racecheck"));
  ASSERT_EQ(reported.size(), racy.finalist_ids.size());
  for (size_t i = 0; i < reported.size(); ++i) {
    EXPECT_EQ(reported[i].task_name, task.name());
    EXPECT_EQ(reported[i].candidate_id, racy.finalist_ids[i]);
    EXPECT_EQ(reported[i].attempt, static_cast<int>(i + 1));
    EXPECT_EQ(reported[i].max_finalists, options.max_finalists);
  }

  // Called again, the finished search runs no finalist checks and reports the same outcome.
  const size_t before = racy.finalist_ids.size();
  auto again = RunTaskSearch(**store_b, "run", task, *seeds, racy, watched);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(racy.finalist_ids.size(), before);
  EXPECT_EQ(reported.size(), before) << "nothing to report when no attempt is made";
  EXPECT_EQ(again->finalist_candidate_id, second->finalist_candidate_id);
  store_a->reset();
  store_b->reset();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sparseditto
