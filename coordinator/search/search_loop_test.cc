// The search loop over a real RocksDB store in a temp folder, with the real seed library and the
// deterministic fake evaluator: it improves on the seeds, resumes after an interruption to the same end
// as an uninterrupted run, and never evaluates a candidate (or a duplicate source) twice.
#include "coordinator/search/search_loop.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/shared_gpu.h"
#include "common/status_format.h"
#include "coordinator/search/stored_search.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/store_test.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using testing::CountingEvaluator;
using testing::Landscape;
using testing::SmallTask;

std::vector<SeedKernel> RealSeeds() {
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  return seeds.ok() ? *seeds : std::vector<SeedKernel>{};
}

SearchLoopOptions Options() { return testing::TestLoopOptions(); }

class SearchLoopTest : public testing::StoreTest {
 protected:
  SearchLoopTest() : StoreTest("search_loop_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    seeds_ = RealSeeds();
  }

  // The search of `task` in a store of its own ("straight"), start to end.
  absl::StatusOr<SearchSummary> UninterruptedRun(const v1::Task& task, CountingEvaluator& evaluator) {
    auto store = OpenStore("straight");
    return RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
  }

  void ExpectEachOnce(const CountingEvaluator& e) {
    for (const auto& [id, n] : e.calls_by_id) EXPECT_EQ(n, 1) << id;
    for (const auto& [hash, n] : e.fake.calls_by_hash()) EXPECT_EQ(n, 1) << hash;
  }

  std::vector<SeedKernel> seeds_;
};

TEST_F(SearchLoopTest, FindsABetterCandidateThanTheBestSeed) {
  const v1::Task task = SmallTask(60);
  CountingEvaluator evaluator(Landscape(task, seeds_));
  auto seeded = SeedCandidates(task, seeds_);
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  ASSERT_GE(seeded->size(), 2u);
  double best_seed = 0;
  for (const v1::Candidate& c : *seeded) best_seed = std::max(best_seed, evaluator.fake.Score(c).fitness());

  auto store = OpenStore("a");
  auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason, "evaluations");
  EXPECT_EQ(summary->evaluations, 60);
  EXPECT_EQ(summary->evaluations_this_call, 60);
  EXPECT_FALSE(summary->resumed);
  EXPECT_GT(summary->best_fitness, best_seed * 1.5) << "best seed " << best_seed;
  EXPECT_EQ(evaluator.fake.calls(), 60);
  ExpectEachOnce(evaluator);

  // The stored coordinator state is the one record of the best and of what was spent.
  auto stored = ReadStoredSearch(*store, "run", task.name());
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->search.best_candidate_id(), summary->best_candidate_id);
  EXPECT_DOUBLE_EQ(stored->search.best_fitness(), summary->best_fitness);
  EXPECT_EQ(stored->search.spent().evaluations(), 60);
  EXPECT_EQ(stored->state->status(), store::TASK_RUN_STATUS_BUDGET_EXHAUSTED);
  EXPECT_EQ(stored->state->status_detail(), "max_evaluations 60 reached");
  auto best = store->GetEvaluation("run", summary->best_candidate_id);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_DOUBLE_EQ(best->fitness(), summary->best_fitness);
  std::printf("best seed %.4f, best after 60 evaluations %.4f (%s)\n", best_seed, summary->best_fitness,
              summary->best_candidate_id.c_str());
}

