#include "coordinator/search/kernel_export.h"
#include "coordinator/testing/export_build.h"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/shared_gpu.h"
#include "coordinator/search/export_wrapper.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "kernels/seed_library.h"
#include "mutators/plan/plan_composer.h"
#include "tests/testing/shell_command.h"
#define SPARSEDITTO_HARNESS
#include "sparseditto_weight_check.h"
#include "tests/testing/temp_folder.h"

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

  CsrMatrix searched;
  searched.rows = 4096;
  searched.cols = 11008;
  absl::StatusOr<std::string> exported = ExportedKernel(run, task, best, result, searched);
  ASSERT_TRUE(exported.ok()) << exported.status();
  const std::string& file = *exported;
  for (const std::string& words : {
           std::string("task nm24 (run nightly)"),
           std::string("Candidate nm24.000042: seed nm24_mma_sp, tunables SPLIT_K=2, fitness 1.800"),
           std::string("spmm fp16, A is 4096 x 11008 generated from seed 5; pattern n_m, 2:4; n = 16, 128; arch sm_90a"),
           std::string("n=16: kernel 0.0200 ms | cublas_dense 0.0400 -> 2.00x the best baseline"),
           std::string("revision v0.1-12-gabc, GPU NVIDIA H200, driver 580.1, CUDA 13.0"),
           std::string("./build.sh in this folder"),
           std::string("problem.dtype = SD_DTYPE_FP16;"),
           std::string("problem.pattern.family = SD_PATTERN_N_M;"),
           std::string("int64_t n_values[] = {16, 128};"),
           std::string("problem.layout = SD_LAYOUT_KN;"),
           std::string("arch sm_90a; layout kn"),
           std::string("nm24_prepare(&problem, &state, error, sizeof error)"),
           std::string("nm24_run(state, d_B, d_C, /*n=*/16, stream)"),
           std::string("nm24_release(state);"),
           // the source in a namespace of its own, under the exported entries; 2:4 with K a multiple of 4
           std::string("namespace sd_export_nm24 {\n"),
           std::string("__global__ void k() {}\n}  // namespace sd_export_nm24\n"),
           std::string("{/*dtype=*/2, /*pattern=*/{3, 0, 0, 0, 2, 4, 0, 0}, /*row_unit=*/1, /*col_unit=*/4,"),
           std::string("SPARSEDITTO_EXPORT int nm24_prepare(const sd_problem* problem"),
           std::string("if (sd_check_weight(problem, &sd_export_nm24_entry::kSearchedFor, error, error_capacity) != 0)"),
       }) {
    EXPECT_THAT(file, HasSubstr(words));
  }
  EXPECT_THAT(file, ::testing::Not(HasSubstr("cusparselt_2to4"))) << "unavailable baselines are left out";
  EXPECT_THAT(file, ::testing::Not(HasSubstr("#include \"candidate.h\"")));
  EXPECT_THAT(file, ::testing::Not(HasSubstr("NOT MEASURED")));

  // A run the tests' fake evaluator scored (cli/fake_search_backend.h) says so in the header.
  run.set_provenance_json(R"({"gpu": "unknown", "fake_evaluator": "the fake scored this run"})");
  absl::StatusOr<std::string> faked = ExportedKernel(run, task, best, result, searched);
  ASSERT_TRUE(faked.ok()) << faked.status();
  EXPECT_THAT(*faked, HasSubstr("GPU unknown, driver ?, CUDA ?; NOT MEASURED: the fake scored this run"));
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
       {"Checks: 2/2 correctness checks passed", not_run, "--name t --kernel <run folder>/t/candidates//kernel.cu --finalist"}, {shared}},
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
    const std::string file = ExportedKernel(store::RunRecord(), task, v1::Candidate(), result, CsrMatrix()).value();
    for (const std::string& words : c.present) EXPECT_THAT(file, HasSubstr(words));
    for (const std::string& words : c.absent) EXPECT_THAT(file, ::testing::Not(HasSubstr(words)));
  }
}

TEST(KernelExport, SymbolsAreCIdentifiersOfTheTaskName) {
  for (const auto& [name, symbol] : std::vector<std::pair<std::string, std::string>>{
           {"nm24", "nm24"}, {"nm24-4096.v2", "nm24_4096_v2"}, {"4096x4096", "t_4096x4096"}}) {
    EXPECT_EQ(ExportSymbol(name), symbol);
  }
}

