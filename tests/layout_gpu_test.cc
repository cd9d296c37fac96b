// GPU test (label "gpu"): the activation layout through the whole evaluator (issue 26 item 2). On tasks
// of layout nk (PyTorch's X [n x K] in, Y [n x M] out) over awkward shapes, the candidates whose
// sparseditto_layouts() names NK (the reference, dense_cublas, dense_cublaslt) pass smoke and full
// correctness; a KN-only seed is refused before prepare (REJECTED, naming the mask) though it passes the
// same task in KN; a candidate that claims NK but computes KN is WRONG; and a full evaluation times
// the baselines in NK (their notes say so). Skips where there is no GPU.
#include <cuda_runtime_api.h>

#include <filesystem>

#include "evaluator/evaluator.h"
#include "evaluator/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using testing_support::Slurp;
using ::testing::HasSubstr;

bool HaveGpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::unique_ptr<Evaluator> MakeEvaluator(bool correctness_only, const std::string& name) {
  EvaluatorOptions options;
  const fs::path cache = fs::path(testing_support::ProcessTempDir()) / name;
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

v1::Candidate FromFile(const std::string& id, const std::string& path) {
  v1::Candidate candidate;
  candidate.set_id(id);
  candidate.set_source(Slurp(fs::path(SPARSEDITTO_SOURCE_DIR) / path));
  return candidate;
}

v1::Task MakeTask(const std::string& name, v1::Dtype dtype, v1::PatternSpec pattern, int64_t rows, int64_t cols,
                  std::vector<int64_t> n, v1::Layout layout) {
  v1::Task task;
  task.set_name(name);
  task.set_dtype(dtype);
  *task.mutable_pattern() = std::move(pattern);
  task.mutable_matrix()->mutable_generated()->set_rows(rows);
  task.mutable_matrix()->mutable_generated()->set_cols(cols);
  for (int64_t v : n) task.add_n(v);
  task.add_arch("sm_90");
  task.set_seed(7);
  task.set_layout(layout);
  return task;
}

v1::PatternSpec Unstructured(double sparsity) {
  v1::PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  p.set_sparsity(sparsity);
  return p;
}

v1::PatternSpec TwoFour() {
  v1::PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_N_M);
  p.set_n(2);
  p.set_m(4);
  return p;
}

TEST(LayoutGpuTest, NkCandidatesAreCorrectAndTheOthersAreCaught) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto evaluator = MakeEvaluator(/*correctness_only=*/true, "layout_gpu_correctness");
  ASSERT_NE(evaluator, nullptr);
  const v1::Task tasks[] = {
      MakeTask("nk_2of4_fp16_128x256", v1::DTYPE_FP16, TwoFour(), 128, 256, {1, 17, 64}, v1::LAYOUT_NK),
      MakeTask("nk_unstructured90_fp32_300x1000", v1::DTYPE_FP32, Unstructured(0.9), 300, 1000, {3, 129},
               v1::LAYOUT_NK),
      MakeTask("nk_unstructured70_bf16_37x100", v1::DTYPE_BF16, Unstructured(0.7), 37, 100, {8, 33}, v1::LAYOUT_NK),
  };
  const v1::Candidate nk_candidates[] = {
      FromFile("reference", "kernels/reference/csr_reference.cu"),
      FromFile("dense_cublas", "kernels/seeds/dense_cublas.cu"),
      FromFile("dense_cublaslt", "kernels/seeds/dense_cublaslt.cu"),
  };
  int seed = 100;
  for (const v1::Task& task : tasks) {
    ASSERT_TRUE(evaluator->SetupTask(task).ok()) << task.name();
    for (const v1::Candidate& candidate : nk_candidates) {
      const v1::EvalResult result = evaluator->Evaluate(task, candidate, /*finalist=*/false, ++seed);
      EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE)
          << task.name() << " " << candidate.id() << ": " << result.failure_detail() << "\n" << result.run_log();
      EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_DONE) << task.name() << " " << candidate.id();
      EXPECT_GT(result.checks_size(), 2) << "smoke and full checks ran";
      std::printf("%-34s %-15s %2d checks, max rel err %.2e\n", task.name().c_str(), candidate.id().c_str(),
                  result.checks_size(), result.max_rel_error());
    }
  }

  // A KN-only seed: refused on the NK task before its prepare runs; the same seed passes the KN task.
  const v1::Candidate kn_only = FromFile("csr_warp_per_row", "kernels/seeds/csr_warp_per_row.cu");
  const v1::Task& nk = tasks[2];
  v1::Task kn = nk;
  kn.set_name("kn_unstructured70_bf16_37x100");
  kn.set_layout(v1::LAYOUT_KN);
  ASSERT_TRUE(evaluator->SetupTask(kn).ok());
  const v1::EvalResult refused = evaluator->Evaluate(nk, kn_only, false, ++seed);
  EXPECT_EQ(refused.failure(), v1::FAILURE_CATEGORY_REJECTED) << refused.failure_detail() << "\n" << refused.run_log();
  EXPECT_THAT(refused.failure_detail(), HasSubstr("does not support layout nk"));
  const v1::EvalResult kn_result = evaluator->Evaluate(kn, kn_only, false, ++seed);
  EXPECT_EQ(kn_result.failure(), v1::FAILURE_CATEGORY_NONE) << kn_result.failure_detail();

  // A mask that lies: NK claimed, KN computed. The judge's check in the task's layout catches it.
  const v1::Candidate liar = FromFile("liar", "tests/adversarial/layout_claim_nk_computes_kn.cu");
  for (const v1::Task* task : {&tasks[0], &tasks[2]}) {
    const v1::EvalResult caught = evaluator->Evaluate(*task, liar, false, ++seed);
    EXPECT_EQ(caught.failure(), v1::FAILURE_CATEGORY_WRONG) << task->name() << ": " << caught.failure_detail();
  }
  const v1::EvalResult honest_kn = evaluator->Evaluate(kn, liar, false, ++seed);
  EXPECT_EQ(honest_kn.failure(), v1::FAILURE_CATEGORY_NONE) << "the liar is right in KN: " << honest_kn.failure_detail();
}