TEST_F(SearchLoopTest, DuplicatesNeverReachTheEvaluatorAndAreNotStored) {
  const v1::Task task = SmallTask(200);
  CountingEvaluator evaluator(Landscape(task, seeds_));
  auto store = OpenStore("d");
  // A seed listed twice under another name is a duplicate at seeding; the built-in mutator plans none
  // (it knows the duplicate index), so that copy is the only one.
  std::vector<SeedKernel> seeds = seeds_;
  for (const SeedKernel& seed : seeds_) {
    if (seed.name != "csr_warp_per_row") continue;
    seeds.push_back(seed);
    seeds.back().name = "copy_of_csr_warp_per_row";
  }
  auto summary = RunTaskSearch(*store, "run", task, seeds, evaluator, Options());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->duplicates, 1) << "the dedup path ran once, for the copied seed";
  EXPECT_EQ(evaluator.fake.calls(), summary->evaluations);
  ExpectEachOnce(evaluator);
  auto stored = store->ListCandidates("run", task.name());
  ASSERT_TRUE(stored.ok()) << stored.status();
  // Every seed is stored when the run starts, the copy too; no duplicate child is stored.
  EXPECT_EQ(static_cast<int64_t>(stored->size()), summary->evaluations + 1);
  for (const v1::Candidate& c : *stored) {
    if (c.seed_name() == "copy_of_csr_warp_per_row") continue;
    EXPECT_TRUE(store->GetEvaluation("run", c.id()).ok()) << c.id();
  }
}

TEST_F(SearchLoopTest, ResumeAfterAnInterruptionEndsLikeAnUninterruptedRun) {
  const v1::Task task = SmallTask(60);
  CountingEvaluator straight(Landscape(task, seeds_));
  const absl::StatusOr<SearchSummary> expected = UninterruptedRun(task, straight);
  ASSERT_TRUE(expected.ok()) << expected.status();
  // k = 2: inside the seeds; k = 23 and 41: inside the mutation loop.
  for (int64_t k : {2, 23, 41}) {
    SCOPED_TRACE(fmt::format("interrupted after {} evaluations", k));
    CountingEvaluator evaluator(Landscape(task, seeds_));
    const std::string name = fmt::format("k{}", k);
    {
      auto store = OpenStore(name);
      SearchLoopOptions interrupted = Options();
      interrupted.stop_after_evaluations = k;
      auto first = RunTaskSearch(*store, "run", task, seeds_, evaluator, interrupted);
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_EQ(first->stop_reason, "interrupted");
      EXPECT_EQ(first->evaluations_this_call, k);
      EXPECT_EQ(first->evaluations, k);
    }  // the store is closed, as by the end of a process
    auto store = OpenStore(name);
    auto second = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_TRUE(second->resumed);
    EXPECT_EQ(second->stop_reason, expected->stop_reason);
    EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
    EXPECT_DOUBLE_EQ(second->best_fitness, expected->best_fitness);
    EXPECT_EQ(second->evaluations, expected->evaluations);
    EXPECT_EQ(second->duplicates, expected->duplicates);
    EXPECT_EQ(second->evaluations_this_call, expected->evaluations - k);
    EXPECT_FALSE(second->reevaluated_in_flight.empty()) << "the interruption left the candidate due in flight";
    EXPECT_EQ(evaluator.fake.calls(), straight.fake.calls());
    EXPECT_EQ(evaluator.calls_by_id, straight.calls_by_id) << "the same candidates, each once";
    ExpectEachOnce(evaluator);

    // A finished search called again evaluates nothing and reports the same end.
    auto third = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
    ASSERT_TRUE(third.ok()) << third.status();
    EXPECT_EQ(third->evaluations_this_call, 0);
    EXPECT_EQ(third->best_candidate_id, expected->best_candidate_id);
  }
}

