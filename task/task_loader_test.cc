// Good inputs: single tasks, batches with defaults, every family, durations, defaults, and every
// example in configs/tasks/. Bad inputs are in task_loader_errors_test.cc.
#include "task/task_loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "task/task_names.h"
#include "task/yaml_fields.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

v1::Task ParseOne(const std::string& yaml, const std::string& file = "t.yaml") {
  absl::StatusOr<v1::TaskBatch> batch = ParseTaskYaml(yaml, file);
  EXPECT_TRUE(batch.ok()) << Msg(batch.status());
  if (!batch.ok() || batch->tasks_size() != 1) return v1::Task();
  return batch->tasks(0);
}

TEST(TaskLoader, SingleTaskWithEveryField) {
  const v1::Task t = ParseOne(R"(name: llm_unstructured90_fp16
op: spmm
dtype: fp16
pattern: {family: unstructured, sparsity: 0.9, row_lengths: skewed, skew: 0.5}
matrix: {generated: {rows: 4096, cols: 11008}, seed: 99}
n: [16, 128, 2048]
arch: [sm_80, sm_90a]
budget: {max_evaluations: 300, max_wall_seconds: 10m, max_tokens: 1000000, max_money_usd: 2.5,
         max_retries: 0, stagnation_evaluations: 40, target_fitness: 1.25}
mutators:
  - {kind: builtin, weight: 1}
  - {name: gpt, kind: openai, model: m, endpoint: "https://api.example.com/v1", api_key_env: OPENAI_API_KEY,
     temperature: 0.7, max_tokens: 4096, concurrency: 8, usd_per_million_input_tokens: 1.25,
     usd_per_million_output_tokens: 10, timeout_seconds: 90s, weight: 3}
  - {kind: command, command: [python3, mutate.py]}
seed: 42
layout: nk
)");
  EXPECT_EQ(t.name(), "llm_unstructured90_fp16");
  EXPECT_EQ(t.layout(), v1::LAYOUT_NK);
  EXPECT_EQ(t.op(), v1::OP_SPMM);
  EXPECT_EQ(t.dtype(), v1::DTYPE_FP16);
  EXPECT_EQ(t.pattern().family(), v1::PATTERN_FAMILY_UNSTRUCTURED);
  EXPECT_DOUBLE_EQ(t.pattern().sparsity(), 0.9);
  EXPECT_EQ(t.pattern().row_lengths(), v1::ROW_LENGTHS_SKEWED);
  EXPECT_DOUBLE_EQ(t.pattern().skew(), 0.5);
  EXPECT_EQ(t.matrix().generated().rows(), 4096);
  EXPECT_EQ(t.matrix().generated().cols(), 11008);
  EXPECT_EQ(t.matrix().seed(), 99u);
  EXPECT_THAT(t.n(), ::testing::ElementsAre(16, 128, 2048));
  EXPECT_THAT(t.arch(), ::testing::ElementsAre("sm_80", "sm_90a"));
  EXPECT_EQ(t.budget().max_evaluations(), 300);
  EXPECT_DOUBLE_EQ(t.budget().max_wall_seconds(), 600);
  EXPECT_EQ(t.budget().max_tokens(), 1000000);
  EXPECT_DOUBLE_EQ(t.budget().max_money_usd(), 2.5);
  EXPECT_EQ(t.budget().max_retries(), 0);  // explicit zero is kept, not defaulted
  EXPECT_EQ(t.budget().stagnation_evaluations(), 40);
  EXPECT_DOUBLE_EQ(t.budget().target_fitness(), 1.25);
  ASSERT_EQ(t.mutators_size(), 3);
  EXPECT_EQ(t.mutators(0).name(), "builtin");
  const v1::MutatorSpec& gpt = t.mutators(1);
  EXPECT_EQ(gpt.name(), "gpt");
  EXPECT_EQ(gpt.kind(), v1::MUTATOR_KIND_OPENAI_COMPATIBLE);
  EXPECT_EQ(gpt.api_key_env(), "OPENAI_API_KEY");
  EXPECT_DOUBLE_EQ(gpt.timeout_seconds(), 90);
  EXPECT_EQ(gpt.concurrency(), 8);
  EXPECT_DOUBLE_EQ(gpt.weight(), 3);
  EXPECT_EQ(t.mutators(2).name(), "command");
  EXPECT_THAT(t.mutators(2).command(), ::testing::ElementsAre("python3", "mutate.py"));
  EXPECT_EQ(t.seed(), 42u);
  EXPECT_EQ(t.source_file(), "t.yaml");
  EXPECT_EQ(t.source_line(), 1);
  EXPECT_TRUE(ValidateTask(t).ok());
}

