#include "cli/fake_search_backend.h"

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "cli/install_paths.h"
#include "coordinator/search/local_pipeline.h"
#include "coordinator/testing/search_fixture.h"
#include "fmt/format.h"
#include "kernels/seed_library.h"

namespace sparseditto {
namespace {

constexpr char kVariable[] = "SPARSEDITTO_FAKE_EVALUATOR_MS";

class SlowFakeEvaluator final : public testing::CountingEvaluator {
 public:
  SlowFakeEvaluator(testing::FakeLandscape landscape, int delay_ms)
      : CountingEvaluator(std::move(landscape)), delay_ms_(delay_ms) {}
  absl::Status SetUp(const v1::Task& task) override {
    setup_ = testing::FakeSetupReply(task);
    return absl::OkStatus();
  }
  v1::SetupTaskReply SetupReply() const override { return setup_; }
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    return CountingEvaluator::Evaluate(task, candidate, seed);
  }

 private:
  const int delay_ms_;
  v1::SetupTaskReply setup_;
};

class FakeBackend final : public SearchBackend {
 public:
  FakeBackend(testing::FakeLandscape landscape, int delay_ms)
      : evaluator_(std::move(landscape), delay_ms), pipeline_({&evaluator_}) {}
  CandidateEvaluator& evaluator() override { return evaluator_; }
  EvaluationPipeline& pipeline() override { return pipeline_; }
  size_t evaluators() override { return 1; }
  std::string fake_evaluator_note() const override {
    return "SPARSEDITTO_FAKE_EVALUATOR_MS was set: the tests' fake evaluator scored this run, nothing ran on a GPU";
  }

 private:
  SlowFakeEvaluator evaluator_;
  LocalEvaluationPipeline pipeline_;  // after evaluator_: goes first, joining its taker
};

absl::StatusOr<testing::FakeLandscape> FakeLandscapeOf(const std::vector<v1::Task>& tasks) {
  if (tasks.empty()) return absl::InvalidArgumentError("no task");
  auto seeds = LoadSeedLibrary(SeedLibraryDir());
  if (!seeds.ok()) return seeds.status();
  testing::FakeLandscape landscape = testing::Landscape(tasks[0], *seeds);
  landscape.finalist_failing_seeds = {"dense_cublas"};
  return landscape;
}

}  // namespace

absl::StatusOr<std::optional<int>> FakeEvaluatorDelayMs() {
  const char* value = std::getenv(kVariable);
  if (value == nullptr) return std::nullopt;
  int ms = 0;
  if (!absl::SimpleAtoi(value, &ms) || ms < 0 || ms > 60000) {
    return absl::InvalidArgumentError(fmt::format("{}={}: give milliseconds from 0 to 60000", kVariable, value));
  }
  return ms;
}

absl::StatusOr<std::unique_ptr<SearchBackend>> MakeFakeSearchBackend(const std::vector<v1::Task>& tasks, int delay_ms) {
  absl::StatusOr<testing::FakeLandscape> landscape = FakeLandscapeOf(tasks);
  if (!landscape.ok()) return landscape.status();
  return std::unique_ptr<SearchBackend>(std::make_unique<FakeBackend>(*std::move(landscape), delay_ms));
}

absl::StatusOr<std::unique_ptr<CandidateEvaluator>> MakeFakeBenchEvaluator(const std::vector<v1::Task>& tasks,
                                                                           int delay_ms) {
  absl::StatusOr<testing::FakeLandscape> landscape = FakeLandscapeOf(tasks);
  if (!landscape.ok()) return landscape.status();
  std::set<int64_t> ns;
  for (const v1::Task& task : tasks) ns.insert(task.n().begin(), task.n().end());
  landscape->n_values.assign(ns.begin(), ns.end());
  return std::unique_ptr<CandidateEvaluator>(std::make_unique<SlowFakeEvaluator>(*std::move(landscape), delay_ms));
}

}  // namespace sparseditto
