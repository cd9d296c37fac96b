// The bench loop (bench_loop.h) on the CPU: the real seed library, the search tests' deterministic fake
// evaluator behind the search's evaluator seam, the real files in a temp folder per test. Each applicable
// seed is evaluated once per task, a failing seed is a typed failure in the rows, a crashing one is
// skipped after max_faults, a task whose set-up fails has no rows, a bench stopped anywhere and resumed
// evaluates nothing twice and ends with the table of an uninterrupted bench, and the events file parses
// line by line with counts that match the table.
#include "bench/bench_loop.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "bench/bench_resume.h"
#include "coordinator/testing/events_file.h"
#include "coordinator/testing/search_fixture.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ReadEvents;
using testing_support::TempFolder;

const std::vector<int64_t> kNs = {16, 128};

v1::Task BenchTask(const std::string& name) {
  v1::Task task = testing::SmallTask(100, name);
  for (int64_t n : kNs) task.add_n(n);
  return task;
}

std::vector<v1::Task> Suite(int count) {
  std::vector<v1::Task> suite;
  for (int i = 0; i < count; ++i) suite.push_back(BenchTask("t" + std::to_string(i)));
  return suite;
}

// The fake behind the seam, with what a bench needs of a set-up (FakeSetupReply's baselines). Seeds of
// `failing` fail with their category; tasks of `failing_setups` fail their set-up. Calls are counted by
// candidate id ("<seed>@<task>") across evaluator objects through `calls` (a resumed bench is a new
// process with a new evaluator).
class BenchFake : public testing::ScreeningEvaluator {
 public:
  BenchFake(testing::FakeLandscape landscape, std::map<std::string, int>* calls)
      : ScreeningEvaluator(std::move(landscape)), calls_(calls) {}
  absl::Status SetUp(const v1::Task& task) override {
    if (failing_setups.contains(task.name())) return absl::UnavailableError("fake: the runner child died");
    reply_ = testing::FakeSetupReply(task);
    return absl::OkStatus();
  }
  v1::SetupTaskReply SetupReply() const override { return reply_; }
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    ++(*calls_)[candidate.id()];
    v1::EvalResult r = CountingEvaluator::Evaluate(task, candidate, seed);
    if (auto it = failing.find(candidate.seed_name()); it != failing.end()) {
      r.set_failure(it->second);
      r.set_fitness(0);
      r.clear_timings();
      r.set_failure_detail("fake: this seed fails");
    }
    if (auto it = rejected.find(candidate.seed_name()); it != rejected.end() && it->second.calls > 0) {
      --it->second.calls;
      r.set_failure(v1::FAILURE_CATEGORY_REJECTED);
      r.set_stage_reached(it->second.stage);
      r.set_fitness(0);
      r.clear_timings();
      r.set_failure_detail("fake: the bracket disagreed");
    }
    return r;
  }
  std::map<std::string, v1::FailureCategory> failing;
  // Seeds REJECTED at `stage` on their next `calls` evaluations (any task), then judged as usual.
  struct Rejection { int calls; v1::EvalStage stage; };
  std::map<std::string, Rejection> rejected;
  std::set<std::string> failing_setups;

 private:
  std::map<std::string, int>* calls_;
  v1::SetupTaskReply reply_;
};

class BenchLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *seeds;
    applicable_ = ApplicableSeeds(BenchTask("t"), seeds_);
    ASSERT_GE(applicable_.size(), 3u) << "the tests need several seeds that apply to the small task";
  }
  testing::FakeLandscape Landscape() const {
    testing::FakeLandscape l = testing::Landscape(BenchTask("t"), seeds_);
    l.n_values = kNs;
    return l;
  }
  BenchLoopOptions Options(const std::string& out) const {
    BenchLoopOptions o;
    o.out_dir = (folder_ / out).string();
    return o;
  }
  std::vector<BenchRow> TableOf(const std::string& out) const {
    auto rows = ReadBenchRows((folder_ / out / "bench.json").string());
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : std::vector<BenchRow>{};
  }
  TempFolder folder_{"bench_loop_test"};
  std::vector<SeedKernel> seeds_;
  std::vector<const SeedKernel*> applicable_;
};

