// GPU test (label "gpu"): the whole evaluator on the real GPU. The reference candidate must come out
// correct on every example task in configs/tasks, and a full evaluation (timing, baselines, fitness)
// must produce sane numbers. Skips where there is no GPU.
#include <cuda_runtime_api.h>

#include <filesystem>

#include "evaluator/evaluator.h"
#include "evaluator/report.h"
#include "gtest/gtest.h"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using testing_support::Slurp;

bool HaveGpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::unique_ptr<Evaluator> MakeEvaluator(bool correctness_only) {
  EvaluatorOptions options;
  const fs::path cache = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / ("sd_evaluator_gpu_" + std::to_string(getpid()));
  options.compiler.cache_directory = (cache / "compile").string();
  options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.runner.runner_path = SPARSEDITTO_RUNNER;
  options.runner_options.set_correctness_only(correctness_only);
  options.runner_options.set_skip_baselines(correctness_only);
  options.runner_options.set_max_timing_seconds(0.5);
  auto evaluator = Evaluator::Create(options);
  EXPECT_TRUE(evaluator.ok()) << evaluator.status();
  return evaluator.ok() ? *std::move(evaluator) : nullptr;
}

v1::Candidate Reference() {
  v1::Candidate candidate;
  candidate.set_id("reference");
  candidate.set_source(Slurp(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu"));
  return candidate;
}

TEST(EvaluatorGpuTest, ReferenceCandidateIsCorrectOnEveryExampleTask) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto evaluator = MakeEvaluator(/*correctness_only=*/true);
  ASSERT_NE(evaluator, nullptr);
  int tasks = 0;
  for (const auto& entry : fs::directory_iterator(SPARSEDITTO_SOURCE_DIR "/configs/tasks")) {
    if (entry.path().extension() != ".yaml") continue;
    auto batch = LoadTaskFile(entry.path().string());
    ASSERT_TRUE(batch.ok()) << batch.status();
    for (v1::Task task : batch->tasks()) {
      ++tasks;
      auto setup = evaluator->SetupTask(task);
      ASSERT_TRUE(setup.ok()) << task.name() << ": " << setup.status();
      const v1::EvalResult result = evaluator->Evaluate(task, Reference(), /*finalist=*/false, 11);
      EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE) << task.name() << ": " << result.failure_detail();
      EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_DONE) << task.name();
      std::printf("reference on %-36s nnz %10lld  %2d checks  max rel err %.2e  prepare %.1f ms\n",
                  task.name().c_str(), static_cast<long long>(setup->matrix_nnz()), result.checks_size(),
                  result.max_rel_error(), result.prepare_ms());
    }
  }
  EXPECT_GE(tasks, 8);
}

// A 1024 x 2048 fp16 task at 95% unstructured sparsity, n 16 and 129 (an odd width).
v1::Task Unstructured95Task(const std::string& name) {
  v1::Task task;
  task.set_name(name);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.mutable_pattern()->set_sparsity(0.95);
  task.mutable_matrix()->mutable_generated()->set_rows(1024);
  task.mutable_matrix()->mutable_generated()->set_cols(2048);
  task.add_n(16);
  task.add_n(129);
  task.add_arch("sm_90");
  task.set_seed(3);
  return task;
}

TEST(EvaluatorGpuTest, AFullEvaluationTimesTheCandidateAndTheBaselines) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto evaluator = MakeEvaluator(/*correctness_only=*/false);
  ASSERT_NE(evaluator, nullptr);
  const v1::Task task = Unstructured95Task("unstructured95_1024x2048_fp16");
  ASSERT_TRUE(evaluator->SetupTask(task).ok());
  const v1::EvalResult result = evaluator->Evaluate(task, Reference(), /*finalist=*/true, 5);
  std::printf("%s\n", FormatReport(task, result).c_str());
  EXPECT_TRUE(result.failure() == v1::FAILURE_CATEGORY_NONE || result.failure() == v1::FAILURE_CATEGORY_SLOWER)
      << result.failure_detail() << "\n" << result.run_log();
  ASSERT_EQ(result.timings_size(), 2);
  for (const auto& t : result.timings()) {
    EXPECT_GT(t.median_ms(), 0);
    EXPECT_GE(t.trials(), 20);
    EXPECT_LE(t.p10_ms(), t.median_ms());
    EXPECT_GE(t.host_median_ms(), t.median_ms() * 0.5);
    ASSERT_TRUE(result.baselines().contains(t.n()));
    int available = 0;
    for (const auto& b : result.baselines().at(t.n()).baselines()) available += b.available();
    EXPECT_GE(available, 2) << "cuBLAS dense and cuSPARSE CSR";
  }
  EXPECT_GT(result.fitness(), 0);
  EXPECT_FALSE(result.flagged_implausible());
  EXPECT_NE(result.run_log().find("compute-sanitizer memcheck"), std::string::npos) << result.run_log();
  // The sanitizers ran the task's own tiles too: its first 256 rows at every n of the task (MakeTaskCropCase).
  EXPECT_NE(result.run_log().find("ran crop/first_256_rows_256x2048 ("), std::string::npos) << result.run_log();
  EXPECT_NE(result.run_log().find("at n = 16, 129\n"), std::string::npos) << result.run_log();
}

// The screen with a bar (EvaluateRequest.screen): far from an unreachable bar the screen stands; near
// a bar every correct child clears, the same evaluation goes on to a full timing in the same host.
TEST(EvaluatorGpuTest, AScreenNearTheBarGoesOnToAFullTimingInTheSameEvaluation) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto evaluator = MakeEvaluator(/*correctness_only=*/false);
  ASSERT_NE(evaluator, nullptr);
  const v1::Task task = Unstructured95Task("unstructured95_1024x2048_fp16_screen");
  ASSERT_TRUE(evaluator->SetupTask(task).ok());
  v1::ScreenBar unreachable;
  unreachable.set_margin(0.1);
  unreachable.set_elite_fitness(1000);
  (*unreachable.mutable_elite_ms_by_n())[16] = 1e-6;
  (*unreachable.mutable_elite_ms_by_n())[129] = 1e-6;
  v1::ScreenBar easy;
  easy.set_margin(0.1);
  easy.set_elite_fitness(1e-6);
  struct Case {
    const char* what;
    const v1::ScreenBar* bar;
    bool full;
  };
  for (const Case& c : {Case{"unreachable bar", &unreachable, false}, Case{"easy bar", &easy, true}}) {
    SCOPED_TRACE(c.what);
    const v1::EvalResult result =
        evaluator->Evaluate(task, Reference(), /*finalist=*/false, 7, nullptr, TimingDepth::kScreen, c.bar);
    EXPECT_GT(result.fitness(), 0) << result.failure_detail() << "\n" << result.run_log();
    ASSERT_EQ(result.timings_size(), 2);
    EXPECT_EQ(result.timed_in_full_after_screen(), c.full);
    EXPECT_EQ(result.timing_screen(), !c.full);
    for (const auto& t : result.timings()) {
      if (c.full) {
        EXPECT_GE(t.trials(), 20) << "a full timing's trials";
      }
      std::printf("%s: n=%lld median %.4f ms over %d trials\n", c.what, static_cast<long long>(t.n()), t.median_ms(),
                  t.trials());
    }
  }
}

}  // namespace
}  // namespace sparseditto
