// bench-search over the fake evaluator: equal budgets per strategy, one evaluator and folder per run, the
// anytime CSV (its rows and monotone best so far), a plan of seeds that beats the seeds alone where
// different seeds win different n, the t interval, and an SVG that is well-formed XML.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/non_retryable.h"
#include "coordinator/search/search_bench.h"
#include "coordinator/search/search_bench_report.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/xml_check.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using testing::XmlProblem;

constexpr int64_t kBudget = 24;
constexpr int kReps = 3;

// Every evaluator the bench makes, with its calls by source hash, kept after the bench drops it.
struct Made {
  std::vector<std::shared_ptr<std::map<std::string, int>>> calls;
};

class SharedCountEvaluator : public CandidateEvaluator {
 public:
  SharedCountEvaluator(testing::FakeLandscape l, std::shared_ptr<std::map<std::string, int>> calls)
      : fake_(std::move(l)), calls_(std::move(calls)) {}
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& c, uint64_t) override {
    ++(*calls_)[c.source_hash()];
    return fake_.Evaluate(c);
  }

 private:
  testing::FakeEvaluator fake_;
  std::shared_ptr<std::map<std::string, int>> calls_;
};

// As plan_search_test: csr_warp_per_row (peak 3) wins n 16 and 128, another seed n 2048, the rest none.
struct World {
  v1::Task task;
  std::vector<SeedKernel> seeds;
  testing::FakeLandscape landscape;
};

World MakeWorld() {
  World w;
  w.task = testing::SmallTask(kBudget, "split");
  for (int64_t n : {16, 128, 2048}) w.task.add_n(n);
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  if (seeds.ok()) w.seeds = *seeds;
  w.landscape = testing::Landscape(w.task, w.seeds);
  w.landscape.n_values = {16, 128, 2048};
  std::string other;
  for (const auto& [seed, peak] : w.landscape.peak) {
    if (seed != "csr_warp_per_row" && other.empty()) other = seed;
  }
  for (const auto& [seed, peak] : w.landscape.peak) {
    if (seed != "csr_warp_per_row" && seed != other) w.landscape.speed_at_n[seed] = {{16, 0.1}, {128, 0.1}, {2048, 0.1}};
  }
  w.landscape.optimum.erase("csr_warp_per_row");
  w.landscape.optimum.erase(other);
  w.landscape.speed_at_n["csr_warp_per_row"] = {{2048, 0.2}};
  w.landscape.speed_at_n[other] = {{16, 0.3}, {128, 0.3}, {2048, 4.0}};
  return w;
}

SearchBenchOptions Options(const World& w, const std::filesystem::path& out, Made* made) {
  SearchBenchOptions o;
  o.out_dir = out.string();
  o.repetitions = kReps;
  o.loop = testing::TestLoopOptions();
  o.make_evaluator = [landscape = w.landscape, made]() -> absl::StatusOr<std::unique_ptr<CandidateEvaluator>> {
    made->calls.push_back(std::make_shared<std::map<std::string, int>>());
    return std::make_unique<SharedCountEvaluator>(landscape, made->calls.back());
  };
  return o;
}

class SearchBenchTest : public ::testing::Test {
 protected:
  testing_support::TempFolder folder_{"search_bench_test"};
};