// The events agree with the outcome and the table: one evaluation event per evaluator call, one failure
// event per failed one, one rows event per task benched with the table's rows, a stop event last.
void ExpectEventsMatch(const fs::path& events_path, const BenchLoopOutcome& outcome, int64_t failed_evaluations) {
  const std::vector<json> events = ReadEvents(events_path);
  ASSERT_FALSE(events.empty());
  for (const json& e : events) {
    EXPECT_EQ(e.value("schema", 0), 1) << e;
    EXPECT_TRUE(e.contains("time") && e.contains("unix_ms") && e.contains("type")) << e;
  }
  std::map<std::string, int> counts = testing::CountByType(events);
  EXPECT_EQ(counts["start"], 1);
  EXPECT_EQ(counts["evaluation"], outcome.evaluations);
  EXPECT_EQ(counts["rows"], outcome.tasks_benched);
  EXPECT_EQ(counts["failure"], failed_evaluations + outcome.tasks_failed);
  size_t rows_in_events = 0;
  std::set<std::string> evaluated;
  for (const json& e : events) {
    if (e["type"] == "rows") rows_in_events += e["rows"].size();
    if (e["type"] == "evaluation") {
      EXPECT_TRUE(evaluated.insert(e["candidate"].get<std::string>()).second) << "evaluated twice: " << e;
      const bool correct = e["outcome"] == "CORRECT" || e["outcome"] == "SLOWER";
      EXPECT_EQ(e["times"].size(), correct ? kNs.size() : 0) << e;
      EXPECT_EQ(e["operator"], "SEED") << e;
    }
  }
  EXPECT_EQ(rows_in_events, outcome.rows.size());
  const json& stop = events.back();
  EXPECT_EQ(stop["type"], "stop");
  EXPECT_EQ(stop["reason"], outcome.interrupted ? "interrupted" : "done");
  EXPECT_EQ(stop["evaluations"], outcome.evaluations);
  EXPECT_EQ(stop["rows"], outcome.rows.size());
}

struct EvaluationCase {
  std::string name{};
  std::map<int, v1::FailureCategory> failing{};  // by index into the applicable seeds
  int max_faults = 2;
  std::set<std::string> failing_setups{};
  std::string expect_failure_text{};  // in every row of a task whose evaluations ran ("<seed>:<CATEGORY>")
  int expect_skips = 0;               // skipped events
};

