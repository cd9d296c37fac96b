// End-to-end tests of the sparseditto binary: the commands a user types, their output and exit codes.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#define SPARSEDITTO_HARNESS
#include "sparseditto_kernel.h"
#include "tests/testing/temp_folder.h"
#include "tests/testing/shell_command.h"

namespace {

namespace fs = std::filesystem;

const std::string kDlmcFile = std::string(SPARSEDITTO_DATA_DIR) +
    "/dlmc/transformer/magnitude_pruning/0.9/body_encoder_layer_0_ffn_conv1_fully_connected.smtx";

using Outcome = sparseditto::testing_support::ShellOutcome;
using sparseditto::testing_support::RunShell;
using sparseditto::testing_support::Slurp;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / ("sd_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome Run(const std::string& args) { return RunShell(std::string("'") + SPARSEDITTO_BINARY + "' " + args, dir_); }

  fs::path Write(const std::string& name, const std::string& contents) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

  fs::path dir_;
};

// The revision a run records (and --version prints) is the source tree's at build time, not at configure
// time: session 11 found runs of a4f2a39 stamped 0137e34-dirty, the commit the build was configured at.
TEST_F(CliTest, VersionNamesTheRevisionTheBinaryWasBuiltFrom) {
  const Outcome git = RunShell("git -C '" + std::string(SPARSEDITTO_SOURCE_DIR) + "' describe --always --dirty --tags", dir_);
  if (git.exit_code != 0) GTEST_SKIP() << "the source tree is not a git checkout: " << git.err;
  std::string revision = git.out;
  while (!revision.empty() && revision.back() == '\n') revision.pop_back();
  const Outcome r = Run("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(revision " + revision + ")"), std::string::npos)
      << r.out << " (git describe now: " << revision << "; rebuild if the tree changed since the build)";
}