TEST_F(SearchBenchTest, EqualBudgetsOwnFoldersMonotoneCurvesAndAPlanOfSeedsThatBeatsTheSeeds) {
  const World w = MakeWorld();
  Made made;
  const std::filesystem::path out = folder_.path() / "bench";
  SearchBenchOptions options = Options(w, out, &made);
  std::vector<std::string> done;  // what on_run_done saw, in order
  options.on_run_done = [&done](const StrategyRun& run) {
    done.push_back(fmt::format("{} rep{} {}", BenchStrategyName(run.strategy), run.repetition, run.evaluations));
  };
  absl::StatusOr<std::vector<TaskBench>> benches = RunSearchBench({w.task}, w.seeds, options);
  ASSERT_TRUE(benches.ok()) << benches.status();
  ASSERT_EQ(benches->size(), 1u);
  const TaskBench& bench = benches->front();
  ASSERT_EQ(bench.runs.size(), kAllBenchStrategies.size() * kReps);
  ASSERT_EQ(done.size(), bench.runs.size()) << "each run reported once, as it ends";
  for (size_t i = 0; i < done.size(); ++i) {
    const StrategyRun& run = bench.runs[i];
    EXPECT_EQ(done[i], fmt::format("{} rep{} {}", BenchStrategyName(run.strategy), run.repetition, run.evaluations));
  }
  ASSERT_EQ(made.calls.size(), bench.runs.size()) << "one evaluator per run";
  EXPECT_EQ(bench.budget_evaluations, kBudget);
  ASSERT_GT(bench.seed_count, 1);

  std::set<std::string> dirs;
  std::set<uint64_t> rep_seeds;
  for (size_t i = 0; i < bench.runs.size(); ++i) {
    const StrategyRun& run = bench.runs[i];
    SCOPED_TRACE(fmt::format("{} rep{}", BenchStrategyName(run.strategy), run.repetition));
    ASSERT_TRUE(run.ok) << run.error;
    rep_seeds.insert(run.seed);
    EXPECT_TRUE(dirs.insert(run.run_dir).second);
    EXPECT_TRUE(std::filesystem::exists(run.run_dir));
    int64_t calls = 0;
    for (const auto& [hash, n] : *made.calls[i]) {
      calls += n;
      EXPECT_EQ(n, 1) << "a source evaluated twice in one run";
    }
    EXPECT_EQ(calls, run.evaluations) << "the run's evaluations are its evaluator's calls";
    EXPECT_LE(run.evaluations, kBudget);
    switch (run.strategy) {
      case BenchStrategy::kSeeds: EXPECT_EQ(run.evaluations, bench.seed_count); break;
      case BenchStrategy::kSeedPlan: EXPECT_EQ(run.evaluations, bench.seed_count + 1) << run.stop; break;
      case BenchStrategy::kRandom:
      case BenchStrategy::kEvolution: EXPECT_EQ(run.evaluations, kBudget) << run.stop; break;
      case BenchStrategy::kEvolutionPlan: EXPECT_EQ(run.evaluations, kBudget) << "N - 1 and the plan: " << run.stop; break;
    }
    ASSERT_EQ(static_cast<int64_t>(run.curve.size()), run.evaluations);
    for (size_t k = 0; k < run.curve.size(); ++k) {
      EXPECT_EQ(run.curve[k].evaluation, static_cast<int64_t>(k) + 1);
      EXPECT_GE(run.curve[k].best, run.curve[k].fitness);
      if (k > 0) {
        EXPECT_GE(run.curve[k].best, run.curve[k - 1].best);
        EXPECT_GE(run.curve[k].seconds, run.curve[k - 1].seconds);
      }
    }
    EXPECT_DOUBLE_EQ(run.best_fitness, run.curve.back().best);
    if (run.strategy == BenchStrategy::kRandom) {
      std::ifstream jsonl(std::filesystem::path(run.run_dir) / "evaluations.jsonl");
      int64_t lines = 0;
      for (std::string line; std::getline(jsonl, line);) ++lines;
      EXPECT_EQ(lines, run.evaluations);
    } else {
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(run.run_dir) / "store"));
    }
  }
  EXPECT_EQ(rep_seeds.size(), static_cast<size_t>(kReps)) << "each repetition its own task seed";
  EXPECT_TRUE(rep_seeds.contains(w.task.seed())) << "repetition 0 keeps the task's seed";

  const std::vector<StrategySummary> summaries = SummariseTask(bench);
  const StrategySummary& seeds = summaries[static_cast<size_t>(BenchStrategy::kSeeds)];
  const StrategySummary& plan = summaries[static_cast<size_t>(BenchStrategy::kSeedPlan)];
  EXPECT_DOUBLE_EQ(seeds.ratio.geomean, 1.0);
  ASSERT_TRUE(seeds.ratio.has_interval);
  EXPECT_NEAR(seeds.ratio.low, 1.0, 1e-12);
  EXPECT_NEAR(seeds.ratio.high, 1.0, 1e-12);
  for (int r = 0; r < kReps; ++r) EXPECT_GT(plan.best[r], seeds.best[r] * 1.5) << "rep " << r;
  for (const StrategySummary& s : summaries) {
    if (s.strategy == BenchStrategy::kRandom) continue;  // the only one that need not evaluate the seeds
    for (int r = 0; r < kReps; ++r) EXPECT_GE(s.best[r], seeds.best[r]) << BenchStrategyName(s.strategy);
  }
  EXPECT_GT(plan.ratio.low, 1.5);
  EXPECT_EQ(seeds.wins, 0);
  int wins = 0;
  for (const StrategySummary& s : summaries) wins += s.wins;
  EXPECT_GE(wins, kReps);

  ASSERT_TRUE(WriteSearchBench(*benches, out.string()).ok());
  std::ifstream csv(out / "bench-search-anytime.csv");
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line, "task,strategy,repetition,seed,evaluation,seconds,fitness,best_so_far");
  std::map<std::string, std::vector<double>> best_by_run;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 8u) << line;
    std::vector<double>& best = best_by_run[f[1] + "/" + f[2]];
    EXPECT_EQ(std::stoll(f[4]), static_cast<int64_t>(best.size()) + 1) << line;
    if (!best.empty()) {
      EXPECT_GE(std::stod(f[7]), best.back()) << line;
    }
    best.push_back(std::stod(f[7]));
  }
  ASSERT_EQ(best_by_run.size(), bench.runs.size());
  for (const StrategyRun& run : bench.runs) {
    EXPECT_EQ(static_cast<int64_t>(best_by_run[fmt::format("{}/{}", BenchStrategyName(run.strategy), run.repetition)].size()),
              run.evaluations);
  }
  std::ifstream runs_csv(out / "bench-search-runs.csv");
  int64_t run_rows = -1;  // the header
  for (std::string row; std::getline(runs_csv, row);) ++run_rows;
  EXPECT_EQ(run_rows, static_cast<int64_t>(bench.runs.size())) << "one row per run";
  std::ifstream svg_file(out / "split" / "anytime.svg");
  const std::string svg((std::istreambuf_iterator<char>(svg_file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(fmt::format("xmllint --noout '{}'", (out / "split" / "anytime.svg").string()).c_str()), 0);
  }
  const std::string text = SearchBenchText(*benches);
  EXPECT_NE(text.find("NOT re-confirmed"), std::string::npos) << text;
  EXPECT_NE(text.find("seed_plan"), std::string::npos) << text;

  absl::StatusOr<std::vector<TaskBench>> again = RunSearchBench({w.task}, w.seeds, Options(w, out, &made));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition) << "nothing is resumed or overwritten";
}