TEST_F(BenchLoopTest, EverySeedOnceATaskFailuresTypedAndEventsMatchTheTable) {
  const std::vector<EvaluationCase> cases = {
      {.name = "all_correct"},
      {.name = "wrong_seed", .failing = {{0, v1::FAILURE_CATEGORY_WRONG}}, .expect_failure_text = ":WRONG"},
      {.name = "compile_error", .failing = {{1, v1::FAILURE_CATEGORY_COMPILE}}, .expect_failure_text = ":COMPILE"},
      // A seed that crashes is skipped once it has crashed max_faults times: on t0 only (max 1).
      {.name = "crash_skipped", .failing = {{0, v1::FAILURE_CATEGORY_CRASH}}, .max_faults = 1, .expect_skips = 2},
      {.name = "crash_never_skipped", .failing = {{0, v1::FAILURE_CATEGORY_TIMEOUT}}, .max_faults = 0,
       .expect_failure_text = ":TIMEOUT"},
      {.name = "setup_fails", .failing_setups = {"t1"}},
  };
  const std::vector<v1::Task> suite = Suite(3);
  for (const EvaluationCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, int> calls;
    BenchFake fake(Landscape(), &calls);
    for (const auto& [index, category] : c.failing) fake.failing[applicable_[index]->name] = category;
    fake.failing_setups = c.failing_setups;
    BenchLoopOptions o = Options(c.name);
    o.max_faults = c.max_faults;
    std::ostringstream table, log;
    o.table = &table;
    o.log = &log;
    auto outcome = RunBenchLoop(suite, suite, seeds_, fake, o);
    ASSERT_TRUE(outcome.ok()) << outcome.status();

    int64_t expected_calls = 0, failed = 0;
    for (const v1::Task& task : suite) {
      if (c.failing_setups.contains(task.name())) continue;
      for (const SeedKernel* seed : applicable_) {
        const std::string id = seed->name + "@" + task.name();
        const bool skipped = c.max_faults == 1 && fake.failing.contains(seed->name) && task.name() != "t0";
        EXPECT_EQ(calls.contains(id) ? calls.at(id) : 0, skipped ? 0 : 1) << id;
        expected_calls += skipped ? 0 : 1;
        failed += !skipped && fake.failing.contains(seed->name) ? 1 : 0;
      }
    }
    EXPECT_EQ(static_cast<int64_t>(calls.size()), expected_calls) << "a candidate of no applicable seed was evaluated";
    EXPECT_EQ(outcome->evaluations, expected_calls);
    EXPECT_EQ(outcome->tasks_failed, static_cast<int64_t>(c.failing_setups.size()));
    EXPECT_EQ(outcome->tasks_benched, 3 - outcome->tasks_failed);
    EXPECT_EQ(outcome->file_errors, "");
    size_t prefetched = 0;  // each task's candidates are handed to Prefetch once, ahead of its set-up
    for (const auto& batch : fake.prefetched) prefetched += batch.size();
    EXPECT_EQ(prefetched, suite.size() * applicable_.size());

    const std::vector<BenchRow> rows = TableOf(c.name);
    ASSERT_EQ(rows.size(), outcome->rows.size());
    EXPECT_EQ(rows.size(), kNs.size() * outcome->tasks_benched);
    for (const BenchRow& row : rows) {
      EXPECT_FALSE(c.failing_setups.contains(row.task)) << "a task that was never set up has a row";
      EXPECT_FALSE(row.best_kernel.empty()) << row.task << " n " << row.n;
      EXPECT_GT(row.speedup_over_best_baseline, 0) << row.task;
      EXPECT_EQ(row.baselines_ms.size(), 2u) << "the set-up reply's baselines are the row's";
      for (const auto& [index, category] : c.failing) {
        EXPECT_NE(row.best_kernel, applicable_[index]->name) << "a failed seed is never the best";
      }
      if (!c.expect_failure_text.empty()) {
        EXPECT_NE(row.failures.find(applicable_[c.failing.begin()->first]->name + c.expect_failure_text),
                  std::string::npos)
            << row.failures;
      }
    }
    if (c.max_faults == 1) {  // the crash is in t0's rows only
      for (const BenchRow& row : rows) EXPECT_EQ(row.failures.find(":CRASH") != std::string::npos, row.task == "t0");
    }
    EXPECT_NE(table.str().find(BenchSummary(rows)), std::string::npos) << "the summary is printed under the table";
    ExpectEventsMatch(folder_ / c.name / "events.jsonl", *outcome, failed);
    EXPECT_EQ(testing::CountByType(ReadEvents(folder_ / c.name / "events.jsonl"))["skipped"], c.expect_skips);
    EXPECT_FALSE(fs::exists(folder_ / c.name / "bench-partial" / "t0.json")) << "a finished task's evaluations stay";
  }
}