// Fitness against baselines timed in the same layout: cuBLAS and cuSPARSE are available in NK and
// say so in their notes; the reference's evaluation completes with a fitness.
TEST(LayoutGpuTest, AFullNkEvaluationTimesTheBaselinesInNk) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto evaluator = MakeEvaluator(/*correctness_only=*/false, "layout_gpu_full");
  ASSERT_NE(evaluator, nullptr);
  for (const v1::Task& task :
       {MakeTask("nk_unstructured95_fp16_1024x2048", v1::DTYPE_FP16, Unstructured(0.95), 1024, 2048, {16, 129},
                 v1::LAYOUT_NK),
        MakeTask("nk_2of4_fp16_1024x2048", v1::DTYPE_FP16, TwoFour(), 1024, 2048, {16, 128}, v1::LAYOUT_NK)}) {
    ASSERT_TRUE(evaluator->SetupTask(task).ok()) << task.name();
    const v1::EvalResult result =
        evaluator->Evaluate(task, FromFile("reference", "kernels/reference/csr_reference.cu"), false, 5);
    std::printf("%s\n", FormatReport(task, result).c_str());
    EXPECT_TRUE(result.failure() == v1::FAILURE_CATEGORY_NONE || result.failure() == v1::FAILURE_CATEGORY_SLOWER)
        << result.failure_detail() << "\n" << result.run_log();
    ASSERT_EQ(result.timings_size(), 2) << task.name();
    for (const auto& t : result.timings()) {
      EXPECT_GT(t.median_ms(), 0);
      ASSERT_TRUE(result.baselines().contains(t.n()));
      int in_nk = 0;
      for (const auto& b : result.baselines().at(t.n()).baselines()) {
        std::printf("%s n=%lld %-20s %s %s\n", task.name().c_str(), static_cast<long long>(t.n()), b.name().c_str(),
                    b.available() ? "available" : "absent", b.note().c_str());
        if (b.available() && b.note().find("layout nk") != std::string::npos) ++in_nk;
        if (b.name() == "cublas_dense" || b.name() == "cusparse_csr") {
          EXPECT_TRUE(b.available()) << b.name() << ": " << b.note();
          EXPECT_THAT(b.note(), HasSubstr("layout nk")) << b.name();
        }
      }
      EXPECT_GE(in_nk, 2) << "cuBLAS dense and cuSPARSE CSR, timed in NK";
    }
    EXPECT_GT(result.fitness(), 0);
  }
}

}  // namespace
}  // namespace sparseditto