TEST(TaskLoader, DefaultsAreFilledIn) {
  const v1::Task t = ParseOne(
      "name: t\ndtype: bf16\npattern: {family: unstructured, sparsity: 0.5, row_lengths: skewed}\n"
      "matrix: {generated: {rows: 8, cols: 8}}\nn: 4\n");
  EXPECT_EQ(t.op(), v1::OP_SPMM);
  EXPECT_EQ(t.layout(), v1::LAYOUT_KN);
  EXPECT_THAT(t.arch(), ::testing::ElementsAre("sm_90"));
  EXPECT_THAT(t.n(), ::testing::ElementsAre(4));  // a scalar is a list of one
  EXPECT_EQ(t.seed(), kDefaultTaskSeed);
  EXPECT_EQ(t.matrix().seed(), kDefaultTaskSeed);  // the task seed
  EXPECT_DOUBLE_EQ(t.pattern().skew(), kDefaultSkew);
  EXPECT_EQ(t.budget().max_evaluations(), kDefaultMaxEvaluations);
  EXPECT_EQ(t.budget().max_retries(), kDefaultMaxRetries);
  EXPECT_DOUBLE_EQ(t.budget().max_wall_seconds(), 0);
  ASSERT_EQ(t.mutators_size(), 1);
  EXPECT_EQ(t.mutators(0).kind(), v1::MUTATOR_KIND_BUILTIN);
  EXPECT_EQ(t.mutators(0).name(), "builtin");
  EXPECT_DOUBLE_EQ(t.mutators(0).weight(), kDefaultMutatorWeight);
  EXPECT_EQ(t.mutators(0).concurrency(), kDefaultMutatorConcurrency);
  EXPECT_DOUBLE_EQ(t.mutators(0).timeout_seconds(), kDefaultMutatorTimeoutSeconds);
}

TEST(TaskLoader, BatchMergesDefaultsUnderEveryTask) {
  absl::StatusOr<v1::TaskBatch> batch = ParseTaskYaml(R"(defaults:
  dtype: fp16
  pattern: {family: unstructured, sparsity: 0.9}
  matrix: {generated: {rows: 4096, cols: 4096}}
  n: [16, 128]
  budget: {max_evaluations: 50, max_wall_seconds: 2h}
  seed: 42
tasks:
  - name: a
  - name: b
    dtype: bf16
    n: [1]
    budget: {max_evaluations: 10}
    matrix: {generated: {cols: 11008}}
    pattern: {sparsity: 0.8}
  - name: c
    pattern: {family: n_m, n: 2, m: 4}
)",
                                                      "batch.yaml");
  ASSERT_TRUE(batch.ok()) << Msg(batch.status());
  ASSERT_EQ(batch->tasks_size(), 3);
  const v1::Task& a = batch->tasks(0);
  const v1::Task& b = batch->tasks(1);
  const v1::Task& c = batch->tasks(2);
  EXPECT_EQ(a.dtype(), v1::DTYPE_FP16);
  EXPECT_THAT(a.n(), ::testing::ElementsAre(16, 128));
  EXPECT_EQ(a.seed(), 42u);
  EXPECT_EQ(a.source_line(), 9);
  EXPECT_EQ(b.source_line(), 10);
  EXPECT_EQ(b.dtype(), v1::DTYPE_BF16);
  EXPECT_THAT(b.n(), ::testing::ElementsAre(1));  // lists replace
  EXPECT_EQ(b.budget().max_evaluations(), 10);
  EXPECT_DOUBLE_EQ(b.budget().max_wall_seconds(), 7200);  // nested mappings merge
  EXPECT_EQ(b.matrix().generated().rows(), 4096);
  EXPECT_EQ(b.matrix().generated().cols(), 11008);
  EXPECT_EQ(b.pattern().family(), v1::PATTERN_FAMILY_UNSTRUCTURED);
  EXPECT_DOUBLE_EQ(b.pattern().sparsity(), 0.8);
  // Another family inherits none of the defaults' pattern (sparsity would be irrelevant to n_m).
  EXPECT_EQ(c.pattern().family(), v1::PATTERN_FAMILY_N_M);
  EXPECT_DOUBLE_EQ(c.pattern().sparsity(), 0);
  EXPECT_EQ(c.pattern().n(), 2);
  EXPECT_EQ(c.pattern().m(), 4);
  EXPECT_TRUE(ValidateTaskBatch(*batch).ok());
}

struct FamilyCase {
  std::string pattern;
  v1::PatternFamily family;
};