// A REJECTED verdict at the timing stage (the judge's bracket met a hiccup) is judged again, wholly, up to
// timing_rejection_retries times; both evaluations are events. A seed rejected every time stays rejected, and a
// REJECTED verdict of another stage (a prepare refusal) is never retried.
TEST_F(BenchLoopTest, ARejectionAtTimingIsJudgedAgain) {
  struct Case {
    std::string name;
    int rejected_calls;
    v1::EvalStage stage;
    int retries;
    int expect_calls;        // for the seed on the one task
    bool expect_in_failures;  // its row lists it as REJECTED
  };
  const std::vector<Case> cases = {
      {"hiccup_once", 1, v1::EVAL_STAGE_TIMING, 1, 2, false},
      {"rejected_every_time", 100, v1::EVAL_STAGE_TIMING, 1, 2, true},
      {"two_retries", 2, v1::EVAL_STAGE_TIMING, 2, 3, false},
      {"retries_off", 1, v1::EVAL_STAGE_TIMING, 0, 1, true},
      {"rejected_at_prepare", 1, v1::EVAL_STAGE_FULL_CORRECTNESS, 1, 1, true},
  };
  const std::vector<v1::Task> suite = Suite(1);
  const std::string seed = applicable_[0]->name, id = seed + "@t0";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, int> calls;
    BenchFake fake(Landscape(), &calls);
    fake.rejected[seed] = {c.rejected_calls, c.stage};
    BenchLoopOptions o = Options(c.name);
    o.timing_rejection_retries = c.retries;
    std::ostringstream log;
    o.log = &log;
    auto outcome = RunBenchLoop(suite, suite, seeds_, fake, o);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(calls[id], c.expect_calls);
    EXPECT_EQ(outcome->evaluations, static_cast<int64_t>(applicable_.size()) - 1 + c.expect_calls);
    EXPECT_EQ(log.str().find("evaluated again") != std::string::npos, c.expect_calls > 1) << log.str();
    const std::vector<BenchRow> rows = TableOf(c.name);
    ASSERT_EQ(rows.size(), kNs.size());
    for (const BenchRow& row : rows) {
      EXPECT_EQ(row.failures.find(seed + ":REJECTED") != std::string::npos, c.expect_in_failures) << row.failures;
    }
    const std::vector<json> events = ReadEvents(folder_ / c.name / "events.jsonl");
    int seed_events = 0;
    for (const json& e : events) seed_events += e["type"] == "evaluation" && e["candidate"] == id;
    EXPECT_EQ(seed_events, c.expect_calls) << "every evaluation is an event";
    EXPECT_EQ(testing::CountByType(events)["evaluation"], outcome->evaluations);
  }
}

// A bench stopped before its k-th evaluation (as Ctrl-C or a time limit stops it), then resumed by a new
// evaluator: every (task, seed) evaluated exactly once over both, and the table is the uninterrupted one.
TEST_F(BenchLoopTest, ResumeAfterAnInterruptionEvaluatesNothingTwice) {
  const std::vector<v1::Task> suite = Suite(3);
  const int per_task = static_cast<int>(applicable_.size());
  std::map<std::string, int> reference_calls;
  BenchFake reference_fake(Landscape(), &reference_calls);
  ASSERT_TRUE(RunBenchLoop(suite, suite, seeds_, reference_fake, Options("reference")).ok());
  const std::vector<BenchRow> reference = TableOf("reference");
  ASSERT_EQ(reference.size(), 3 * kNs.size());

  for (int stop_at : {0, 1, per_task - 1, per_task, per_task + 1, 3 * per_task - 1}) {
    SCOPED_TRACE("stopped before evaluation " + std::to_string(stop_at + 1));
    const std::string out = "stop" + std::to_string(stop_at);
    std::map<std::string, int> calls;
    {
      BenchFake fake(Landscape(), &calls);
      BenchLoopOptions o = Options(out);
      o.stop_requested = [&calls, stop_at] { return static_cast<int>(calls.size()) >= stop_at; };
      auto first = RunBenchLoop(suite, suite, seeds_, fake, o);
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_TRUE(first->interrupted);
      EXPECT_EQ(first->evaluations, stop_at);
      EXPECT_EQ(first->tasks_benched, stop_at / per_task);
    }
    BenchFake fake(Landscape(), &calls);
    BenchLoopOptions o = Options(out);
    o.resume = true;
    auto second = RunBenchLoop(suite, suite, seeds_, fake, o);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_FALSE(second->interrupted);
    EXPECT_EQ(second->evaluations_kept, stop_at % per_task) << "the evaluations of the task in hand were kept";
    EXPECT_EQ(second->evaluations + stop_at, 3 * per_task);
    for (const auto& [id, count] : calls) EXPECT_EQ(count, 1) << id << " evaluated twice";
    EXPECT_EQ(static_cast<int>(calls.size()), 3 * per_task);

    const std::vector<BenchRow> rows = TableOf(out);
    ASSERT_EQ(rows.size(), reference.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].task, reference[i].task);
      EXPECT_EQ(rows[i].n, reference[i].n);
      EXPECT_EQ(rows[i].best_kernel, reference[i].best_kernel);
      EXPECT_DOUBLE_EQ(rows[i].kernel_ms, reference[i].kernel_ms);
      EXPECT_EQ(rows[i].seeds_ms, reference[i].seeds_ms);
    }
    // Both benches appended to one events file: each (task, seed) has one evaluation event.
    const std::vector<json> events = ReadEvents(folder_ / out / "events.jsonl");
    std::map<std::string, int> counts = testing::CountByType(events);
    EXPECT_EQ(counts["evaluation"], 3 * per_task);
    EXPECT_EQ(counts["start"], 2);
    EXPECT_EQ(counts["stop"], 2);
    EXPECT_EQ(counts["rows"], 3);
    EXPECT_FALSE(fs::exists(folder_ / out / "bench-partial" / "t0.json"));
  }
}

