// The search loop over a real RocksDB store in a temp folder, with the real seed library and the
// deterministic fake evaluator: it improves on the seeds, resumes after an interruption to the same end
// as an uninterrupted run, and never evaluates a candidate (or a duplicate source) twice.
#include "coordinator/search/search_loop.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status_format.h"
#include "coordinator/testing/fake_evaluator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {
namespace {

using testing::FakeEvaluator;
using testing::FakeLandscape;

std::vector<SeedKernel> RealSeeds() {
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  return seeds.ok() ? *seeds : std::vector<SeedKernel>{};
}

v1::Task SmallTask(int64_t max_evaluations) {
  v1::Task task;
  task.set_name("small");
  task.set_seed(77);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.add_arch("sm_90");
  task.mutable_budget()->set_max_evaluations(max_evaluations);
  task.mutable_budget()->set_stagnation_evaluations(1000);
  return task;
}

// Every applicable seed gets an optimum away from its defaults (half the list further on), so that
// the seeds score low and the search has somewhere to go.
FakeLandscape Landscape(const v1::Task& task, const std::vector<SeedKernel>& seeds) {
  FakeLandscape l;
  for (const SeedKernel& seed : seeds) {
    if (!SeedAppliesTo(seed, task)) continue;
    auto tunables = ParseTunables(seed.source);
    EXPECT_TRUE(tunables.ok()) << tunables.status();
    if (!tunables.ok()) continue;
    for (const v1::Tunable& t : *tunables) {
      const int n = t.allowed_values_size();
      int at = 0;
      for (int i = 0; i < n; ++i) at = t.allowed_values(i) == t.value() ? i : at;
      l.optimum[seed.name][t.name()] = t.allowed_values((at + n / 2) % n);
    }
    l.peak[seed.name] = seed.name == "csr_warp_per_row" ? 3.0 : 1.0;
  }
  l.width = 0.5;
  return l;
}

SearchLoopOptions Options() {
  SearchLoopOptions o;
  o.coordinator.num_islands = 2;
  o.coordinator.island_capacity = 8;
  o.coordinator.evaluations_per_generation = 6;
  o.coordinator.migration_interval = 2;
  o.coordinator.crossover_probability = 0.25;
  return o;
}

// The seam: counts calls by candidate id and by source hash (in the fake).
class CountingEvaluator : public CandidateEvaluator {
 public:
  explicit CountingEvaluator(FakeLandscape landscape) : fake(std::move(landscape)) {}
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    ++calls_by_id[candidate.id()];
    return fake.Evaluate(candidate);
  }
  FakeEvaluator fake;
  std::map<std::string, int> calls_by_id;
};

class SearchLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            fmt::format("search_loop_test.{}.{}", getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    seeds_ = RealSeeds();
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<PopulationStore> OpenStore(const std::string& name) {
    PopulationStoreOptions o;
    o.create_if_missing = true;
    auto store = PopulationStore::Open((root_ / name).string(), o);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  void ExpectEachOnce(const CountingEvaluator& e) {
    for (const auto& [id, n] : e.calls_by_id) EXPECT_EQ(n, 1) << id;
    for (const auto& [hash, n] : e.fake.calls_by_hash()) EXPECT_EQ(n, 1) << hash;
  }

  std::filesystem::path root_;
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

  auto state = store->GetRunState("run", task.name());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->best_candidate_id(), summary->best_candidate_id);
  EXPECT_DOUBLE_EQ(state->best_fitness(), summary->best_fitness);
  EXPECT_EQ(state->spent().evaluations(), 60);
  EXPECT_EQ(state->status(), store::TASK_RUN_STATUS_BUDGET_EXHAUSTED);
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
  auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, Options());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_GT(summary->duplicates, 0) << "the dedup path ran";
  EXPECT_EQ(evaluator.fake.calls(), summary->evaluations);
  ExpectEachOnce(evaluator);
  auto stored = store->ListCandidates("run", task.name());
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(static_cast<int64_t>(stored->size()), summary->evaluations);
  for (const v1::Candidate& c : *stored) EXPECT_TRUE(store->GetEvaluation("run", c.id()).ok()) << c.id();
}

TEST_F(SearchLoopTest, ResumeAfterAnInterruptionEndsLikeAnUninterruptedRun) {
  const v1::Task task = SmallTask(60);
  CountingEvaluator straight(Landscape(task, seeds_));
  absl::StatusOr<SearchSummary> expected;
  {
    auto store = OpenStore("straight");
    expected = RunTaskSearch(*store, "run", task, seeds_, straight, Options());
    ASSERT_TRUE(expected.ok()) << expected.status();
  }
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

TEST_F(SearchLoopTest, RefusesAStoredTaskWithOtherContent) {
  CountingEvaluator evaluator(Landscape(SmallTask(10), seeds_));
  auto store = OpenStore("t");
  ASSERT_TRUE(RunTaskSearch(*store, "run", SmallTask(10), seeds_, evaluator, Options()).ok());
  auto other = RunTaskSearch(*store, "run", SmallTask(20), seeds_, evaluator, Options());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument) << other.status();
}

}  // namespace
}  // namespace sparseditto