TEST_F(SearchBenchTest, AWallBudgetStopsEveryRunAndABudgetNotAboveTheSeedsIsRefused) {
  const World w = MakeWorld();
  Made made;
  SearchBenchOptions o = Options(w, folder_.path() / "wall", &made);
  o.repetitions = 1;
  o.budget_wall_seconds = 1e-9;
  absl::StatusOr<std::vector<TaskBench>> benches = RunSearchBench({w.task}, w.seeds, o);
  ASSERT_TRUE(benches.ok()) << benches.status();
  for (const StrategyRun& run : benches->front().runs) {
    ASSERT_TRUE(run.ok) << run.error;
    EXPECT_LT(run.evaluations, kBudget / 2) << BenchStrategyName(run.strategy) << ": " << run.stop;
    if (run.strategy == BenchStrategy::kRandom) {
      EXPECT_NE(run.stop.find("max_wall_seconds"), std::string::npos) << run.stop;
    }
  }
  EXPECT_EQ(XmlProblem(AnytimeSvg(benches->front())), "");

  SearchBenchOptions tight = Options(w, folder_.path() / "tight", &made);
  tight.budget_evaluations = 2;
  EXPECT_EQ(RunSearchBench({w.task}, w.seeds, tight).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SearchBenchTest, ConfirmedRunsReTimeTheirBestBesideTheBestSeedOutsideTheBudget) {
  const World w = MakeWorld();
  Made made;
  SearchBenchOptions o = Options(w, folder_.path() / "confirmed", &made);
  o.repetitions = 2;
  o.confirm_rounds = 2;
  absl::StatusOr<std::vector<TaskBench>> benches = RunSearchBench({w.task}, w.seeds, o);
  ASSERT_TRUE(benches.ok()) << benches.status();
  const TaskBench& bench = benches->front();
  double seeds_best = 0;
  for (size_t i = 0; i < bench.runs.size(); ++i) {
    const StrategyRun& run = bench.runs[i];
    SCOPED_TRACE(fmt::format("{} rep{}", BenchStrategyName(run.strategy), run.repetition));
    ASSERT_TRUE(run.ok) << run.error;
    ASSERT_TRUE(run.confirmed) << run.confirmation;
    EXPECT_LE(run.evaluations, kBudget) << "the confirmation is not in the budget";
    int64_t calls = 0;
    for (const auto& [hash, n] : *made.calls[i]) calls += n;
    // Two rounds of the best alone (it is the best seed's source) or of the best and the best seed.
    EXPECT_TRUE(calls == run.evaluations + 2 || calls == run.evaluations + 4) << calls << " " << run.evaluations;
    EXPECT_NEAR(run.confirmed_fitness, run.best_fitness, 1e-12) << "the fake times alike every round";
    EXPECT_NEAR(run.confirmed_low, run.confirmed_high, 1e-12);
    if (run.strategy == BenchStrategy::kSeeds) {
      seeds_best = run.best_fitness;
      EXPECT_EQ(calls, run.evaluations + 2);
      EXPECT_DOUBLE_EQ(run.confirmed_ratio, 1.0);
    } else {
      EXPECT_NEAR(run.confirmed_ratio, run.best_fitness / seeds_best, 1e-9) << run.confirmation;
    }
  }
  const std::vector<StrategySummary> summaries = SummariseTask(bench);
  EXPECT_GT(summaries[static_cast<size_t>(BenchStrategy::kSeedPlan)].ratio.geomean, 1.5);
  const std::string text = SearchBenchText(*benches);
  EXPECT_NE(text.find("CONFIRMED"), std::string::npos) << text;
  EXPECT_EQ(text.find("NOT re-confirmed"), std::string::npos) << text;
}

std::vector<double> Fitnesses(const StrategyRun& run) {
  std::vector<double> out;
  for (const AnytimePoint& p : run.curve) out.push_back(p.fitness);
  return out;
}

TEST_F(SearchBenchTest, TheSameBenchGivesTheSameRunsAndRepetitionsSearchDifferently) {
  const World w = MakeWorld();
  Made made_a, made_b;
  SearchBenchOptions a = Options(w, folder_.path() / "a", &made_a);
  SearchBenchOptions b = Options(w, folder_.path() / "b", &made_b);
  a.repetitions = b.repetitions = 2;
  absl::StatusOr<std::vector<TaskBench>> first = RunSearchBench({w.task}, w.seeds, a);
  absl::StatusOr<std::vector<TaskBench>> second = RunSearchBench({w.task}, w.seeds, b);
  ASSERT_TRUE(first.ok() && second.ok()) << first.status() << second.status();
  const std::vector<StrategyRun>& x = first->front().runs;
  const std::vector<StrategyRun>& y = second->front().runs;
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].seed, y[i].seed);
    EXPECT_EQ(x[i].evaluations, y[i].evaluations);
    EXPECT_EQ(x[i].best_candidate_id, y[i].best_candidate_id);
    EXPECT_EQ(Fitnesses(x[i]), Fitnesses(y[i])) << BenchStrategyName(x[i].strategy) << " rep" << x[i].repetition;
  }
  const size_t per_rep = kAllBenchStrategies.size();
  for (BenchStrategy s : {BenchStrategy::kRandom, BenchStrategy::kEvolution}) {
    const size_t at = static_cast<size_t>(s);
    EXPECT_NE(Fitnesses(x[at]), Fitnesses(x[per_rep + at])) << BenchStrategyName(s) << ": the repetitions' seeds differ";
  }
}