// bench --screen-margin: each seed is screened first and timed in full only near the task's best so far; the
// rows' best kernels and times are the full bench's, the seeds screened out are listed apart, and fewer seeds are
// timed in full. (The fake's screens are off by up to 6%, so a margin of 10% keeps every near seed.)
TEST_F(BenchLoopTest, AScreenedBenchFindsTheSameBestKernelsWithFewerFullTimings) {
  const std::vector<v1::Task> suite = Suite(3);
  std::map<std::string, int> full_calls, screened_calls;
  BenchFake full(Landscape(), &full_calls);
  auto reference = RunBenchLoop(suite, suite, seeds_, full, Options("full"));
  ASSERT_TRUE(reference.ok()) << reference.status();
  BenchFake screening(Landscape(), &screened_calls);
  BenchLoopOptions o = Options("screened");
  o.screen_margin = 0.10;
  auto screened = RunBenchLoop(suite, suite, seeds_, screening, o);
  ASSERT_TRUE(screened.ok()) << screened.status();
  const std::vector<BenchRow> want = TableOf("full"), got = TableOf("screened");
  ASSERT_EQ(got.size(), want.size());
  size_t screened_out = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].task + " n " + std::to_string(got[i].n));
    EXPECT_EQ(got[i].best_kernel, want[i].best_kernel);
    EXPECT_DOUBLE_EQ(got[i].kernel_ms, want[i].kernel_ms);
    EXPECT_EQ(got[i].seeds_ms.size() + got[i].screened_ms.size(), want[i].seeds_ms.size());
    for (const auto& [seed, ms] : got[i].screened_ms) EXPECT_GT(ms, got[i].kernel_ms * 1.10 / 1.06) << seed;
    screened_out += got[i].screened_ms.size();
  }
  EXPECT_GT(screened_out, 0u) << "the landscape's slow seeds should be screened out";
  int timed_in_full = 0;
  for (const auto& [id, calls] : screened_calls) timed_in_full += calls;
  EXPECT_LT(timed_in_full, static_cast<int>(suite.size() * applicable_.size()));
  EXPECT_EQ(static_cast<int>(screening.screened_by_id.size()), static_cast<int>(suite.size() * applicable_.size()));
  ExpectEventsMatch(folder_ / "screened" / "events.jsonl", *screened, 0);
}

