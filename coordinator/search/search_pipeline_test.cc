// The loop over a pipeline of several takers (SearchLoopOptions::pipeline, local_pipeline.h): jobs run
// on three fake evaluators at once, results are committed in the window's order, and so the search
// makes exactly the choices and records of a one-taker run (no child evaluated twice, the budget
// exact); a screened search cut part-way resumes, with the bars its children were submitted against
// (RunState.in_flight_screen_bars), to the end of the uninterrupted one.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/search/local_pipeline.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/store_test.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using testing::CountingEvaluator;

// Each taker's own evaluator (none is shared between threads), over one landscape.
struct Takers {
  explicit Takers(const testing::FakeLandscape& landscape, int k) {
    for (int i = 0; i < k; ++i) evaluators.push_back(std::make_unique<CountingEvaluator>(landscape));
    std::vector<CandidateEvaluator*> raw;
    for (auto& e : evaluators) raw.push_back(e.get());
    pipeline = std::make_unique<LocalEvaluationPipeline>(raw);
  }
  // The calls of every taker, summed by candidate id; only after the pipeline is gone.
  std::map<std::string, int> Calls() {
    pipeline.reset();
    std::map<std::string, int> all;
    for (auto& e : evaluators) {
      for (const auto& [id, n] : e->calls_by_id) all[id] += n;
    }
    return all;
  }
  std::vector<std::unique_ptr<CountingEvaluator>> evaluators;
  std::unique_ptr<LocalEvaluationPipeline> pipeline;
};

class SearchPipelineTest : public testing::StoreTest {
 protected:
  SearchPipelineTest() : StoreTest("search_pipeline_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *seeds;
    task_ = testing::SmallTask(60);
    landscape_ = testing::Landscape(task_, seeds_);
    landscape_.n_values = {16, 128, 2048};
    landscape_.speed_at_n["csr_warp_per_row"] = {{16, 1.6}, {2048, 0.5}};
  }
  // Every stored evaluation of the run's task, by candidate id, as bytes.
  std::map<std::string, std::string> Stored(PopulationStore& store) {
    std::map<std::string, std::string> out;
    auto candidates = store.ListCandidates("run", task_.name());
    EXPECT_TRUE(candidates.ok());
    if (!candidates.ok()) return out;
    for (const v1::Candidate& c : *candidates) {
      if (auto e = store.GetEvaluation("run", c.id()); e.ok()) {
        v1::EvalResult r = *e;
        out[c.id()] = fmt::format("{} {} {}", r.fitness(), static_cast<int>(r.failure()), r.timing_screen());
      }
    }
    return out;
  }
  std::vector<SeedKernel> seeds_;
  v1::Task task_;
  testing::FakeLandscape landscape_;
};

TEST_F(SearchPipelineTest, ThreeTakersMakeTheChoicesAndRecordsOfOne) {
  SearchLoopOptions options = testing::TestLoopOptions();
  options.compile_ahead = 6;
  CountingEvaluator alone(landscape_);
  auto store1 = OpenStore("one");
  auto expected = RunTaskSearch(*store1, "run", task_, seeds_, alone, options);
  ASSERT_TRUE(expected.ok()) << expected.status();

  Takers takers(landscape_, 3);
  SearchLoopOptions parallel = options;
  parallel.pipeline = takers.pipeline.get();
  auto store3 = OpenStore("three");
  auto summary = RunTaskSearch(*store3, "run", task_, seeds_, *takers.evaluators[0], parallel);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->evaluations, expected->evaluations);
  EXPECT_EQ(summary->best_candidate_id, expected->best_candidate_id);
  EXPECT_DOUBLE_EQ(summary->best_fitness, expected->best_fitness);
  EXPECT_EQ(summary->plan_candidate_id, expected->plan_candidate_id);
  EXPECT_EQ(summary->finalist_candidate_id, expected->finalist_candidate_id);
  EXPECT_EQ(Stored(*store3), Stored(*store1)) << "the same candidates with the same results";
  const std::map<std::string, int> calls = takers.Calls();
  EXPECT_EQ(calls, alone.calls_by_id) << "each evaluated once, the same ones";
  int takers_used = 0;
  for (auto& e : takers.evaluators) takers_used += e->calls_by_id.empty() ? 0 : 1;
  EXPECT_GE(takers_used, 1);
}