class NoGpuEvaluator : public CandidateEvaluator {
 public:
  absl::Status SetUp(const v1::Task&) override { return NonRetryable(absl::FailedPreconditionError("no GPU here")); }
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate&, uint64_t) override { return {}; }
};

TEST_F(SearchBenchTest, ASetUpNoRetryCanHelpFailsTheTasksRunsWithoutTryingEachAgain) {
  const World w = MakeWorld();
  int made = 0;
  SearchBenchOptions o;
  o.out_dir = (folder_.path() / "nogpu").string();
  o.repetitions = 2;
  o.make_evaluator = [&made]() -> absl::StatusOr<std::unique_ptr<CandidateEvaluator>> {
    ++made;
    return std::make_unique<NoGpuEvaluator>();
  };
  absl::StatusOr<std::vector<TaskBench>> benches = RunSearchBench({w.task}, w.seeds, o);
  ASSERT_TRUE(benches.ok()) << benches.status();
  EXPECT_EQ(made, 1);
  ASSERT_EQ(benches->front().runs.size(), kAllBenchStrategies.size() * 2);
  for (const StrategyRun& run : benches->front().runs) {
    EXPECT_FALSE(run.ok);
    EXPECT_EQ(run.error, "no GPU here");
    EXPECT_EQ(run.evaluations, 0);
  }
  const std::string text = SearchBenchText(*benches);
  EXPECT_NE(text.find("FAILED"), std::string::npos) << text;
  EXPECT_EQ(XmlProblem(AnytimeSvg(benches->front())), "") << "an SVG without a curve is still well-formed";
}