TEST_F(BenchLoopTest, AKeptEvaluationOfASeedThatChangedIsEvaluatedAgain) {
  const std::vector<v1::Task> suite = Suite(1);
  std::map<std::string, int> calls;
  {
    BenchFake fake(Landscape(), &calls);
    BenchLoopOptions o = Options("out");
    o.stop_requested = [&calls] { return calls.size() >= 2; };
    ASSERT_TRUE(RunBenchLoop(suite, suite, seeds_, fake, o).ok());
  }
  std::vector<SeedKernel> changed = seeds_;
  for (SeedKernel& seed : changed) {
    if (seed.name == applicable_[0]->name) seed.source += "\nstatic int changed_since = 1;\n";
  }
  BenchFake fake(Landscape(), &calls);
  BenchLoopOptions o = Options("out");
  o.resume = true;
  auto outcome = RunBenchLoop(suite, suite, changed, fake, o);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->evaluations_kept, 1);
  EXPECT_EQ(calls[applicable_[0]->name + "@t0"], 2) << "its kept result is of another source";
  EXPECT_EQ(calls[applicable_[1]->name + "@t0"], 1);
}

TEST_F(BenchLoopTest, DamagedFilesOfAnEarlierBench) {
  const std::vector<v1::Task> suite = Suite(1);
  // A bench.json that is not a table: the resume refuses and leaves it as it is.
  fs::create_directories(folder_ / "bad");
  { std::ofstream(folder_ / "bad" / "bench.json") << "[{\"task\": 3}]"; }
  std::map<std::string, int> calls;
  BenchFake fake(Landscape(), &calls);
  BenchLoopOptions o = Options("bad");
  o.resume = true;
  auto refused = RunBenchLoop(suite, suite, seeds_, fake, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("bench.json"), std::string::npos) << refused.status();
  std::ifstream kept(folder_ / "bad" / "bench.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "[{\"task\": 3}]");
  EXPECT_TRUE(calls.empty());

  // Kept evaluations that do not parse: said, and the task's seeds evaluated again.
  fs::create_directories(folder_ / "partial" / "bench-partial");
  { std::ofstream(folder_ / "partial" / "bench-partial" / "t0.json") << "{\"task\": \"t0\", \"evaluations\": [{"; }
  std::ostringstream log;
  o = Options("partial");
  o.resume = true;
  o.log = &log;
  auto outcome = RunBenchLoop(suite, suite, seeds_, fake, o);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->evaluations, static_cast<int64_t>(applicable_.size()));
  EXPECT_NE(log.str().find("kept evaluations unusable"), std::string::npos) << log.str();
}

TEST_F(BenchLoopTest, BadOptionsAndNameFilters) {
  const std::vector<v1::Task> suite = Suite(3);
  std::map<std::string, int> calls;
  BenchFake fake(Landscape(), &calls);
  EXPECT_EQ(RunBenchLoop(suite, suite, seeds_, fake, BenchLoopOptions()).status().code(),
            absl::StatusCode::kInvalidArgument);
  BenchLoopOptions o = Options("x");
  o.compile_ahead_tasks = 0;
  EXPECT_EQ(RunBenchLoop(suite, suite, seeds_, fake, o).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(calls.empty());

  const std::vector<std::pair<std::string, std::vector<std::string>>> filters = {
      {"", {"t0", "t1", "t2"}}, {"t[12]", {"t1", "t2"}}, {"^1", {}}, {"1", {"t1"}}};
  for (const auto& [filter, names] : filters) {
    auto tasks = SelectBenchTasks(suite, filter);
    ASSERT_TRUE(tasks.ok()) << tasks.status();
    std::vector<std::string> got;
    for (const v1::Task& t : *tasks) got.push_back(t.name());
    EXPECT_EQ(got, names) << filter;
  }
  auto bad = SelectBenchTasks(suite, "t[");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("t["), std::string::npos);
}

}  // namespace
}  // namespace sparseditto
