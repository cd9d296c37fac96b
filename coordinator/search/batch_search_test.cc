// Batches over a real RocksDB store with the fake evaluator: each task keeps its own budget, a failed
// task is retried (resuming) up to its count and then recorded FAILED while the others go on, retries
// do not stack, and the run folder (artifacts, provenance) is written from the store.
#include "coordinator/search/batch_search.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "common/non_retryable.h"
#include "common/status_format.h"
#include "coordinator/search/run_artifacts.h"
#include "coordinator/testing/search_fixture.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::CountingEvaluator;
using testing::SmallTask;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fake evaluator whose SetUp fails for the tasks named in `broken`.
class SetUpFails : public CountingEvaluator {
 public:
  SetUpFails(testing::FakeLandscape landscape, std::set<std::string> broken,
             absl::Status error = absl::UnavailableError("no GPU here"))
      : CountingEvaluator(std::move(landscape)), broken_(std::move(broken)), error_(std::move(error)) {}
  absl::Status SetUp(const v1::Task& task) override {
    ++setups[task.name()];
    if (broken_.contains(task.name())) return error_;
    return absl::OkStatus();
  }
  std::map<std::string, int> setups;

 private:
  std::set<std::string> broken_;
  absl::Status error_;
};

class BatchSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) /
            fmt::format("batch_search_test.{}.{}", getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *seeds;
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<PopulationStore> OpenStore(PopulationStoreOptions o = {}) {
    o.create_if_missing = true;
    auto store = PopulationStore::Open((root_ / "store").string(), o);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  BatchSearchOptions Options() {
    BatchSearchOptions o;
    o.loop = testing::TestLoopOptions();
    o.run_dir = (root_ / "run").string();
    o.provenance_json = R"({"gpu": {"name": "Fake GPU"}, "mutator_models": ["builtin"]})";
    o.project_revision = "v0-test";
    return o;
  }
  testing::FakeLandscape Landscape() { return testing::Landscape(SmallTask(1), seeds_); }

  fs::path root_;
  std::vector<SeedKernel> seeds_;
};

TEST_F(BatchSearchTest, EachTaskKeepsItsOwnBudgetAndTheRunFolderIsWritten) {
  auto store = OpenStore();
  CountingEvaluator evaluator(Landscape());
  std::vector<SearchProgress> progress;
  BatchSearchOptions options = Options();
  options.on_progress = [&](const SearchProgress& p) { progress.push_back(p); };
  auto outcome = RunBatchSearch(*store, "run", {SmallTask(9, "nine", 1), SmallTask(13, "thirteen", 2)}, seeds_,
                                evaluator, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(outcome->tasks.size(), 2u);
  EXPECT_EQ(outcome->failed(), 0);
  EXPECT_EQ(outcome->tasks[0].summary.evaluations, 9);
  EXPECT_EQ(outcome->tasks[1].summary.evaluations, 13);
  EXPECT_EQ(outcome->tasks[0].attempts, 1);
  EXPECT_EQ(evaluator.fake.calls(), 22);
  ASSERT_EQ(progress.size(), 22u);
  EXPECT_EQ(progress.back().task_name, "thirteen");
  EXPECT_EQ(progress.back().evaluations, 13);
  EXPECT_EQ(progress.back().max_evaluations, 13);

  // Finished tasks are final: the same batch again is answered from the store.
  auto again = RunBatchSearch(*store, "run", {SmallTask(9, "nine", 1), SmallTask(13, "thirteen", 2)}, seeds_,
                              evaluator, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(evaluator.fake.calls(), 22);
  EXPECT_EQ(again->tasks[1].summary.stop_reason, "finished earlier");
  EXPECT_EQ(again->tasks[1].summary.best_candidate_id, outcome->tasks[1].summary.best_candidate_id);
  EXPECT_EQ(again->tasks[1].summary.evaluations, 13);
  EXPECT_EQ(again->tasks[1].attempts, 0);
  EXPECT_EQ(store->GetRunState("run", "thirteen")->attempts(), 1);

  const fs::path run = root_ / "run";
  const std::string provenance = ReadFile(run / "provenance.json");
  EXPECT_THAT(provenance, HasSubstr("\"Fake GPU\""));
  EXPECT_THAT(provenance, HasSubstr("\"v0-test\""));
  for (const TaskOutcome& t : outcome->tasks) {
    SCOPED_TRACE(t.task_name);
    EXPECT_EQ(t.artifact_error, "");
    auto candidates = store->ListCandidates("run", t.task_name);
    ASSERT_TRUE(candidates.ok());
    for (const v1::Candidate& c : *candidates) {
      const fs::path dir = run / t.task_name / "candidates" / c.id();
      EXPECT_EQ(ReadFile(dir / "kernel.cu"), c.source());
      if (store->GetEvaluation("run", c.id()).ok()) {
        for (const char* file : {"compile.log", "verify.json", "benchmark.json"}) {
          EXPECT_TRUE(fs::exists(dir / file)) << dir / file;
        }
      }
      EXPECT_FALSE(fs::exists(dir / "prompt.md")) << "built-in candidates carry no prompt";
    }
    auto best = store->GetCandidate("run", t.summary.best_candidate_id);
    ASSERT_TRUE(best.ok()) << best.status();
    EXPECT_EQ(ReadFile(run / t.task_name / "best" / "kernel.cu"), best->source());
    EXPECT_THAT(ReadFile(run / t.task_name / "best" / "report.json"), HasSubstr(t.summary.best_candidate_id));
  }
}

TEST_F(BatchSearchTest, AFailedTaskIsRetriedByResumingAndTheOthersGoOn) {
  int commits = 0;
  PopulationStoreOptions o;
  o.before_write = [&](std::string_view operation) {
    // The 5th evaluation commit fails once: the first attempt at "flaky" ends with an error.
    if (operation == "CommitEvaluation" && ++commits == 5) return absl::UnavailableError("disk hiccup");
    return absl::OkStatus();
  };
  auto store = OpenStore(o);
  CountingEvaluator evaluator(Landscape());
  v1::Task flaky_task = SmallTask(12, "flaky", 1);
  flaky_task.mutable_budget()->set_max_retries(1);  // what task files default to
  auto outcome = RunBatchSearch(*store, "run", {flaky_task, SmallTask(6, "steady", 2)}, seeds_, evaluator, Options());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  const TaskOutcome& flaky = outcome->tasks[0];
  EXPECT_TRUE(flaky.ok);
  EXPECT_EQ(flaky.attempts, 2);
  ASSERT_EQ(flaky.errors.size(), 1u);
  EXPECT_THAT(flaky.errors[0], HasSubstr("disk hiccup"));
  EXPECT_TRUE(flaky.summary.resumed);
  EXPECT_FALSE(flaky.summary.reevaluated_in_flight.empty()) << "the uncommitted evaluation is redone";
  EXPECT_EQ(flaky.summary.evaluations, 12);
  EXPECT_TRUE(outcome->tasks[1].ok);
  EXPECT_EQ(store->GetRunState("run", "flaky")->attempts(), 2);
  EXPECT_EQ(store->GetRunState("run", "steady")->attempts(), 1);
}

TEST_F(BatchSearchTest, RetriesAreCountedPerCallAndNeverStack) {
  const struct {
    std::string name;
    int task_retries;    // budget.max_retries of the broken task
    int option_retries;  // BatchSearchOptions::max_retries (-1: the task's)
    int attempts;
    bool cannot_succeed = false;  // the set-up error is NonRetryable (no NVIDIA driver)
  } cases[] = {
      {"the task's count", 2, -1, 3},
      {"the task's zero", 0, -1, 1},
      {"the option overrides", 2, 0, 1},
      {"the option raises", 0, 3, 4},
      {"a set-up failure that retrying cannot fix, the task's count", 2, -1, 1, true},
      {"a set-up failure that retrying cannot fix, the option", 0, 3, 1, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(root_);
    auto store = OpenStore();
    SetUpFails evaluator(Landscape(), {"broken"},
                         c.cannot_succeed ? NonRetryable(absl::FailedPreconditionError("no GPU here"))
                                          : absl::UnavailableError("no GPU here"));
    v1::Task broken = SmallTask(5, "broken", 1);
    broken.mutable_budget()->set_max_retries(c.task_retries);
    BatchSearchOptions options = Options();
    options.max_retries = c.option_retries;
    const std::vector<v1::Task> batch = {broken, SmallTask(5, "fine", 2)};
    for (int call = 1; call <= 2; ++call) {
      auto outcome = RunBatchSearch(*store, "run", batch, seeds_, evaluator, options);
      ASSERT_TRUE(outcome.ok()) << outcome.status();
      EXPECT_EQ(outcome->failed(), 1);
      EXPECT_FALSE(outcome->tasks[0].ok);
      EXPECT_EQ(outcome->tasks[0].attempts, c.attempts);
      EXPECT_EQ(outcome->tasks[0].errors.size(), static_cast<size_t>(c.attempts));
      EXPECT_THAT(outcome->tasks[0].errors.back(), HasSubstr("set-up: no GPU here"));
      if (c.cannot_succeed) {
        EXPECT_THAT(outcome->tasks[0].errors.back(), HasSubstr("not retried"));
      }
      EXPECT_TRUE(outcome->tasks[1].ok) << "the other task goes on";
      EXPECT_EQ(evaluator.setups["broken"], call * c.attempts);
      auto state = store->GetRunState("run", "broken");
      ASSERT_TRUE(state.ok()) << state.status();
      EXPECT_EQ(state->status(), store::TASK_RUN_STATUS_FAILED);
      EXPECT_THAT(state->status_detail(), HasSubstr(fmt::format("failed after {} attempts", c.attempts)));
      EXPECT_EQ(state->attempts(), call * c.attempts) << "every attempt ever begun";
    }
  }
}

// The evaluator's device (Device() after its set-up, as the GPU evaluator reads it) is an sm_90, as
// embedded `search` on an H200. A task of archs [sm_80, sm_90a] is two populations: the sm_80 one is
// refused at its set-up, FAILED at once (not retried) naming the task and both archs, nothing of it
// evaluated; the sm_90a one is searched.
class LocalSm90 : public SetUpFails {
 public:
  using SetUpFails::SetUpFails;
  DeviceFacts Device() const override { return {.sm_count = 132, .arch = 90}; }
};

TEST_F(BatchSearchTest, APopulationOfAnArchTheLocalGpuIsNotIsRefusedAndTheOthersAreSearched) {
  auto store = OpenStore();
  LocalSm90 evaluator(Landscape(), {});
  v1::Task task = SmallTask(7, "two");
  task.clear_arch();
  task.add_arch("sm_80");
  task.add_arch("sm_90a");
  BatchSearchOptions options = Options();
  options.max_retries = 2;
  auto outcome = RunBatchSearch(*store, "run", {task}, seeds_, evaluator, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(outcome->tasks.size(), 2u);
  const TaskOutcome& ampere = outcome->tasks[0];
  const TaskOutcome& hopper = outcome->tasks[1];
  EXPECT_EQ(ampere.task_name, "two@sm_80");
  EXPECT_FALSE(ampere.ok);
  EXPECT_EQ(ampere.attempts, 1) << "no retry can give it an sm_80 GPU";
  ASSERT_EQ(ampere.errors.size(), 1u);
  EXPECT_THAT(ampere.errors[0], HasSubstr("task two@sm_80 targets sm_80, but the GPU it would be timed on is sm_90: "
                                          "not searched here"));
  EXPECT_THAT(ampere.errors[0], HasSubstr("sparseditto search --name two@sm_80"));
  EXPECT_THAT(ampere.errors[0], HasSubstr("not retried"));
  EXPECT_EQ(hopper.task_name, "two@sm_90a");
  EXPECT_TRUE(hopper.ok) << (hopper.errors.empty() ? "" : hopper.errors.back());
  EXPECT_EQ(hopper.summary.evaluations, 7);
  EXPECT_EQ(evaluator.fake.calls(), 7) << "nothing of the sm_80 population was evaluated";
  auto state = store->GetRunState("run", "two@sm_80");
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->status(), store::TASK_RUN_STATUS_FAILED);
  EXPECT_THAT(state->status_detail(), HasSubstr("targets sm_80"));
  auto candidates = store->ListCandidates("run", "two@sm_80");
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  EXPECT_TRUE(candidates->empty());
  EXPECT_TRUE(absl::IsNotFound(store->GetTask("run", "two").status())) << "only its populations are stored";
}

TEST_F(BatchSearchTest, RefusesABadBatchBeforeSearchingAnything) {
  auto store = OpenStore();
  CountingEvaluator evaluator(Landscape());
  const struct {
    std::string name;
    std::vector<v1::Task> tasks;
    std::string words;
  } cases[] = {
      {"a name twice", {SmallTask(3, "same", 1), SmallTask(3, "same", 2)}, "task same appears twice"},
      {"other content than stored", {SmallTask(3, "kept", 1), SmallTask(3, "stored", 3)}, "with other content"},
      {"another budget than stored", {SmallTask(3, "kept", 1), SmallTask(4, "stored", 2)}, "with another budget"},
  };
  ASSERT_TRUE(RunBatchSearch(*store, "run", {SmallTask(3, "stored", 2)}, seeds_, evaluator, Options()).ok());
  const int64_t calls = evaluator.fake.calls();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto outcome = RunBatchSearch(*store, "run", c.tasks, seeds_, evaluator, Options());
    EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInvalidArgument) << outcome.status();
    EXPECT_THAT(std::string(outcome.status().message()), HasSubstr(c.words));
  }
  EXPECT_EQ(evaluator.fake.calls(), calls);
}

TEST_F(BatchSearchTest, ArtifactsAreRegeneratedFromTheStore) {
  auto store = OpenStore();
  CountingEvaluator evaluator(Landscape());
  auto outcome = RunBatchSearch(*store, "run", {SmallTask(7, "t", 1)}, seeds_, evaluator, Options());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  const fs::path run = root_ / "run";
  const std::string best_before = ReadFile(run / "t" / "best" / "report.json");
  fs::remove_all(run);
  fs::create_directories(run / "t" / "candidates" / "t.000001.sparseditto-tmp-99");  // a killed writer's
  ASSERT_TRUE(WriteTaskArtifacts(*store, "run", "t", run.string()).ok());
  ASSERT_TRUE(WriteProvenance(*store, "run", run.string()).ok());
  EXPECT_EQ(ReadFile(run / "t" / "best" / "report.json"), best_before);
  EXPECT_TRUE(fs::exists(run / "provenance.json"));
  EXPECT_FALSE(fs::exists(run / "t" / "candidates" / "t.000001.sparseditto-tmp-99"));

  // A candidate that carries an LLM's prompt and response gets both files.
  v1::Candidate llm = *store->GetCandidate("run", outcome->tasks[0].summary.best_candidate_id);
  llm.set_id("t.llm");
  llm.clear_parent_ids();
  llm.set_source_hash("llm-hash");
  llm.set_prompt("# Make it faster\n");
  llm.set_response("Here is a kernel.\n");
  ASSERT_TRUE(store->PutCandidate("run", llm).ok());
  ASSERT_TRUE(WriteCandidateArtifacts(*store, "run", "t.llm", run.string()).ok());
  EXPECT_EQ(ReadFile(run / "t" / "candidates" / "t.llm" / "prompt.md"), "# Make it faster\n");
  EXPECT_EQ(ReadFile(run / "t" / "candidates" / "t.llm" / "response.md"), "Here is a kernel.\n");
  EXPECT_FALSE(fs::exists(run / "t" / "candidates" / "t.llm" / "verify.json")) << "not evaluated";
}

// The run's folder is root_/run and its store root_/store, a sibling: a task named ".." once put its
// files, and its clean-up's remove_all, in root_. Through every entry point that writes a run's files,
// nothing lands outside root_/run, whatever the batch or the store names a task or a candidate.
TEST_F(BatchSearchTest, NothingIsWrittenOutsideTheRunWhateverATaskIsNamed) {
  auto store = OpenStore();
  CountingEvaluator evaluator(Landscape());
  ASSERT_TRUE(RunBatchSearch(*store, "run", {SmallTask(3, "t", 1)}, seeds_, evaluator, Options()).ok());
  auto beside_the_run = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(root_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> before = beside_the_run();
  ASSERT_EQ(before, (std::vector<std::string>{"run", "store"}));
  const std::string run = (root_ / "run").string();
  for (const std::string name : {"..", ".", "store", "export", "provenance.json", "Store", "x.sparseditto-old-1"}) {
    SCOPED_TRACE("task named '" + name + "'");
    auto outcome = RunBatchSearch(*store, "run", {SmallTask(3, name, 1)}, seeds_, evaluator, Options());
    EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInvalidArgument) << outcome.status();
    EXPECT_THAT(std::string(outcome.status().message()), HasSubstr("task name '" + name + "'"));
    // A store written before names were checked may hold such a task, and candidates of it.
    ASSERT_TRUE(store->PutTask("run", SmallTask(3, name, 1)).ok());
    v1::Candidate candidate = *store->GetCandidate("run", store->ListCandidates("run", "t")->front().id());
    candidate.set_id("bad." + std::to_string(std::hash<std::string>()(name)));
    candidate.set_task_name(name);
    candidate.clear_parent_ids();
    candidate.set_source_hash("hash of " + name);
    ASSERT_TRUE(store->PutCandidate("run", candidate).ok());
    for (const absl::Status& s : {WriteTaskArtifacts(*store, "run", name, run), WriteBestArtifacts(*store, "run", name, run),
                                  WriteCandidateArtifacts(*store, "run", candidate.id(), run)}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(std::string(s.message()), HasSubstr("task name '" + name + "'"));
    }
    EXPECT_EQ(beside_the_run(), before);
  }
  for (const std::string id : {"..", "."}) {  // a candidate id is a folder's name too
    SCOPED_TRACE("candidate id '" + id + "'");
    v1::Candidate candidate = *store->GetCandidate("run", store->ListCandidates("run", "t")->front().id());
    candidate.set_id(id);
    candidate.clear_parent_ids();
    candidate.set_source_hash("hash of id " + id);
    ASSERT_TRUE(store->PutCandidate("run", candidate).ok());
    const absl::Status s = WriteCandidateArtifacts(*store, "run", id, run);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(beside_the_run(), before);
  }
  EXPECT_TRUE(fs::exists(root_ / "store" / "CURRENT")) << "the store beside the run is whole";
}

}  // namespace
}  // namespace sparseditto