// Gap (a): the seeds used to be evaluated before the budget was checked. Every budget, below and
// above the number of applicable seeds, ends at exactly that many evaluations.
// compile_ahead = 4: batches of up to four children are stored in one write, prefetched together and
// evaluated in order; the budget stays exact, nothing is evaluated twice, and an interruption inside a
// batch resumes (the rest of the batch first) to the end of the uninterrupted batched run.
TEST_F(SearchLoopTest, BatchedChildrenKeepTheBudgetAndResumeLikeAnUninterruptedRun) {
  const v1::Task task = SmallTask(60);
  SearchLoopOptions batched = Options();
  batched.compile_ahead = 4;
  CountingEvaluator straight(Landscape(task, seeds_));
  absl::StatusOr<SearchSummary> expected;
  {
    auto store = OpenStore("straight");
    expected = RunTaskSearch(*store, "run", task, seeds_, straight, batched);
  }
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(expected->evaluations, 60);
  ExpectEachOnce(straight);
  ASSERT_GE(straight.prefetched.size(), 2u);  // the seeds, then the children's batches
  size_t largest = 0;
  int64_t prefetched_children = 0;
  for (size_t b = 1; b < straight.prefetched.size(); ++b) {
    largest = std::max(largest, straight.prefetched[b].size());
    prefetched_children += static_cast<int64_t>(straight.prefetched[b].size());
    for (const std::string& id : straight.prefetched[b]) EXPECT_EQ(straight.calls_by_id[id], 1) << id;
  }
  EXPECT_EQ(largest, 4u);
  EXPECT_EQ(prefetched_children + static_cast<int64_t>(straight.prefetched[0].size()), 60)
      << "every evaluation was prefetched once, none beyond the budget";

  for (int64_t k : {2, 23, 41}) {
    SCOPED_TRACE(fmt::format("interrupted after {} evaluations", k));
    CountingEvaluator evaluator(Landscape(task, seeds_));
    const std::string name = fmt::format("b{}", k);
    {
      auto store = OpenStore(name);
      SearchLoopOptions interrupted = batched;
      interrupted.stop_after_evaluations = k;
      auto first = RunTaskSearch(*store, "run", task, seeds_, evaluator, interrupted);
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_EQ(first->stop_reason, "interrupted");
      EXPECT_EQ(first->evaluations, k);
    }
    auto store = OpenStore(name);
    auto second = RunTaskSearch(*store, "run", task, seeds_, evaluator, batched);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
    EXPECT_DOUBLE_EQ(second->best_fitness, expected->best_fitness);
    EXPECT_EQ(second->evaluations, expected->evaluations);
    EXPECT_EQ(second->stop_reason, expected->stop_reason);
    EXPECT_EQ(evaluator.calls_by_id, straight.calls_by_id) << "the same candidates, each once";
  }
}

TEST_F(SearchLoopTest, TheEvaluationBudgetIsExactEvenInsideTheSeeds) {
  auto seeded = SeedCandidates(SmallTask(1), seeds_);
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  const int64_t seeds = static_cast<int64_t>(seeded->size());
  ASSERT_GE(seeds, 3);
  for (int64_t budget : {int64_t{1}, seeds - 1, seeds, seeds + 1, seeds + 7}) {
    SCOPED_TRACE(fmt::format("max_evaluations {} with {} seeds", budget, seeds));
    const v1::Task task = SmallTask(budget);
    CountingEvaluator evaluator(Landscape(task, seeds_));
    auto store = OpenStore(fmt::format("budget{}", budget));
    auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->stop_reason, "evaluations");
    EXPECT_EQ(summary->evaluations, budget);
    EXPECT_EQ(evaluator.fake.calls(), budget);
    auto state = store->GetRunState("run", task.name());
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_TRUE(state->in_flight_candidate_id().empty());
    EXPECT_EQ(state->status(), store::TASK_RUN_STATUS_BUDGET_EXHAUSTED);
  }
}

// Evaluations timed while other work shared the GPU are counted in the summary (the CLI warns with it):
// the candidate's own timing or a baseline's, and only those of this call.
TEST_F(SearchLoopTest, EvaluationsTimedOnASharedGpuAreCounted) {
  class SharedEveryOther : public CountingEvaluator {
   public:
    using CountingEvaluator::CountingEvaluator;
    v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
      v1::EvalResult result = CountingEvaluator::Evaluate(task, candidate, seed);
      ++calls_;
      v1::TimingStats* own = result.add_timings();
      own->set_host_idle_median_ms(calls_ % 3 == 0 ? kSharedGpuIdleSlackMs * 5 : kSharedGpuIdleSlackMs);
      v1::BaselineTime* dense = (*result.mutable_baselines())[16].add_baselines();
      dense->mutable_timing()->set_host_idle_median_ms(calls_ % 3 == 1 ? kSharedGpuIdleSlackMs * 2 : 0.02);
      return result;
    }
    int calls_ = 0;
  };
  const v1::Task task = SmallTask(9);
  SharedEveryOther evaluator(Landscape(task, seeds_));
  auto store = OpenStore("shared");
  auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->evaluations_this_call, 9);
  EXPECT_EQ(summary->shared_gpu_evaluations_this_call, 6) << "calls 1, 3, 4, 6, 7, 9: the baseline's or the kernel's";
}