TEST(TaskLoader, EveryFamilyParses) {
  const FamilyCase cases[] = {
      {"{family: unstructured, sparsity: 0.9}", v1::PATTERN_FAMILY_UNSTRUCTURED},
      {"{family: Unstructured, sparsity: 0, row_lengths: uniform}", v1::PATTERN_FAMILY_UNSTRUCTURED},
      {"{family: block, sparsity: 0.8, block_rows: 32, block_cols: 16}", v1::PATTERN_FAMILY_BLOCK},
      {"{family: n_m, n: 2, m: 4}", v1::PATTERN_FAMILY_N_M},
      {"{family: nm, n: 1, m: 32}", v1::PATTERN_FAMILY_N_M},
      {"{family: row_sparse, sparsity: 0.7}", v1::PATTERN_FAMILY_ROW_SPARSE},
      {"{family: row-sparse, sparsity: 0.7}", v1::PATTERN_FAMILY_ROW_SPARSE},
      {"{family: column_sparse, sparsity: 0.5}", v1::PATTERN_FAMILY_COLUMN_SPARSE},
      {"{family: banded, half_bandwidth: 0}", v1::PATTERN_FAMILY_BANDED},
      {"{family: block_diagonal, num_blocks: 64}", v1::PATTERN_FAMILY_BLOCK_DIAGONAL},
      {"{family: dense}", v1::PATTERN_FAMILY_DENSE},
  };
  for (const FamilyCase& c : cases) {
    SCOPED_TRACE(c.pattern);
    const v1::Task t =
        ParseOne("name: t\ndtype: fp32\npattern: " + c.pattern + "\nmatrix: {generated: {rows: 64, cols: 128}}\nn: [8]\n");
    EXPECT_EQ(t.pattern().family(), c.family);
    EXPECT_EQ(PatternFamilyName(t.pattern().family()),
              c.family == v1::PATTERN_FAMILY_N_M ? "n_m" : PatternFamilyName(c.family));
  }
}

class TaskLoaderMatrixFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::sparseditto::testing_support::ProcessTempDir()) / "task_loader_test_files";
    fs::create_directories(dir_ / "data");
    std::ofstream(dir_ / "data" / "m.smtx") << "2, 2, 1\n0 1 1\n0\n";
  }
  fs::path dir_;
};

TEST_F(TaskLoaderMatrixFile, RelativePathResolvesAgainstTheTaskFile) {
  const std::string file = (dir_ / "tasks" / "t.yaml").string();
  const v1::Task t = ParseOne("name: t\ndtype: fp16\nmatrix: {file: {path: ../data/m.smtx}}\nn: [32]\n", file);
  EXPECT_EQ(t.matrix().file().path(), (dir_ / "data" / "m.smtx").lexically_normal().string());
  EXPECT_EQ(t.pattern().family(), v1::PATTERN_FAMILY_FILE);  // no family given: the file's
  EXPECT_EQ(t.source_file(), file);
}

TEST_F(TaskLoaderMatrixFile, UserMayAssertAFamilyForAFile) {
  const std::string file = (dir_ / "t.yaml").string();
  const v1::Task t = ParseOne(
      "name: t\ndtype: fp16\npattern: {family: block, block_rows: 1, block_cols: 1}\n"
      "matrix: {file: {path: data/m.smtx}}\nn: [32]\n",
      file);
  EXPECT_EQ(t.pattern().family(), v1::PATTERN_FAMILY_BLOCK);
  EXPECT_TRUE(fs::path(t.matrix().file().path()).is_absolute());
}

TEST(TaskLoader, Durations) {
  const std::pair<std::string, double> cases[] = {{"90", 90},        {"1.5", 1.5},     {"\"90s\"", 90},
                                                  {"10m", 600},      {"2h", 7200},     {"1h30m", 5400},
                                                  {"1.5h", 5400},    {"1d", 86400},    {"0", 0},
                                                  {"'120'", 120}};
  for (const auto& [text, seconds] : cases) {
    SCOPED_TRACE(text);
    const v1::Task t = ParseOne(
        "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n"
        "budget: {max_wall_seconds: " + text + "}\n");
    EXPECT_DOUBLE_EQ(t.budget().max_wall_seconds(), seconds);
  }
  EXPECT_FALSE(task_internal::ParseDurationString("10 minutes").has_value());
  EXPECT_FALSE(task_internal::ParseDurationString("-5s").has_value());
  EXPECT_FALSE(task_internal::ParseDurationString("m").has_value());
  EXPECT_FALSE(task_internal::ParseDurationString("").has_value());
}

TEST(TaskLoader, EditDistanceCountsTranspositionsAsOne) {
  EXPECT_EQ(task_internal::EditDistance("dtpye", "dtype"), 1);
  EXPECT_EQ(task_internal::EditDistance("DTYPE", "dtype"), 0);
  EXPECT_EQ(task_internal::EditDistance("", "abc"), 3);
  EXPECT_EQ(task_internal::EditDistance("kitten", "sitting"), 3);
}