// A kernel searched on a matrix file is held to that matrix: its shape, nnz and the digests of its rows,
// as sd_structure_digest computes them; a generated one only to its family's unit where its shape had it.
TEST(KernelExport, TheWeightSpecHoldsARealMatrixToItsStructure) {
  CsrMatrix m;
  m.rows = 3;
  m.cols = 8;
  m.row_offsets = {0, 2, 2, 3};
  m.col_indices = {1, 5, 7};
  v1::Task task;
  task.set_dtype(v1::DTYPE_BF16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_N_M);
  task.mutable_pattern()->set_n(1);
  task.mutable_pattern()->set_m(4);
  EXPECT_THAT(WeightSpecInitializer(task, m), HasSubstr("{3, 0, 0, 0, 1, 4, 0, 0}, /*row_unit=*/1, /*col_unit=*/4,\n /*exact=*/0,"));
  m.cols = 10;
  EXPECT_THAT(WeightSpecInitializer(task, m), HasSubstr("/*col_unit=*/1,")) << "10 columns are not groups of 4";
  task.mutable_matrix()->mutable_file()->set_path("w.smtx");
  const std::string spec = WeightSpecInitializer(task, m);
  EXPECT_THAT(spec, HasSubstr("/*exact=*/1, /*rows=*/3, /*cols=*/10, /*nnz=*/3,"));
  std::vector<std::string> digests;
  for (int chunk = 0; chunk < SD_WEIGHT_DIGEST_CHUNKS; ++chunk) {
    digests.push_back(fmt::format("0x{:016x}ull", sd_structure_digest(m.row_offsets.data(), m.col_indices.data(),
                                                                      sd_digest_chunk_begin(3, chunk),
                                                                      sd_digest_chunk_begin(3, chunk + 1))));
  }
  EXPECT_THAT(spec, HasSubstr(fmt::format("{}", fmt::join(digests, ", "))));
  EXPECT_NE(digests[15], digests[0]) << "row 2 holds a column, the empty chunks none";
}

TEST(KernelExport, TasksWhoseSymbolsClashAreRefused) {
  EXPECT_TRUE(CheckExportSymbols({"alpha", "beta", "alpha.v2"}).ok());
  const absl::Status clash = CheckExportSymbols({"a-b", "c", "a_b"});
  EXPECT_EQ(clash.message(), "tasks a-b and a_b would both export a_b_prepare; rename one");
}

TEST(KernelExport, BuildScriptUsesTheEvaluatorsFlagsAndLibraries) {
  v1::Task task;
  task.add_arch("sm_90a");
  absl::StatusOr<std::vector<std::string>> flags = ExportNvccFlags(task);
  ASSERT_TRUE(flags.ok()) << flags.status();
  CompileOptions evaluator;
  evaluator.abi_include_dir = ".";
  evaluator.archs = {"sm_90a"};
  EXPECT_EQ(*flags, NvccFlags(evaluator).value());
  const std::string script = BuildScript({{"a.cu", *flags}});
  std::string quoted;
  for (const std::string& flag : *flags) quoted += " '" + flag + "'";
  EXPECT_THAT(script, HasSubstr("'a.cu') \"$NVCC\"" + quoted + " -c -o 'a.o' 'a.cu' ;;"));
  for (std::string_view lib : kCandidateLibraries) EXPECT_THAT(script, HasSubstr(std::string(lib)));
  task.set_arch(0, "compute_90");
  EXPECT_FALSE(ExportNvccFlags(task).ok()) << "a bad arch is an error, not a script that fails later";
}