// Gap (b): a crash after an evaluation and before its commit. The candidate is recorded in flight
// before it is evaluated; on resume it is evaluated again exactly once and counted once, and the
// search ends as an uninterrupted one. The crash is a failed CommitEvaluation write (the evaluation
// ran, nothing of it is stored), then the store is closed and reopened.
TEST_F(SearchLoopTest, ACandidateLeftInFlightIsEvaluatedOnceMoreAndCountedOnce) {
  const v1::Task task = SmallTask(40);
  CountingEvaluator straight(Landscape(task, seeds_));
  const absl::StatusOr<SearchSummary> expected = UninterruptedRun(task, straight);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int fail_at : {3, 17}) {  // the 3rd commit is a seed's, the 17th a child's
    SCOPED_TRACE(fmt::format("commit {} fails", fail_at));
    CountingEvaluator evaluator(Landscape(task, seeds_));
    const std::string name = fmt::format("crash{}", fail_at);
    std::string lost;
    {
      PopulationStoreOptions o;
      o.create_if_missing = true;
      int commits = 0;
      o.before_write = [&](std::string_view operation) {
        if (operation == "CommitEvaluation" && ++commits == fail_at) return absl::UnavailableError("power cut");
        return absl::OkStatus();
      };
      auto store = PopulationStore::Open((root_ / name).string(), o);
      ASSERT_TRUE(store.ok()) << store.status();
      auto first = RunTaskSearch(**store, "run", task, seeds_, evaluator, Options());
      EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable) << first.status();
      auto state = (*store)->GetRunState("run", task.name());
      ASSERT_TRUE(state.ok()) << state.status();
      lost = state->in_flight_candidate_id();
      ASSERT_FALSE(lost.empty());
      EXPECT_EQ(evaluator.calls_by_id[lost], 1);
    }
    auto store = OpenStore(name);
    auto second = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(second->reevaluated_in_flight, lost);
    EXPECT_EQ(evaluator.calls_by_id[lost], 2) << "evaluated once more";
    for (const auto& [id, n] : evaluator.calls_by_id) {
      EXPECT_EQ(n, id == lost ? 2 : 1) << id;
    }
    EXPECT_EQ(second->evaluations, expected->evaluations) << "counted once";
    EXPECT_EQ(evaluator.fake.calls(), straight.fake.calls() + 1);
    EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
    EXPECT_DOUBLE_EQ(second->best_fitness, expected->best_fitness);
  }
}

TEST_F(SearchLoopTest, ResumesFromAMovedTaskFile) {
  v1::Task task = SmallTask(12);
  task.set_source_file("/old/place/tasks.yaml");
  task.set_source_line(2);
  CountingEvaluator evaluator(Landscape(task, seeds_));
  auto store = OpenStore("moved");
  SearchLoopOptions interrupted = Options();
  interrupted.stop_after_evaluations = 5;
  ASSERT_TRUE(RunTaskSearch(*store, "run", task, seeds_, evaluator, interrupted).ok());
  task.set_source_file("/new/place/renamed.yaml");
  task.set_source_line(40);
  auto resumed = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->evaluations, 12);
}

TEST_F(SearchLoopTest, RefusesAStoredTaskWithOtherContent) {
  CountingEvaluator evaluator(Landscape(SmallTask(10), seeds_));
  auto store = OpenStore("t");
  ASSERT_TRUE(RunTaskSearch(*store, "run", SmallTask(10), seeds_, evaluator, Options()).ok());
  auto other = RunTaskSearch(*store, "run", SmallTask(20), seeds_, evaluator, Options());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument) << other.status();
}

}  // namespace
}  // namespace sparseditto
