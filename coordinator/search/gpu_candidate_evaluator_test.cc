// GpuCandidateEvaluator's compile-ahead on the real cascade's CPU half (this test needs no GPU: on a
// machine without one the GPU stages end INTERNAL after the compile): Prefetch compiles the batch on
// the pool in the background, Evaluate waits for and uses those results instead of compiling again, and
// a candidate the static screen refuses is never compiled.
#include "coordinator/search/gpu_candidate_evaluator.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/non_retryable.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

int64_t CacheEntries(const fs::path& cache) {
  int64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache / "objects")) n += e.path().extension() == ".json";
  return n;
}

// An evaluator over the real compiler and runner with its caches in `dir`, a small fp16 task, and the
// reference candidate ("good").
std::unique_ptr<Evaluator> MakeEvaluator(const fs::path& dir) {
  EvaluatorOptions options;
  options.compiler.cache_directory = (dir / "compile").string();
  options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.runner.runner_path = SPARSEDITTO_RUNNER;
  options.baseline_cache_dir = (dir / "baselines").string();
  auto evaluator = Evaluator::Create(options);
  EXPECT_TRUE(evaluator.ok()) << evaluator.status();
  return evaluator.ok() ? *std::move(evaluator) : nullptr;
}

v1::Task SmallTask() {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_FP16);
  task.add_arch("sm_80");
  task.add_n(16);
  return task;
}

v1::Candidate Reference() {
  v1::Candidate good;
  good.set_id("good");
  std::ifstream reference(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu", std::ios::binary);
  good.set_source(std::string(std::istreambuf_iterator<char>(reference), {}));
  return good;
}

TEST(GpuCandidateEvaluatorTest, PrefetchCompilesTheBatchOnceAndNeverWhatTheScreenRefuses) {
  testing_support::TempFolder folder("gpu_candidate_evaluator_test");
  ASSERT_TRUE(folder.ok());
  const fs::path& dir = folder.path();
  std::unique_ptr<Evaluator> evaluator = MakeEvaluator(dir);
  ASSERT_NE(evaluator, nullptr);
  const v1::Task task = SmallTask();
  const v1::Candidate good = Reference();
  ASSERT_FALSE(good.source().empty());
  v1::Candidate hostile;
  hostile.set_id("hostile");
  hostile.set_source(good.source() + "\n#include <sys/socket.h>\n");

  GpuCandidateEvaluator gpu(evaluator.get());
  gpu.Prefetch(task, {good, hostile});
  gpu.Prefetch(task, {good});  // pending already: not submitted twice

  const v1::EvalResult good_result = gpu.Evaluate(task, good, 1);  // waits for its own compile
  EXPECT_EQ(CacheEntries(dir / "compile"), 1) << "the refused candidate was not compiled";
  EXPECT_GT(good_result.compile_seconds(), 0) << "the prefetched compile's own time, not a cache hit's 0";
  EXPECT_NE(good_result.compile_log().find("ptxas"), std::string::npos);
  EXPECT_NE(good_result.failure(), v1::FAILURE_CATEGORY_COMPILE);
  const v1::EvalResult hostile_result = gpu.Evaluate(task, hostile, 1);
  EXPECT_EQ(hostile_result.failure(), v1::FAILURE_CATEGORY_REJECTED);
  EXPECT_EQ(CacheEntries(dir / "compile"), 1);

  const v1::EvalResult again = gpu.Evaluate(task, good, 1);  // no longer prefetched: an ordinary cache hit
  EXPECT_EQ(again.compile_seconds(), 0);
}

// `bench --finalist` prefetches every seed and evaluates each as a finalist: the finalist evaluation
// takes the prefetched compile and lets it go, so nothing stays held (and the next evaluation of the
// same candidate is an ordinary cache hit, not a second prefetched result).
TEST(GpuCandidateEvaluatorTest, AFinalistEvaluationTakesThePrefetchedCompile) {
  testing_support::TempFolder folder("gpu_candidate_evaluator_finalist");
  ASSERT_TRUE(folder.ok());
  std::unique_ptr<Evaluator> evaluator = MakeEvaluator(folder.path());
  ASSERT_NE(evaluator, nullptr);
  const v1::Task task = SmallTask();
  const v1::Candidate good = Reference();

  GpuCandidateEvaluator gpu(evaluator.get());
  gpu.Prefetch(task, {good});
  const v1::EvalResult finalist = gpu.EvaluateFinalist(task, good, 1);
  EXPECT_GT(finalist.compile_seconds(), 0) << "the prefetched compile's own time, not a cache hit's 0";
  EXPECT_NE(finalist.failure(), v1::FAILURE_CATEGORY_COMPILE) << finalist.failure_detail();
  const v1::EvalResult after = gpu.Evaluate(task, good, 2);
  EXPECT_EQ(after.compile_seconds(), 0) << "the prefetched result was let go by the finalist evaluation";
}

// A machine without the NVIDIA driver cannot set up any task, however often it tries: SetUp says so
// and marks it NonRetryable, so `search` does not retry it (batch_search.h).
TEST(GpuCandidateEvaluatorTest, SetUpWithoutADriverFailsAtOnceAndIsNotRetryable) {
  testing_support::TempFolder folder("gpu_candidate_evaluator_test");
  ASSERT_TRUE(folder.ok());
  EvaluatorOptions options;
  options.compiler.cache_directory = (folder / "compile").string();
  options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.runner.runner_path = SPARSEDITTO_RUNNER;
  options.baseline_cache_dir = (folder / "baselines").string();
  auto evaluator = Evaluator::Create(options);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  GpuCandidateEvaluator gpu(evaluator->get(), [] {
    return std::optional<std::string>("no NVIDIA driver was found on this machine (no /dev/nvidiactl)");
  });
  v1::Task task;
  task.set_name("t");
  const absl::Status s = gpu.SetUp(task);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(IsNonRetryable(s)) << s;
  EXPECT_NE(std::string(s.message()).find("no NVIDIA driver was found"), std::string::npos) << s;
  EXPECT_EQ(gpu.SetupReply().baselines_size(), 0) << "no set-up succeeded: no reply to build a bench row on";
  EXPECT_EQ(gpu.SetupReply().matrix_nnz(), 0);
}

TEST(GpuCandidateEvaluatorTest, DeviceFactsComeFromTheSetupReply) {
  struct Case { std::string name; v1::SetupTaskReply reply; DeviceFacts want; };
  v1::SetupTaskReply h200;
  h200.set_arch("sm_90a");
  h200.set_sm_count(132);
  h200.set_shared_memory_per_block_optin(232448);
  h200.set_shared_memory_per_sm(233472);
  v1::SetupTaskReply arch_only;
  arch_only.set_arch("sm_80");
  for (const Case& c : {Case{"every fact", h200, {.sm_count = 132, .smem_per_block = 232448, .smem_per_sm = 233472, .arch = 90}},
                        Case{"arch only", arch_only, {.arch = 80}}, Case{"nothing", {}, {}}}) {
    EXPECT_EQ(DeviceFactsFromSetup(c.reply), c.want) << c.name;
  }
}

}  // namespace
}  // namespace sparseditto
