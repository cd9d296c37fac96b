// An exported kernel on the GPU (label gpu; skips without one): a seed and a composed dispatch plan are
// exported (kernel_export.h), built with their build.sh and the real nvcc for this GPU's arch, loaded,
// and called through their per-task entries: prepare takes the searched weight, run gives A*B at n
// values of both plan variants, and prepare refuses a weight of another pattern with the weight check's
// message.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "coordinator/search/export_wrapper.h"
#include "coordinator/search/kernel_export.h"
#include "coordinator/testing/export_build.h"
#include "evaluator/gpu/gpu_test_util.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "kernels/seed_library.h"
#include "matrix/generators.h"
#include "mutators/plan/plan_composer.h"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"
#define SPARSEDITTO_HARNESS
#include "sparseditto_kernel.h"

namespace sparseditto {
namespace {

std::string SeedSource(const std::string& name) {
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  for (const SeedKernel& s : seeds.ok() ? *seeds : std::vector<SeedKernel>{}) {
    if (s.name == name) return s.source;
  }
  ADD_FAILURE() << "no seed " << name;
  return "";
}

TEST(KernelExportGpuTest, ExportsBuildLoadComputeAndRefuseAWrongWeight) {
  if (!gpu::testing::HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  cudaDeviceProp props{};
  ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
  v1::Task task;
  task.set_dtype(v1::DTYPE_FP32);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.mutable_pattern()->set_sparsity(0.9f);
  task.add_arch(fmt::format("sm_{}{}", props.major, props.minor));
  absl::StatusOr<CsrMatrix> a = GenerateMatrix(task.pattern(), 96, 80, 5, v1::DTYPE_FP32);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::string> plan = ComposePlanSource(
      {{.name = "v0", .seed_name = "csr_warp_per_row", .source = SeedSource("csr_warp_per_row"), .serves = {{1, 16}}},
       {.name = "v1", .seed_name = "dense_cublas", .source = SeedSource("dense_cublas"), .serves = {{17, 1 << 20}}}});
  ASSERT_TRUE(plan.ok()) << plan.status();

  testing_support::TempFolder scratch("kernel_export_gpu_test");
  ASSERT_TRUE(scratch.ok());
  std::vector<ExportedFile> files;
  const std::vector<std::pair<std::string, std::string>> kernels = {{"single", SeedSource("csr_warp_per_row")},
                                                                    {"plan", *plan}};
  for (const auto& [name, source] : kernels) {
    task.set_name(name);
    v1::Candidate best;
    best.set_source(source);
    absl::StatusOr<std::string> file = ExportedKernel(store::RunRecord(), task, best, v1::EvalResult(), *a);
    ASSERT_TRUE(file.ok()) << file.status();
    std::ofstream(scratch.path() / (name + ".cu")) << *file;
    files.push_back({name + ".cu", ExportNvccFlags(task).value()});
  }
  const auto built = testing::BuildExports(scratch.path(), files, "libexports.so");
  void* library = dlopen((scratch.path() / "libexports.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror() << built.out;

  const std::vector<int64_t> n_values = {8, 64};  // one n per plan variant
  const std::vector<float> b_host = gpu::testing::RandomValues(a->cols * 64, 9, v1::DTYPE_FP32);
  void *b = nullptr, *c = nullptr;
  ASSERT_EQ(cudaMalloc(&b, b_host.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, a->rows * 64 * sizeof(float)), cudaSuccess);
  for (const auto& [name, source] : kernels) {
    SCOPED_TRACE(name);
    auto prepare = reinterpret_cast<decltype(&sparseditto_prepare)>(dlsym(library, (name + "_prepare").c_str()));
    auto run = reinterpret_cast<decltype(&sparseditto_run)>(dlsym(library, (name + "_run").c_str()));
    auto release = reinterpret_cast<decltype(&sparseditto_release)>(dlsym(library, (name + "_release").c_str()));
    ASSERT_TRUE(prepare != nullptr && run != nullptr && release != nullptr);
    sd_problem problem = {};
    problem.abi_version = SPARSEDITTO_ABI_VERSION;
    problem.dtype = SD_DTYPE_FP32;
    problem.rows = a->rows;
    problem.cols = a->cols;
    problem.nnz = a->nnz();
    problem.pattern.family = SD_PATTERN_UNSTRUCTURED;
    problem.pattern.sparsity = 0.9f;
    problem.row_offsets = a->row_offsets.data();
    problem.col_indices = a->col_indices.data();
    problem.values = a->values.data();
    problem.n_values = n_values.data();
    problem.num_n_values = static_cast<int32_t>(n_values.size());
    char error[512] = "";
    void* state = nullptr;
    ASSERT_EQ(prepare(&problem, &state, error, sizeof error), 0) << error;
    for (const int64_t n : n_values) {
      std::vector<float> b_n(b_host.begin(), b_host.begin() + a->cols * n), got(a->rows * n);
      ASSERT_EQ(cudaMemcpy(b, b_n.data(), b_n.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(run(state, b, c, n, nullptr), 0) << "n " << n;
      ASSERT_EQ(cudaMemcpy(got.data(), c, got.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      double worst = 0;
      for (int64_t r = 0; r < a->rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          double want = 0, scale = 0;
          for (int32_t k = a->row_offsets[r]; k < a->row_offsets[r + 1]; ++k) {
            want += double(a->values[k]) * b_n[a->col_indices[k] * n + j];
            scale += std::fabs(double(a->values[k]) * b_n[a->col_indices[k] * n + j]);
          }
          worst = std::max(worst, std::fabs(got[r * n + j] - want) / std::max(scale, 1e-6));
        }
      }
      EXPECT_LT(worst, 1e-3) << "n " << n;
    }
    release(state);
    problem.pattern.family = SD_PATTERN_BANDED;
    problem.pattern.half_bandwidth = 2;
    EXPECT_NE(prepare(&problem, &state, error, sizeof error), 0);
    EXPECT_EQ(std::string(error), "weight check: pattern.family is 6, the kernel was searched for 1");
  }
  cudaFree(b);
  cudaFree(c);
  dlclose(library);
}

}  // namespace
}  // namespace sparseditto