// The fake's screen (as search_screen_test's): the verdict with timing_screen set and its fitness
// off by a candidate-dependent factor within +-6%, so that the bar decides which are timed again.
// A bar as text, its per-n times in order of n (a proto map's serialised order is not fixed).
std::string BarText(const v1::ScreenBar& bar) {
  std::string text = fmt::format("margin {} elite {}", bar.margin(), bar.elite_fitness());
  const std::map<int64_t, double> by_n(bar.elite_ms_by_n().begin(), bar.elite_ms_by_n().end());
  for (const auto& [n, ms] : by_n) text += fmt::format(" n={}:{}", n, ms);
  return text;
}

using testing::ScreeningEvaluator;

TEST_F(SearchPipelineTest, ACutScreenedSearchOverThreeTakersResumesToTheUninterruptedEnd) {
  SearchLoopOptions options = testing::TestLoopOptions();
  options.compile_ahead = 6;
  // One call (or a cut call, then a resumed one), each on a pipeline of its own, as a new process would.
  struct Outcome {
    SearchSummary summary;
    std::map<std::string, std::string> records;
    std::map<std::string, std::string> bars;  // the bar of each child's last screen
  };
  auto run = [&](const std::string& name, int64_t cut) {
    Outcome out;
    absl::Mutex mutex;
    auto call = [&](int64_t stop_after) {
      std::vector<std::unique_ptr<ScreeningEvaluator>> evaluators;
      for (int i = 0; i < 3; ++i) {
        evaluators.push_back(std::make_unique<ScreeningEvaluator>(landscape_));
        evaluators.back()->on_screen = [&](const std::string& id, const v1::ScreenBar& bar) {
          absl::MutexLock lock(&mutex);
          out.bars[id] = BarText(bar);  // the last screen of each child
        };
      }
      LocalEvaluationPipeline pipeline({evaluators[0].get(), evaluators[1].get(), evaluators[2].get()});
      SearchLoopOptions o = options;
      o.pipeline = &pipeline;
      o.stop_after_evaluations = stop_after;
      auto store = OpenStore(name);
      auto summary = RunTaskSearch(*store, "run", task_, seeds_, *evaluators[0], o);
      EXPECT_TRUE(summary.ok()) << summary.status();
      if (summary.ok()) out.summary = *summary;
      out.records = Stored(*store);
    };  // the pipeline joins its takers before the evaluators go
    if (cut > 0) {
      call(cut);
      EXPECT_EQ(out.summary.stop_reason, "interrupted");
    }
    call(0);
    return out;
  };
  const Outcome expected = run("straight", 0);
  EXPECT_GT(expected.summary.throughput.screened, 0);
  for (int64_t cut : {7, 15, 16, 33}) {  // 15 and 16: just after the bar moved, so its children in flight carry older bars
    SCOPED_TRACE(fmt::format("cut after {} evaluations", cut));
    const Outcome resumed = run(fmt::format("cut{}", cut), cut);
    EXPECT_EQ(resumed.summary.evaluations, expected.summary.evaluations);
    EXPECT_EQ(resumed.summary.best_candidate_id, expected.summary.best_candidate_id);
    EXPECT_DOUBLE_EQ(resumed.summary.best_fitness, expected.summary.best_fitness);
    EXPECT_EQ(resumed.records, expected.records) << "the same children, screened or timed in full as before";
    EXPECT_EQ(resumed.bars, expected.bars) << "each child screened against the bar of the point it was submitted at";
  }
}

}  // namespace
}  // namespace sparseditto