TEST(LogRatioIntervalTest, GeometricMeanWithAStudentTIntervalOnTheLogs) {
  const RatioInterval same = LogRatioInterval({1.2, 1.2, 1.2});
  EXPECT_NEAR(same.geomean, 1.2, 1e-12);
  EXPECT_NEAR(same.low, 1.2, 1e-12);
  EXPECT_NEAR(same.high, 1.2, 1e-12);

  // logs 0.1, 0.2, 0.3: mean 0.2, sd 0.1, half width t(0.975, 2) 4.303 * 0.1 / sqrt(3).
  const RatioInterval spread = LogRatioInterval({std::exp(0.1), std::exp(0.2), std::exp(0.3), 0.0});
  EXPECT_EQ(spread.samples, 3);
  EXPECT_EQ(spread.excluded, 1);
  ASSERT_TRUE(spread.has_interval);
  const double half = 4.303 * 0.1 / std::sqrt(3.0);
  EXPECT_NEAR(spread.geomean, std::exp(0.2), 1e-12);
  EXPECT_NEAR(spread.low, std::exp(0.2 - half), 1e-9);
  EXPECT_NEAR(spread.high, std::exp(0.2 + half), 1e-9);
  EXPECT_LT(spread.low, 1.0) << "three noisy repetitions do not exclude a tie here";

  const RatioInterval one = LogRatioInterval({2.0});
  EXPECT_EQ(one.samples, 1);
  EXPECT_FALSE(one.has_interval);
  EXPECT_DOUBLE_EQ(one.geomean, 2.0);
  EXPECT_EQ(LogRatioInterval({}).samples, 0);

  EXPECT_DOUBLE_EQ(StudentT975(1), 12.706);
  EXPECT_DOUBLE_EQ(StudentT975(30), 2.042);
  EXPECT_NEAR(StudentT975(40), 2.021, 1e-3);
  EXPECT_NEAR(StudentT975(120), 1.980, 1e-3);
  EXPECT_NEAR(StudentT975(100000), 1.960, 1e-3);
}

