#include "coordinator/search/kernel_export.h"

#include <string>
#include <vector>

#include "common/shared_gpu.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

TEST(KernelExport, HeaderSaysWhatWhereHowFastAndHowToCall) {
  store::RunRecord run;
  run.set_run_id("nightly");
  run.set_project_revision("v0.1-12-gabc");
  run.set_provenance_json(R"({"gpu": "NVIDIA H200", "driver": "580.1", "cuda": "13.0"})");
  v1::Task task;
  task.set_name("nm24");
  task.set_op(v1::OP_SPMM);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_N_M);
  task.mutable_pattern()->set_n(2);
  task.mutable_pattern()->set_m(4);
  task.mutable_matrix()->mutable_generated()->set_rows(4096);
  task.mutable_matrix()->mutable_generated()->set_cols(11008);
  task.mutable_matrix()->set_seed(5);
  task.add_n(16);
  task.add_n(128);
  task.add_arch("sm_90a");
  v1::Candidate best;
  best.set_id("nm24.000042");
  best.set_seed_name("nm24_mma_sp");
  best.set_source("__global__ void k() {}\n");
  v1::Tunable* t = best.add_tunables();
  t->set_name("SPLIT_K");
  t->set_value("2");
  v1::EvalResult result;
  result.set_fitness(1.8);
  result.set_gpu_name("NVIDIA H200");
  result.set_arch("sm_90a");
  v1::TimingStats* timing = result.add_timings();
  timing->set_n(16);
  timing->set_median_ms(0.02);
  v1::BaselineTime* dense = (*result.mutable_baselines())[16].add_baselines();
  dense->set_name("cublas_dense");
  dense->set_available(true);
  dense->mutable_timing()->set_median_ms(0.04);
  v1::BaselineTime* lt = (*result.mutable_baselines())[16].add_baselines();
  lt->set_name("cusparselt_2to4");
  lt->set_available(false);

  const std::string file = ExportedKernel(run, task, best, result);
  for (const std::string& words : {
           std::string("task nm24 (run nightly)"),
           std::string("Candidate nm24.000042: seed nm24_mma_sp, tunables SPLIT_K=2, fitness 1.800"),
           std::string("spmm fp16, A is 4096 x 11008 generated from seed 5; pattern n_m, 2:4; n = 16, 128; arch sm_90a"),
           std::string("n=16: kernel 0.0200 ms | cublas_dense 0.0400 -> 2.00x the best baseline"),
           std::string("revision v0.1-12-gabc, GPU NVIDIA H200, driver 580.1, CUDA 13.0"),
           std::string("-arch=sm_90a"),
           std::string("problem.dtype = SD_DTYPE_FP16;"),
           std::string("problem.pattern.family = SD_PATTERN_N_M;"),
           std::string("int64_t n_values[] = {16, 128};"),
           std::string("sparseditto_prepare(&problem, &state, error, sizeof error)"),
           std::string("sparseditto_run(state, d_B, d_C, /*n=*/16, stream)"),
           std::string("sparseditto_release(state);"),
       }) {
    EXPECT_THAT(file, HasSubstr(words));
  }
  EXPECT_THAT(file, ::testing::Not(HasSubstr("cusparselt_2to4"))) << "unavailable baselines are left out";
  EXPECT_TRUE(file.ends_with("\n__global__ void k() {}\n")) << "the source follows the comment unchanged";
}

// The header says which checks the kernel passed, whether the finalist checks ran, and warns when its times
// come from a shared GPU.
TEST(KernelExport, HeaderSaysWhichChecksRanAndWhetherTheGpuWasShared) {
  struct Case {
    const char* name;
    std::string run_log;
    double kernel_idle_ms, baseline_idle_ms;
    std::vector<std::string> present, absent;
  };
  const std::string not_run = "Not run on it: the finalist checks";
  const std::string shared = "Warning: timed while other work shared the GPU";
  const Case cases[] = {
      {"a search's candidate: no finalist checks, quiet GPU", "", 0.02, 0.02,
       {"Checks: 2/2 correctness checks passed", not_run, "--name t --kernel <this file> --finalist"}, {shared}},
      {"finalist checks in the run log", "x\n[compute-sanitizer memcheck: exited with code 0]\ny\n", 0.02, 0.02,
       {"//   [compute-sanitizer memcheck: exited with code 0]\n"}, {not_run, shared}},
      {"the kernel timed on a shared GPU", "", kSharedGpuIdleSlackMs * 4, 0.02,
       {shared + " (idle trials took 0.400 ms, median, " + kSharedGpuRule + ")"}, {}},
      {"a baseline timed on a shared GPU", "", 0.02, kSharedGpuIdleSlackMs * 3, {shared + " (idle trials took 0.300"}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::Task task;
    task.set_name("t");
    v1::EvalResult result;
    result.set_run_log(c.run_log);
    result.add_checks()->set_passed(true);
    result.add_checks()->set_passed(true);
    v1::TimingStats* timing = result.add_timings();
    timing->set_n(16);
    timing->set_median_ms(0.02);
    timing->set_host_idle_median_ms(c.kernel_idle_ms);
    v1::BaselineTime* dense = (*result.mutable_baselines())[16].add_baselines();
    dense->set_name("cublas_dense");
    dense->set_available(true);
    dense->mutable_timing()->set_median_ms(0.04);
    dense->mutable_timing()->set_host_idle_median_ms(c.baseline_idle_ms);
    const std::string file = ExportedKernel(store::RunRecord(), task, v1::Candidate(), result);
    for (const std::string& words : c.present) EXPECT_THAT(file, HasSubstr(words));
    for (const std::string& words : c.absent) EXPECT_THAT(file, ::testing::Not(HasSubstr(words)));
  }
}

}  // namespace
}  // namespace sparseditto