// A dispatch plan exports as the plan: its variants by n under one task's entries. Two exports of one
// plan (two layer shapes that chose the same kernels) build with the generated build.sh and the real
// nvcc into one library that exports each task's five entries as C names (C++ names an instantiation
// inside a seed's unnamed namespace may show are per file: nvcc names that namespace after the file).
TEST(KernelExport, TwoPlansOfOneSeedBuildIntoOneLibrary) {
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  auto seed = [&](const std::string& name) {
    for (const SeedKernel& s : *seeds) {
      if (s.name == name) return s.source;
    }
    ADD_FAILURE() << "no seed " << name;
    return std::string();
  };
  absl::StatusOr<std::string> plan = ComposePlanSource(
      {{.name = "t.000001", .seed_name = "csr_warp_per_row", .source = seed("csr_warp_per_row"), .serves = {{1, 16}}},
       {.name = "t.000002", .seed_name = "dense_cublas", .source = seed("dense_cublas"), .serves = {{17, 1 << 20}}}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  testing_support::TempFolder scratch("kernel_export_test");
  ASSERT_TRUE(scratch.ok());
  std::vector<ExportedFile> files;
  for (const char* name : {"layer0", "layer1"}) {
    v1::Task task;
    task.set_name(name);
    task.set_dtype(v1::DTYPE_FP16);
    task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
    v1::Candidate best;
    best.set_id(std::string(name) + ".000009");
    best.set_source(*plan);
    CsrMatrix searched;
    searched.rows = searched.cols = 64;
    absl::StatusOr<std::string> file = ExportedKernel(store::RunRecord(), task, best, v1::EvalResult(), searched);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_THAT(*file, HasSubstr("A dispatch plan: run() picks the variant by n:\n//   t.000001 (seed csr_warp_per_row) serves n 1-16"));
    std::ofstream(scratch.path() / (std::string(name) + ".cu")) << *file;
    files.push_back({std::string(name) + ".cu", ExportNvccFlags(task).value()});
  }
  const auto built = testing::BuildExports(scratch.path(), files, "libplans.so");
  ASSERT_TRUE(std::filesystem::exists(scratch.path() / "libplans.so")) << built.out << built.err;
  const auto symbols = testing_support::RunShell(
      fmt::format("cd '{}' && nm -D --defined-only libplans.so | grep ' T ' | sed 's/.* T //' | grep -v '^_Z' | sort | "
                  "tr '\\n' ' '",
                  scratch.path().string()),
      scratch.path());
  EXPECT_EQ(symbols.out,
            "layer0_abi_version layer0_layouts layer0_prepare layer0_release layer0_run "
            "layer1_abi_version layer1_layouts layer1_prepare layer1_release layer1_run ") << symbols.err;
}

// An attack on the export's weight check: a hostile candidate defines sd_check_weight as a macro that
// does nothing (the evaluator never calls it, so the candidate passes there), hoping the exported
// <task>_prepare expands it and hands any weight to the kernel. The wrapper #undefs every macro the
// candidate defines before its entries, so the built library still refuses a weight of another dtype.
TEST(KernelExport, ACandidateCannotMacroAwayTheWeightCheck) {
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  std::string seed_source;
  for (const SeedKernel& s : *seeds) {
    if (s.name == "csr_warp_per_row") seed_source = s.source;
  }
  ASSERT_FALSE(seed_source.empty());
  const std::vector<std::string> attacks = {
      "#define sd_check_weight(...) 0\n",
      "#  define sd_check_weight(p, s, e, c) (0)\n",
      "# \\\n define sd_check_weight(...) 0\n",
  };
  testing_support::TempFolder scratch("kernel_export_attack_test");
  ASSERT_TRUE(scratch.ok());
  for (size_t i = 0; i < attacks.size(); ++i) {
    SCOPED_TRACE(attacks[i]);
    const std::string name = fmt::format("attack{}", i);
    v1::Task task;
    task.set_name(name);
    task.set_dtype(v1::DTYPE_FP16);
    task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
    v1::Candidate hostile;
    hostile.set_id(name + ".000001");
    hostile.set_source(seed_source + "\n" + attacks[i]);  // after its code: a leading one stops the export
    CsrMatrix searched;
    searched.rows = searched.cols = 4;
    absl::StatusOr<std::string> file = ExportedKernel(store::RunRecord(), task, hostile, v1::EvalResult(), searched);
    ASSERT_TRUE(file.ok()) << file.status();
    const std::filesystem::path dir = scratch.path() / name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / (name + ".cu")) << *file;
    const auto built = testing::BuildExports(dir, {{name + ".cu", ExportNvccFlags(task).value()}}, "libattack.so");
    ASSERT_TRUE(std::filesystem::exists(dir / "libattack.so")) << built.out << built.err;
    void* library = dlopen((dir / "libattack.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    auto prepare = reinterpret_cast<decltype(&sparseditto_prepare)>(dlsym(library, (name + "_prepare").c_str()));
    ASSERT_NE(prepare, nullptr);
    const testing::IdentityWeight weight;
    sd_problem problem = weight.Problem(SD_DTYPE_FP32);  // the kernel was searched for fp16
    void* state = nullptr;
    char error[256] = "";
    EXPECT_NE(prepare(&problem, &state, error, sizeof error), 0) << "the macro switched the weight check off";
    EXPECT_THAT(std::string(error), HasSubstr("weight check: dtype 1, the kernel was searched for 2"));
    dlclose(library);
  }
}

}  // namespace
}  // namespace sparseditto