TEST(XmlProblemTest, TheCheckerRefusesWhatIsNotWellFormed) {
  EXPECT_EQ(XmlProblem("<svg a=\"1\"><g/></svg>"), "");
  EXPECT_NE(XmlProblem("<svg><g></svg>"), "");
  EXPECT_NE(XmlProblem("<svg a=1></svg>"), "");
  EXPECT_NE(XmlProblem("<svg>&nbsp;</svg>"), "");
  EXPECT_NE(XmlProblem("<svg></svg><svg></svg>"), "");
  EXPECT_NE(XmlProblem("<svg a=\"<\"></svg>"), "");
  EXPECT_NE(XmlProblem("<svg a"), "");
  EXPECT_NE(XmlProblem("<svg a="), "");
  EXPECT_NE(XmlProblem("<"), "");
}

}  // namespace
}  // namespace sparseditto

namespace sparseditto {
namespace {

// A bench of confirmed runs whose ratios to the best seed are given per strategy and repetition.
TaskBench BenchOfRatios(const std::string& name, const std::map<BenchStrategy, std::vector<double>>& ratios) {
  TaskBench bench;
  bench.task = name;
  bench.confirm_rounds = 2;
  for (const auto& [strategy, per_rep] : ratios) {
    for (size_t r = 0; r < per_rep.size(); ++r) {
      StrategyRun& run = bench.runs.emplace_back();
      run.task = name;
      run.strategy = strategy;
      run.repetition = static_cast<int>(r);
      run.ok = per_rep[r] > 0;
      run.confirmed = per_rep[r] > 0;
      run.confirmed_ratio = per_rep[r];
      run.confirmed_fitness = per_rep[r];  // the best seed at 1.0
    }
  }
  return bench;
}

TEST(ComparePooledTest, PairsEachRepetitionWithRandomAndPoolsTasks) {
  const std::vector<TaskBench> benches = {
      BenchOfRatios("a", {{BenchStrategy::kSeeds, {1, 1}},
                          {BenchStrategy::kRandom, {0.9, 1.0}},
                          {BenchStrategy::kEvolutionPlan, {1.08, 1.12}}}),
      BenchOfRatios("b", {{BenchStrategy::kSeeds, {1, 1}},
                          {BenchStrategy::kRandom, {0.0, 0.95}},  // rep0 of random failed: that pair is left out
                          {BenchStrategy::kEvolutionPlan, {1.10, 1.09}}}),
  };
  const PooledComparison pooled = ComparePooled(benches, BenchStrategy::kEvolutionPlan);
  EXPECT_EQ(pooled.to_best_seed.samples, 4);
  EXPECT_NEAR(pooled.to_best_seed.geomean, std::pow(1.08 * 1.12 * 1.10 * 1.09, 0.25), 1e-12);
  EXPECT_TRUE(pooled.to_best_seed.has_interval);
  EXPECT_GT(pooled.to_best_seed.low, 1.0);
  EXPECT_EQ(pooled.to_random.samples, 3);
  EXPECT_EQ(pooled.to_random.excluded, 1);
  EXPECT_NEAR(pooled.to_random.geomean, std::pow(1.08 / 0.9 * 1.12 / 1.0 * 1.09 / 0.95, 1.0 / 3), 1e-12);
  const std::string text = SearchBenchText(benches);
  EXPECT_NE(text.find("evolution_plan over 2 task(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("above 1"), std::string::npos) << text;
  EXPECT_NE(text.find("1 left out"), std::string::npos) << text;
}

}  // namespace
}  // namespace sparseditto