TEST_F(CliTest, AnalyzePrintsTheFeaturesOfADlmcMatrix) {
  ASSERT_TRUE(fs::exists(kDlmcFile)) << kDlmcFile;
  const Outcome r = Run("analyze '" + kDlmcFile + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2048"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("104857"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("unstructured"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "summary must be one line: " << r.err;
}

TEST_F(CliTest, AnalyzeOfATruncatedFileExits1NamingTheFileAndTheFault) {
  ASSERT_TRUE(fs::exists(kDlmcFile)) << kDlmcFile;
  const std::string whole = Slurp(kDlmcFile);
  const fs::path truncated = Write("truncated.smtx", whole.substr(0, whole.size() / 3));
  const Outcome r = Run("analyze '" + truncated.string() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(truncated.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliTest, ValidateAcceptsEveryExampleTaskAndSuite) {
  for (const char* folder : {"/configs/tasks", "/configs/suites"}) {
    int files = 0;
    for (const auto& entry : fs::directory_iterator(std::string(SPARSEDITTO_SOURCE_DIR) + folder)) {
      if (entry.path().extension() != ".yaml") continue;
      ++files;
      const Outcome r = Run("validate '" + entry.path().string() + "'");
      EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << r.err;
      EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;
    }
    EXPECT_GE(files, 6) << folder;
  }
}

TEST_F(CliTest, ValidateOfAMisspeltFieldExits1NamingTheLine) {
  const fs::path task = Write("misspelt.yaml",
                              "name: t\n"
                              "op: spmm\n"
                              "dtpye: fp16\n"
                              "pattern: {family: unstructured, sparsity: 0.9}\n"
                              "matrix: {generated: {rows: 64, cols: 64}}\n"
                              "n: [16]\n");
  const Outcome r = Run("validate '" + task.string() + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(task.string() + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dtpye"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dtype"), std::string::npos) << "should suggest the right name: " << r.err;
}

// `bench --list` needs no GPU: which seeds apply to which task. Each seed-finalists suite must reach every
// seed file (scripts/seed_finalists.sh runs each through the sanitizers on it): the small awkward shapes, and the
// real widths where the seeds' widest tiles run.
TEST_F(CliTest, BenchListReachesEverySeedOnTheSeedFinalistsSuites) {
  const std::string src = SPARSEDITTO_SOURCE_DIR;
  struct Case { const char* suite; const char* bsr_wgmma_task; const char* banded_task; };
  for (const Case& c : {Case{"seed_finalists", "fin_block64_80_bf16", "fin_banded_fp32"},
                        Case{"seed_finalists_wide", "wide_block64_90_bf16", "wide_banded_fp32"}}) {
    SCOPED_TRACE(c.suite);
    const Outcome r = Run("bench --suite '" + src + "/configs/suites/" + c.suite + ".yaml' --seeds '" + src +
                          "/kernels/seeds' --list");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int seeds = 0;
    for (const auto& entry : fs::directory_iterator(src + "/kernels/seeds")) {
      const std::string stem = entry.path().stem().string();
      if (entry.path().extension() != ".cu" || stem.find("_test") != std::string::npos) continue;  // LoadSeedLibrary's rule
      ++seeds;
      EXPECT_NE(r.out.find("\t" + stem + "\t"), std::string::npos) << stem << " applies to no task of the suite:\n" << r.out;
    }
    EXPECT_GE(seeds, 15);
    EXPECT_NE(r.out.find(std::string(c.bsr_wgmma_task) + "\tbsr_wgmma\t" + src + "/kernels/seeds/bsr_wgmma.cu\n"),
              std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(std::string(c.banded_task) + "\tbsr_mma"), std::string::npos) << "a block seed on a banded task:\n" << r.out;
  }
}

// The NK suite (PyTorch's layout) is seeded only with seeds that export SD_LAYOUT_NK: the stream seeds at small n
// and nm24_wgmma_sp, never a KN-only sparse seed.
TEST_F(CliTest, BenchListOfTheNkSuiteHasOnlyNkSeeds) {
  const std::string src = SPARSEDITTO_SOURCE_DIR;
  const Outcome r = Run("bench --suite '" + src + "/configs/suites/llm_nk.yaml' --seeds '" + src + "/kernels/seeds' --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"llm_nk_nm24_4096x4096_fp16\tnm24_stream_sp\t", "llm_nk_nm24_4096x4096_fp16\tnm24_wgmma_sp\t",
                           "llm_nk_unstructured90_4096x4096_fp16\tu14_stream_sp\t", "llm_nk_unstructured70_4096x4096_fp16\tdense_stream\t",
                           "llm_nk_unstructured50_8192x8192_fp16\tdense_cublaslt\t"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing:\n" << r.out;
  }
  for (const char* kn_only : {"\tnm24_mma_sp\t", "\tcsr_warp_per_row\t", "\tbitmap_tc\t", "\tpair_mask_tc\t"}) {
    EXPECT_EQ(r.out.find(kn_only), std::string::npos) << kn_only << " is KN only:\n" << r.out;
  }
}

// `bench --resume` keeps the rows of OUT/bench.json and benches only the tasks they do not finish; with
// every task finished it needs no GPU and writes the merged table in the suite's order. A bench.json it
// cannot read is left as it is, and the error names it.
TEST_F(CliTest, BenchResumeKeepsFinishedTasksAndRefusesAnUnreadableBenchJson) {
  const fs::path suite = Write("suite.yaml", R"(defaults: {op: spmm, dtype: fp16, arch: [sm_90a], n: [16, 128]}
tasks:
  - name: first
    pattern: {family: unstructured, sparsity: 0.9}
    matrix: {generated: {rows: 64, cols: 64}}
  - name: second
    pattern: {family: unstructured, sparsity: 0.5}
    matrix: {generated: {rows: 64, cols: 64}}
)");
  auto row = [](const std::string& task, int n, double ms) {
    return "{\"task\": \"" + task + "\", \"dtype\": \"fp16\", \"n\": " + std::to_string(n) +
           ", \"best_kernel\": \"dense_cublas\", \"kernel_ms\": " + std::to_string(ms) +
           ", \"baselines_ms\": {\"cublas_dense\": 0.004, \"cusparse_csr\": null}, \"seeds_ms\": [{\"seed\": "
           "\"dense_cublas\", \"ms\": " + std::to_string(ms) + "}], \"speedup_over_best_baseline\": 2.0, "
           "\"speedup_over_dense\": 2.0, \"fraction_of_limit\": 0.1, \"failures\": \"\", \"shared_gpu\": false}";
  };
  fs::create_directories(dir_ / "out");
  const std::string kept = "[" + row("second", 16, 0.002) + ", " + row("second", 128, 0.002) + ", " +
                           row("first", 16, 0.002) + ", " + row("first", 128, 0.002) + "]";
  Write("out/bench.json", kept);
  const std::string bench = "bench --suite '" + suite.string() + "' --out '" + (dir_ / "out").string() + "' --resume";
  const Outcome r = Run(bench);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("4 rows kept; 2 of 2 tasks done, 0 to bench"), std::string::npos) << r.err;
  const std::string table = Slurp(dir_ / "out" / "bench.txt");
  EXPECT_LT(table.find("first "), table.find("second ")) << "the suite's order:\n" << table;
  EXPECT_NE(table.find("fp16: geomean speedup of the best seed over the best baseline 2.00x"), std::string::npos) << table;
  EXPECT_NE(Slurp(dir_ / "out" / "bench.csv").find("first,fp16,16,dense_cublas"), std::string::npos);

  const std::string truncated = kept.substr(0, kept.size() / 2);
  Write("out/bench.json", truncated);
  const Outcome bad = Run(bench);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find((dir_ / "out" / "bench.json").string() + ": not JSON"), std::string::npos) << bad.err;
  EXPECT_EQ(Slurp(dir_ / "out" / "bench.json"), truncated) << "an unreadable bench.json is left as it is";
}

TEST_F(CliTest, ExitCodesFollowTheConvention) {
  struct Case { std::string args; int want; };
  const Case cases[] = {
      {"--help", 0},
      {"analyze --help", 0},
      {"validate --help", 0},
      {"", 2},                              // a subcommand is required
      {"frobnicate", 2},                    // unknown subcommand
      {"analyze", 2},                       // missing FILE
      {"analyze x.smtx --dtype fp64", 2},   // bad option value
      {"analyze /nonexistent/m.smtx", 1},   // well-formed command, missing input
      {"validate /nonexistent/t.yaml", 1},
      {"eval --task /nonexistent/t.yaml --kernel k.cu", 1},
      {"eval --task t.yaml", 2},                // --kernel missing
      {"eval --task t.yaml --kernel k.cu --finalist --task-shapes-only", 2},  // a finalist checks every shape
      {"bench --suite /nonexistent/s.yaml", 1},
      {"bench", 2},                             // --suite missing
      {"bench --help", 0},
      {"search", 2},                            // the task file is required
      {"search /nonexistent/t.yaml", 1},
      {"search --help", 0},
      {"search t.yaml --retries -1", 2},        // out of range
      {"search t.yaml --finalists -1", 2},      // out of range
      {"status", 2},                            // RUN is required
      {"status /nonexistent/run", 1},
      {"status /nonexistent/run --json", 1},
      {"report", 2},                            // RUN is required
      {"report /nonexistent/run", 1},
      {"export", 2},
      {"export /nonexistent/run", 1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Run(c.args).exit_code, c.want) << "sparseditto " << c.args;
  }
}

// status and export over a real run: search_kill_child runs a two-task batch search with the fake
// evaluator into a store and a run folder, as `sparseditto search` does with the GPU.
TEST_F(CliTest, StatusAndExportReadARunFromItsStore) {
  const fs::path run = dir_ / "runs" / "run";
  const std::string make_run = std::string("'") + SEARCH_KILL_CHILD + "' '" + (run / "store").string() + "' '" +
                               run.string() + "' '" + (dir_ / "calls.log").string() + "' >/dev/null";
  ASSERT_EQ(std::system(make_run.c_str()), 0) << make_run;

  const Outcome status = Run("status run --runs-dir '" + (dir_ / "runs").string() + "'");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  for (const char* words : {"run run (", "2 task(s)", "task alpha: done (budget spent) — max_evaluations 26 reached",
                            "evaluations 26/26", "task beta:", "evaluations 14/14", "in flight: none",
                            "outcomes: correct ", "best: alpha.0000",
                            // search_kill_child's best seed fails the finalist checks: the stage went on
                            // (how many failed first depends on the seed library's size, so it is not named)
                            "finalist checks: alpha.0000", " before it failed (alpha.0000",
                            "racecheck reported errors"}) {
    EXPECT_NE(status.out.find(words), std::string::npos) << words << "\n" << status.out;
  }

  const Outcome exported = Run("export '" + run.string() + "' --out '" + (dir_ / "out").string() + "'");
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  for (const char* task : {"alpha", "beta"}) {
    const std::string file = Slurp(dir_ / "out" / (std::string(task) + ".cu"));
    EXPECT_NE(file.find(std::string("the best kernel found for task ") + task), std::string::npos) << file;
    EXPECT_NE(file.find(std::string(task) + "_prepare(&problem"), std::string::npos);
    EXPECT_NE(file.find("#include"), std::string::npos) << "the kernel's source follows";
    EXPECT_NE(file.find("Finalist checks: passed; the search's best, " + std::string(task) + ".0000"), std::string::npos)
        << "the best that passed the finalist checks, not the search's best:\n" << file.substr(0, 3000);
    EXPECT_NE(file.find("[compute-sanitizer memcheck: exited with code 0]"), std::string::npos);
    EXPECT_NE(file.find(std::string("SPARSEDITTO_EXPORT int ") + task + "_prepare("), std::string::npos);
    EXPECT_NE(Slurp(dir_ / "out" / (std::string(task) + ".h")).find(std::string(task) + "_run("), std::string::npos);
  }
  for (const char* shipped : {"sparseditto_kernel.h", "sparseditto_weight_check.h", "build.sh"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out" / shipped)) << shipped;
  }

  // Every export of the run built by its build.sh with the real nvcc into ONE library (both tasks' best
  // kernels come from one seed, so their own names would clash without the export's wrapping), which
  // exports each task's entries and nothing of the ABI's own names, and loads without a GPU.
  const Outcome built = RunShell("NVCC='" + std::string(SPARSEDITTO_NVCC) + "' '" + (dir_ / "out" / "build.sh").string() +
                                 "' -o libboth.so 2>&1 | tail -20", dir_);
  ASSERT_TRUE(fs::exists(dir_ / "out" / "libboth.so")) << built.out << built.err;
  const Outcome symbols = RunShell("nm -D --defined-only '" + (dir_ / "out" / "libboth.so").string() + "'", dir_);
  ASSERT_EQ(symbols.exit_code, 0) << symbols.err;
  for (const char* task : {"alpha", "beta"}) {
    for (const char* fn : {"_prepare", "_run", "_release", "_abi_version"}) {
      EXPECT_NE(symbols.out.find(std::string(" T ") + task + fn + "\n"), std::string::npos) << task << fn << symbols.out;
    }
  }
  EXPECT_EQ(symbols.out.find("sparseditto_"), std::string::npos) << "no ABI name of its own:\n" << symbols.out;
  void* library = dlopen((dir_ / "out" / "libboth.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  using AbiVersion = int (*)();
  for (const char* symbol : {"alpha_abi_version", "beta_abi_version"}) {
    auto version = reinterpret_cast<AbiVersion>(dlsym(library, symbol));
    ASSERT_NE(version, nullptr) << symbol;
    EXPECT_EQ(version(), SPARSEDITTO_ABI_VERSION) << symbol;
  }
  // The built library's prepare refuses a weight that is not what the task searched (fp16, a canonical
  // CSR) before it touches the GPU, naming what differs.
  auto prepare = reinterpret_cast<decltype(&sparseditto_prepare)>(dlsym(library, "alpha_prepare"));
  ASSERT_NE(prepare, nullptr);
  const int32_t row_offsets[] = {0, 2, 3};
  const int32_t bad_columns[] = {3, 1, 0};
  const float values[] = {1, 1, 1};
  const int64_t n_values[] = {16};
  sd_problem problem = {};
  problem.abi_version = SPARSEDITTO_ABI_VERSION;
  problem.dtype = SD_DTYPE_FP16;
  problem.rows = 2;
  problem.cols = 4;
  problem.nnz = 3;
  problem.pattern.family = SD_PATTERN_UNSTRUCTURED;
  problem.row_offsets = row_offsets;
  problem.col_indices = bad_columns;
  problem.values = values;
  problem.n_values = n_values;
  problem.num_n_values = 1;
  for (const auto& [dtype, want] : {std::pair{SD_DTYPE_FP16, "weight check: row 0, entry 1: column 1 is outside [0, 4) or not above"},
                                    std::pair{SD_DTYPE_FP32, "weight check: dtype 1, the kernel was searched for 2"}}) {
    problem.dtype = dtype;
    void* state = nullptr;
    char error[256] = "";
    EXPECT_NE(prepare(&problem, &state, error, sizeof error), 0);
    EXPECT_NE(std::string(error).find(want), std::string::npos) << error;
  }
  dlclose(library);

  // --torch adds the run's PyTorch package (torch_package/torch_package.h) beside the kernels.
  const Outcome with_torch = Run("export '" + run.string() + "' --torch --out '" + (dir_ / "out2").string() + "'");
  EXPECT_EQ(with_torch.exit_code, 0) << with_torch.err;
  const fs::path package = dir_ / "out2" / "torch" / "sparseditto_run";
  EXPECT_NE(with_torch.out.find(package.string()), std::string::npos) << with_torch.out;
  for (const char* file : {"__init__.py", "weight_pattern.py", "sparseditto_op.cpp", "sparseditto_kernel.h"}) {
    EXPECT_TRUE(fs::is_regular_file(package / file)) << file;
  }
  const nlohmann::json kernels = nlohmann::json::parse(Slurp(package / "kernels.json"), nullptr, false);
  ASSERT_TRUE(kernels.is_object()) << Slurp(package / "kernels.json");
  EXPECT_EQ(kernels["run"], "run");
  ASSERT_EQ(kernels["tasks"].size(), 2u);
  EXPECT_EQ(kernels["tasks"][0]["name"], "alpha");
  // The library is named relative to the package: the one build.sh makes beside the exports.
  EXPECT_EQ((package / kernels["tasks"][0]["library"].get<std::string>()).lexically_normal(),
            (dir_ / "out2" / "libsparseditto_kernels.so").lexically_normal());
  EXPECT_EQ(kernels["tasks"][0]["symbol_prefix"], "alpha_");
  EXPECT_GT(kernels["tasks"][0]["rows"].get<int64_t>(), 0);
  EXPECT_FALSE(kernels["tasks"][1]["n_values"].empty());
}

// A run's name names its folder under --runs-dir: none that leaves it, from --run or from the task
// file's name; and a run whose store is gone is not started over in a fresh one.
TEST_F(CliTest, SearchRefusesRunNamesThatLeaveTheRunsFolderAndRunsThatLostTheirStore) {
  fs::create_directories(dir_ / "runs" / "sibling" / "store");
  Write("runs/sibling/store/CURRENT", "kept");
  fs::copy_file(std::string(SPARSEDITTO_SOURCE_DIR) + "/configs/tasks/unstructured_90_fp16.yaml", dir_ / "t.yaml");
  fs::copy_file(dir_ / "t.yaml", dir_ / "..yaml");
  fs::copy_file(dir_ / "t.yaml", dir_ / "my tasks.yaml");
  fs::create_directories(dir_ / "runs" / "lost");
  Write("runs/lost/provenance.json", "{}");
  const std::string t = "'" + (dir_ / "t.yaml").string() + "'";
  const struct {
    std::string args;
    std::string words;
  } cases[] = {
      {"search " + t + " --run ..", "--run: run name '..' names the folder above the folder of runs"},
      {"search " + t + " --run .", "--run: run name '.' names the folder of runs itself"},
      {"search " + t + " --run sibling/../..", "--run: run name must match [A-Za-z0-9_.-]{1,128}"},
      {"search " + t + " --run /tmp/x", "--run: run name must match"},
      {"search '" + (dir_ / "..yaml").string() + "'", "..yaml (give --run NAME for another): run name '.' names"},
      {"search '" + (dir_ / "my tasks.yaml").string() + "'",
       "my tasks.yaml (give --run NAME for another): run name must match"},
      {"search " + t + " --run lost", "holds an earlier run's files"},
      {"search " + t + " --gpus 0,x", "--gpus 0,x: 'x' is not a device index or a GPU UUID"},
      {"search " + t + " --gpus 0,,1", "--gpus 0,,1: '' is not a device index"},
      {"search " + t + " --gpus 1,1", "--gpus 1,1: '1' is listed twice"},
      {"search " + t + " --gpus 'GPU-zz'", "'GPU-zz' is not a device index or a GPU UUID"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const Outcome r = Run(c.args + " --runs-dir '" + (dir_ / "runs").string() + "'");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
  }
  EXPECT_EQ(Slurp(dir_ / "runs" / "sibling" / "store" / "CURRENT"), "kept");
  std::vector<std::string> runs;
  for (const auto& entry : fs::directory_iterator(dir_ / "runs")) runs.push_back(entry.path().filename().string());
  std::sort(runs.begin(), runs.end());
  EXPECT_EQ(runs, (std::vector<std::string>{"lost", "sibling"})) << "nothing new beside the runs";
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "lost" / "store")) << "the lost store was not replaced";
  EXPECT_FALSE(fs::exists(dir_ / "store")) << "nothing above the runs folder";
}

// A sparseditto killed during a compile (kill -9, Ctrl-C) leaves nvcc's folder and the sanitizer's
// behind; the next start sweeps those whose process is gone (common/owned_temp_folders.h).
TEST_F(CliTest, TheNextStartSweepsTheTemporaryFoldersOfAKilledRun) {
  const fs::path tmp = dir_ / "tmp";
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const fs::path nvcc = tmp / ("sparseditto-nvcc-" + std::to_string(child) + "-Xy12Zw");
  const fs::path sanitizer = tmp / ("sd_sanitizer_" + std::to_string(child) + "_memcheck");
  const fs::path live = tmp / ("sparseditto-nvcc-" + std::to_string(getpid()) + "-alive0");
  for (const fs::path& p : {nvcc / "tmp", sanitizer, live}) fs::create_directories(p);
  Write("tmp/sparseditto-nvcc-" + std::to_string(child) + "-Xy12Zw/tmp/tmpxft_00001-1.cpp", "nvcc's");
  const Outcome r = RunShell("TMPDIR='" + tmp.string() + "' '" + SPARSEDITTO_BINARY + "' --version", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(nvcc));
  EXPECT_FALSE(fs::exists(sanitizer));
  EXPECT_TRUE(fs::exists(live)) << "its process (this test) still runs";
}

}  // namespace