TEST(TaskLoader, ValidateTaskChecksMessagesFromElsewhere) {
  v1::Task t = ParseOne("name: t\ndtype: fp16\npattern: {family: n_m, n: 2, m: 4}\n"
                        "matrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n");
  EXPECT_TRUE(ValidateTask(t).ok());
  t.mutable_pattern()->set_sparsity(0.5);
  EXPECT_THAT(Msg(ValidateTask(t)), HasSubstr("pattern.sparsity: not used by family 'n_m'"));
  t.mutable_pattern()->set_sparsity(0);
  t.add_n(8);
  EXPECT_THAT(Msg(ValidateTask(t)), HasSubstr("n[1]: duplicate value 8"));
  t.clear_n();
  t.add_n(8);
  t.set_layout(static_cast<v1::Layout>(7));  // a number a client sent that the enum does not name
  EXPECT_THAT(Msg(ValidateTask(t)), HasSubstr("layout: unknown layout 7 (kn or nk)"));
  t.set_layout(v1::LAYOUT_NK);
  EXPECT_TRUE(ValidateTask(t).ok()) << ValidateTask(t);
  // A population of a task with several archs (task/arch_populations.h), as a client submits it.
  t.set_name("t@sm_90");  // the default arch
  EXPECT_TRUE(ValidateTask(t).ok()) << ValidateTask(t);
  t.set_name("t@sm_80");
  EXPECT_THAT(Msg(ValidateTask(t)), HasSubstr("'t@sm_80' holds '@'"));
  v1::TaskBatch batch;
  *batch.add_tasks() = ParseOne("name: t\ndtype: fp16\npattern: {family: dense}\n"
                                "matrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n");
  *batch.add_tasks() = batch.tasks(0);
  EXPECT_THAT(Msg(ValidateTaskBatch(batch)), HasSubstr("tasks[1].name: duplicate task name 't'"));
}

TEST(TaskLoader, LoadTaskFileErrors) {
  absl::StatusOr<v1::TaskBatch> missing = LoadTaskFile("/nonexistent/dir/task.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(missing.status()), HasSubstr("/nonexistent/dir/task.yaml"));
  EXPECT_EQ(LoadTaskFile(::sparseditto::testing_support::ProcessTempDir()).status().code(), absl::StatusCode::kInvalidArgument);
  const fs::path empty = fs::path(::sparseditto::testing_support::ProcessTempDir()) / "task_loader_empty.yaml";
  std::ofstream(empty) << "# nothing but a comment\n";
  absl::StatusOr<v1::TaskBatch> e = LoadTaskFile(empty.string());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(e.status()), HasSubstr("empty task file"));
}

// Every example in configs/tasks/ loads, and together they show every pattern family.
// The GPU run's PyTorch timings (scripts/torch_timings.sh) time each of the issue's tasks in both layouts.
TEST(TaskLoader, TheTorchTimingsTasksComeInBothLayouts) {
  absl::StatusOr<v1::TaskBatch> batch =
      LoadTaskFile((fs::path(SPARSEDITTO_SOURCE_DIR) / "configs" / "checks" / "torch_timings.yaml").string());
  ASSERT_TRUE(batch.ok()) << Msg(batch.status());
  std::map<std::string, v1::Layout> layouts;
  for (const v1::Task& t : batch->tasks()) layouts[t.name()] = t.layout();
  EXPECT_EQ(layouts["torch_nm24_4096_fp16"], v1::LAYOUT_KN);
  EXPECT_EQ(layouts["torch_nm24_4096_fp16_nk"], v1::LAYOUT_NK);
  EXPECT_EQ(layouts["torch_unstructured90_4096_fp16"], v1::LAYOUT_KN);
  EXPECT_EQ(layouts["torch_unstructured90_4096_fp16_nk"], v1::LAYOUT_NK);
}

TEST(TaskLoader, ExampleConfigsValidate) {
  const fs::path dir = fs::path(SPARSEDITTO_SOURCE_DIR) / "configs" / "tasks";
  std::set<v1::PatternFamily> families;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    absl::StatusOr<v1::TaskBatch> batch = LoadTaskFile(entry.path().string());
    ASSERT_TRUE(batch.ok()) << Msg(batch.status());
    EXPECT_TRUE(ValidateTaskBatch(*batch).ok()) << Msg(ValidateTaskBatch(*batch));
    for (const v1::Task& t : batch->tasks()) {
      families.insert(t.pattern().family());
      if (t.matrix().has_file()) {
        EXPECT_TRUE(fs::exists(t.matrix().file().path()));
      }
    }
  }
  EXPECT_GE(files, 7);
  for (int f = v1::PATTERN_FAMILY_UNSTRUCTURED; f <= v1::PATTERN_FAMILY_FILE; ++f) {
    EXPECT_TRUE(families.count(static_cast<v1::PatternFamily>(f)))
        << "no example of family " << PatternFamilyName(static_cast<v1::PatternFamily>(f));
  }
}

}  // namespace
}  // namespace sparseditto
