// Bad inputs: each error names the file, line (and column where checked), the field and the reason.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

// A valid task of five lines; cases append a sixth line or rewrite it.
constexpr const char* kBase =
    "name: t\n"
    "dtype: fp16\n"
    "pattern: {family: unstructured, sparsity: 0.9}\n"
    "matrix: {generated: {rows: 64, cols: 64}}\n"
    "n: [16]\n";

std::string Base(const std::string& extra) { return kBase + extra; }

struct BadCase {
  std::string label;
  std::string yaml;
  int line;    // expected line; 0: the message has no position
  int column;  // expected column; 0: not checked
  std::vector<std::string> words;
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
};

std::vector<BadCase> Cases() {
  const std::string unstructured_prefix = "name: t\ndtype: fp16\nmatrix: {generated: {rows: 64, cols: 64}}\nn: [16]\n";
  const std::string dense_prefix = "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 64, cols: 64}}\n";
  return {
      // Misspelt and unknown fields.
      {"misspelt", "name: t\ndtpye: fp16\n", 2, 1, {"dtpye: unknown field (did you mean 'dtype'?)"}},
      {"misspelt_in_batch", "tasks:\n  - name: t\n    dtpye: fp16\n", 3, 5,
       {"tasks[0].dtpye: unknown field (did you mean 'dtype'?)"}},
      {"misspelt_nested", Base("budget: {max_evaluation: 5}\n"), 6, 10,
       {"budget.max_evaluation", "did you mean 'max_evaluations'"}},
      {"unknown_no_suggestion", Base("colour: blue\n"), 6, 1, {"colour: unknown field (expected one of name, op"}},
      {"merge_key", "tasks:\n  - <<: {name: a}\n", 2, 5, {"tasks[0].<<: YAML merge keys are not supported"}},
      {"given_twice", Base("name: u\n"), 6, 1, {"name: field given twice"}},
      {"source_line_is_not_a_field", Base("source_line: 3\n"), 6, 1, {"unknown field"}},
      // Wrong types.
      {"n_element_not_integer", "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [16, abc]\n",
       5, 9, {"n[1]: expected an integer, got 'abc'"}},
      {"n_fraction", dense_prefix + "n: [1.5]\n", 5, 0, {"n[0]: expected an integer, got '1.5'"}},
      {"sparsity_not_number", "name: t\ndtype: fp16\npattern: {family: unstructured, sparsity: abc}\n", 3, 0,
       {"pattern.sparsity: expected a number, got 'abc'"}},
      {"sparsity_quoted", "name: t\ndtype: fp16\npattern: {family: unstructured, sparsity: \"0.9\"}\n", 3, 0,
       {"expected a number, got the string '0.9'"}},
      {"pattern_scalar", "name: t\ndtype: fp16\npattern: unstructured\n", 3, 10,
       {"pattern: expected a mapping, got 'unstructured'"}},
      {"name_list", "name: [a, b]\n", 1, 7, {"name: expected a string, got a list"}},
      {"dtype_null", "name: t\ndtype:\n", 2, 1, {"dtype: expected a string, got nothing"}},
      {"seed_negative", Base("seed: -1\n"), 6, 7, {"seed: expected a non-negative integer"}},
      {"int32_overflow", "name: t\ndtype: fp16\npattern: {family: block, sparsity: 0.5, block_rows: 99999999999}\n",
       3, 0, {"pattern.block_rows: 99999999999 is out of range"}},
      {"duration_words", Base("budget: {max_wall_seconds: ten minutes}\n"), 6, 0,
       {"budget.max_wall_seconds: expected a duration", "got 'ten minutes'"}},
      {"duration_negative", Base("budget: {max_wall_seconds: -5}\n"), 6, 0, {"expected a duration"}},
      // Unknown enum names.
      {"family_typo", "name: t\ndtype: fp16\npattern: {family: blokc}\n", 3, 19,
       {"pattern.family: unknown pattern family 'blokc' (did you mean 'block'?)"}},
      {"dtype_unknown", "name: t\ndtype: fp8\n", 2, 8, {"dtype: unknown dtype 'fp8'", "fp32, fp16, bf16"}},
      {"op_unknown", "name: t\nop: spmv\n", 2, 5, {"op: unknown op 'spmv'"}},
      {"layout_typo", Base("layout: kn_\n"), 6, 9, {"layout: unknown layout 'kn_' (did you mean 'kn'?)"}},
      {"layout_unknown", Base("layout: column_major\n"), 6, 9, {"layout: unknown layout 'column_major'", "kn, nk"}},
      {"layout_list", Base("layout: [nk]\n"), 6, 9, {"layout: expected a string"}},
      {"kind_typo", Base("mutators: [{kind: opnai, model: m}]\n"), 6, 0,
       {"mutators[0].kind: unknown mutator kind 'opnai' (did you mean 'openai'?)"}},
      {"arch_unknown", Base("arch: [sm_91]\n"), 6, 8, {"arch[0]: unknown arch 'sm_91'", "did you mean"}},
      {"arch_typo", Base("arch: sm90\n"), 6, 7, {"arch[0]: unknown arch 'sm90' (did you mean 'sm_90'?)"}},
      {"arch_duplicate", Base("arch: [sm_90, sm_80, sm_90]\n"), 6, 22, {"arch[2]: duplicate value 'sm_90'"}},
      // Missing required fields: reported where the task (or its mapping) starts.
      {"missing_name", "dtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n", 1,
       1, {"name: required field missing"}},
      {"missing_dtype", "name: t\npattern: {family: dense}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n", 1, 1,
       {"dtype: required field missing"}},
      {"missing_family", unstructured_prefix + "pattern: {sparsity: 0.9}\n", 5, 10,
       {"pattern.family: required field missing"}},
      {"missing_pattern", unstructured_prefix, 1, 1, {"pattern.family: required field missing"}},
      {"missing_matrix", "name: t\ndtype: fp16\npattern: {family: dense}\nn: [8]\n", 1, 1,
       {"matrix: required field missing"}},
      {"empty_matrix", "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {seed: 3}\nn: [8]\n", 4, 9,
       {"matrix: give generated"}},
      {"missing_n", dense_prefix, 1, 1, {"n: required field missing"}},
      {"missing_cols", "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 8}}\nn: [8]\n", 4,
       21, {"matrix.generated.cols: required field missing"}},
      {"missing_sparsity", "name: t\ndtype: fp16\npattern: {family: row_sparse}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 10, {"pattern.sparsity: required field missing (family 'row_sparse' needs it)"}},
      {"missing_block_cols",
       "name: t\ndtype: fp16\npattern: {family: block, sparsity: 0.5, block_rows: 4}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 10, {"pattern.block_cols: required field missing"}},
      // Out of range.
      {"sparsity_one", "name: t\ndtype: fp16\npattern: {family: unstructured, sparsity: 1.0}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 43, {"pattern.sparsity: must be in [0, 1)", "got 1"}},
      {"sparsity_negative", "name: t\ndtype: fp16\npattern: {family: row_sparse, sparsity: -0.1}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"must be in [0, 1)", "got -0.1"}},
      {"n_zero", dense_prefix + "n: [16, 0]\n", 5, 9, {"n[1]: must be in [1, 1048576], got 0"}},
      {"n_too_big", dense_prefix + "n: [2000000]\n", 5, 5, {"n[0]: must be in [1, 1048576]"}},
      {"n_duplicate", dense_prefix + "n: [128, 16, 128]\n", 5, 14, {"n[2]: duplicate value 128 (also n[0])"}},
      {"n_empty", dense_prefix + "n: []\n", 5, 4, {"n: needs at least one value"}},
      {"block_zero", "name: t\ndtype: fp16\npattern: {family: block, sparsity: 0.5, block_rows: 0, block_cols: 4}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"pattern.block_rows: must be in [1,", "got 0"}},
      {"block_too_big", "name: t\ndtype: fp16\npattern: {family: block, sparsity: 0.5, block_rows: 4, block_cols: 16}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"pattern.block_cols: must be in [1, the matrix's cols = 8], got 16"}},
      {"nm_n_equals_m", "name: t\ndtype: fp16\npattern: {family: n_m, n: 4, m: 4}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"pattern.n: must be in [1, m - 1 = 3], got 4"}},
      {"nm_m_too_big", "name: t\ndtype: fp16\npattern: {family: n_m, n: 2, m: 64}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"pattern.m: must be in [2, 32], got 64"}},
      {"band_negative", "name: t\ndtype: fp16\npattern: {family: banded, half_bandwidth: -1}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"pattern.half_bandwidth: must be in [0,"}},
      {"num_blocks_too_many", "name: t\ndtype: fp16\npattern: {family: block_diagonal, num_blocks: 9}\nmatrix: {generated: {rows: 8, cols: 16}}\nn: [8]\n",
       3, 0, {"pattern.num_blocks: must be in [1, min(rows, cols) = 8], got 9"}},
      {"rows_zero", "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 0, cols: 8}}\nn: [8]\n", 4,
       28, {"matrix.generated.rows: must be in [1, 16777216], got 0"}},
      {"rows_too_big", "name: t\ndtype: fp16\npattern: {family: n_m, n: 1, m: 2}\nmatrix: {generated: {rows: 20000000, cols: 8}}\nn: [8]\n",
       4, 0, {"matrix.generated.rows: must be in [1, 16777216]"}},
      {"too_many_nonzeros", "name: t\ndtype: fp16\npattern: {family: dense}\nmatrix: {generated: {rows: 65536, cols: 65536}}\nn: [8]\n",
       4, 0, {"matrix.generated: about 4.29e+09 nonzeros"}},
      {"max_evaluations_zero", Base("budget: {max_evaluations: 0}\n"), 6, 0, {"budget.max_evaluations: must be >= 1"}},
      {"negative_money", Base("budget: {max_money_usd: -1}\n"), 6, 0, {"budget.max_money_usd: must be >= 0"}},
      {"negative_target", Base("budget: {target_fitness: -1}\n"), 6, 0, {"budget.target_fitness: must be >= 0"}},
      {"weight_zero", Base("mutators: [{kind: builtin, weight: 0}]\n"), 6, 0, {"mutators[0].weight: must be > 0, got 0"}},
      {"temperature", Base("mutators: [{kind: openai, model: m, temperature: 3}]\n"), 6, 0,
       {"mutators[0].temperature: must be in [0, 2]"}},
      {"name_with_space", "name: my task\n", 1, 7, {"name: must match [A-Za-z0-9_.-]{1,128}"}},
      // A task's name names its folder runs/<run>/<name>: none that leaves the run or is the run's own.
      {"name_dot_dot", "name: ..\n", 1, 7, {"name: '..' names the folder above the run"}},
      {"name_dot", "name: .\n", 1, 7, {"name: '.' names the run's folder itself"}},
      {"name_store", "name: store\n", 1, 7, {"name: 'store' is taken by the run's own runs/<run>/store"}},
      {"name_store_upper_case", "name: Store\n", 1, 7, {"name: 'Store' is taken by the run's own runs/<run>/store"}},
      {"name_export", "name: export\n", 1, 7, {"name: 'export' is taken by the run's own runs/<run>/export"}},
      {"name_provenance", "name: provenance.json\n", 1, 7, {"is taken by the run's own runs/<run>/provenance.json"}},
      {"name_temporary_marker", "name: t.sparseditto-tmp-12\n", 1, 7, {"the mark of the run's temporary files"}},
      // '@' is kept for the populations a task with several archs is searched as (arch_populations.h).
      {"name_population", "name: t@sm_80\n", 1, 7, {"name: 't@sm_80' holds '@', kept for the per-arch populations"}},
      {"name_population_of_other_arch", Base("arch: [sm_90]\n").replace(0, 7, "name: t@sm_80"), 1, 7,
       {"name: 't@sm_80' holds '@'"}},
      {"mutator_name_dot_dot", Base("mutators: [{kind: builtin, name: ..}]\n"), 6, 0,
       {"mutators[0].name: '..' names the folder above"}},
      // Irrelevant fields for the family or the mutator kind.
      {"block_rows_on_unstructured",
       "name: t\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.5, block_rows: 32}\nmatrix: {generated: {rows: 64, cols: 64}}\nn: [8]\n",
       3, 0, {"pattern.block_rows: not used by family 'unstructured' (its fields are sparsity, row_lengths, skew)"}},
      {"sparsity_on_dense", dense_prefix.substr(0, dense_prefix.find("dense}")) + "dense, sparsity: 0}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n", 3, 0,
       {"pattern.sparsity: not used by family 'dense'"}},
      {"skew_on_uniform",
       "name: t\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9, skew: 2}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0,
       {"pattern.skew: only used with row_lengths: skewed"}},
      {"model_on_builtin", Base("mutators: [{kind: builtin, model: gpt}]\n"), 6, 0,
       {"mutators[0].model: not used by kind 'builtin'"}},
      {"command_on_openai", Base("mutators: [{kind: openai, model: m, command: [x]}]\n"), 6, 0,
       {"mutators[0].command: not used by kind 'openai'"}},
      {"openai_without_model", Base("mutators: [{kind: openai}]\n"), 6, 12,
       {"mutators[0].model: required field missing (kind 'openai' needs it)"}},
      {"command_without_argv", Base("mutators: [{kind: command}]\n"), 6, 12, {"mutators[0].command: required"}},
      {"endpoint_not_url", Base("mutators: [{kind: openai, model: m, endpoint: localhost:8000}]\n"), 6, 0,
       {"mutators[0].endpoint: must be an http:// or https:// URL"}},
      {"duplicate_mutators", Base("mutators:\n  - {kind: openai, model: a}\n  - {kind: openai, model: b}\n"), 8, 5,
       {"mutators[1]: duplicate mutator name 'openai' (also mutators[0])"}},
      {"key_not_name", Base("mutators: [{kind: anthropic, model: m, api_key_env: my-key-var}]\n"), 6, 0,
       {"mutators[0].api_key_env: must be the NAME of an environment variable"}},
      {"retries_range", Base("mutators: [{kind: openai, model: m, max_retries: 99}]\n"), 6, 0,
       {"mutators[0].max_retries: must be in [0, 20], got 99"}},
      {"retries_on_command", Base("mutators: [{kind: command, command: [x], max_retries: 2}]\n"), 6, 0,
       {"mutators[0].max_retries: not used by kind 'command'"}},
      {"privacy_on_builtin", Base("mutators: [{kind: builtin, privacy: true}]\n"), 6, 0,
       {"mutators[0].privacy: not used by kind 'builtin'"}},
      {"privacy_not_bool", Base("mutators: [{kind: openai, model: m, privacy: yes please}]\n"), 6, 0,
       {"mutators[0].privacy: expected true or false"}},
      // Batches.
      {"duplicate_task_names",
       "defaults: {dtype: fp16, pattern: {family: dense}, matrix: {generated: {rows: 8, cols: 8}}, n: [8]}\n"
       "tasks:\n  - name: a\n  - name: b\n  - name: a\n",
       5, 11, {"tasks[2].name: duplicate task name 'a' (also tasks[0] at line 3)"}},
      {"error_in_defaults",
       "defaults:\n  budget: {max_evaluations: -5}\n"
       "tasks:\n  - {name: a, dtype: fp16, pattern: {family: dense}, matrix: {generated: {rows: 8, cols: 8}}, n: [8]}\n",
       2, 0, {"defaults.budget.max_evaluations: must be >= 1, got -5"}},
      {"unknown_in_defaults", "defaults:\n  dtyp: fp16\ntasks:\n  - {name: a}\n", 2, 3,
       {"defaults.dtyp: unknown field (did you mean 'dtype'?)"}},
      {"batch_top_level_field", "tasks:\n  - {name: a}\nname: b\n", 3, 1, {"name: unknown field (expected one of tasks, defaults)"}},
      {"tasks_empty", "tasks: []\n", 1, 8, {"tasks: empty list"}},
      {"tasks_not_list", "tasks: {name: a}\n", 1, 8, {"tasks: expected a list of tasks"}},
      {"task_not_mapping", "tasks:\n  - a\n", 2, 5, {"tasks[0]: expected a mapping"}},
      {"defaults_without_tasks", Base("defaults: {seed: 3}\n"), 6, 1, {"defaults: `defaults:` is only for a batch"}},
      // Files.
      {"family_file_generated", "name: t\ndtype: fp16\npattern: {family: file}\nmatrix: {generated: {rows: 8, cols: 8}}\nn: [8]\n",
       3, 0, {"pattern.family: family 'file' needs a matrix file"}},
      {"matrix_missing_file", "name: t\ndtype: fp16\nmatrix:\n  file: {path: no/such.smtx}\nn: [8]\n", 4, 16,
       {"matrix.file.path: no such file:", "no/such.smtx"}, absl::StatusCode::kNotFound},
      {"matrix_both_sources", "name: t\ndtype: fp16\nmatrix:\n  generated: {rows: 8, cols: 8}\n  file: {path: m.smtx}\n", 5, 0,
       {"matrix.file: give either generated or file, not both"}},
      {"matrix_bad_extension", "name: t\ndtype: fp16\nmatrix: {file: {path: m.txt}}\nn: [8]\n", 3, 0,
       {"matrix.file.path: unsupported matrix file type '.txt'"}},
      {"file_family_with_params", "name: t\ndtype: fp16\npattern: {sparsity: 0.5}\nmatrix: {file: {path: m.smtx}}\nn: [8]\n",
       3, 0, {"pattern.sparsity: not used by family 'file'", "name the family the file has"}},
      // Whole-file problems.
      {"yaml_unclosed_flow", "name: t\nn: [16, 128\ndtype: fp16\n", 3, 0, {"YAML syntax error"}},
      {"yaml_bad_indent", "name: t\npattern:\n  family: dense\n sparsity: 0.5\n", 4, 0, {"YAML syntax error"}},
      {"yaml_tab", "name: t\n\tdtype: fp16\n", 2, 0, {"YAML syntax error"}},
      {"empty", "", 0, 0, {"empty task file"}},
      {"only_comments", "# a comment\n\n", 0, 0, {"empty task file"}},
      {"top_level_list", "- name: a\n- name: b\n", 1, 1, {"expected a mapping: one task's fields, or `tasks:`"}},
      {"two_documents", Base("---\nname: u\n"), 7, 0, {"several YAML documents"}},
  };
}

class TaskLoaderBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::sparseditto::testing_support::ProcessTempDir()) / "task_loader_errors_test";
    fs::create_directories(dir_);
    std::ofstream(dir_ / "m.smtx") << "2, 2, 1\n0 1 1\n0\n";
    std::ofstream(dir_ / "m.txt") << "x\n";
  }
  fs::path dir_;
};

TEST_F(TaskLoaderBadInput, EachNamesFileLineFieldAndReason) {
  const std::string file = (dir_ / "x.yaml").string();
  for (const BadCase& c : Cases()) {
    SCOPED_TRACE(c.label + ":\n" + c.yaml);
    absl::StatusOr<v1::TaskBatch> result = ParseTaskYaml(c.yaml, file);
    ASSERT_FALSE(result.ok());
    const std::string msg(result.status().message());
    EXPECT_EQ(result.status().code(), c.code) << msg;
    const std::string where = c.line == 0   ? file + ": "
                              : c.column == 0 ? fmt::format("{}:{}:", file, c.line)
                                              : fmt::format("{}:{}:{}: ", file, c.line, c.column);
    EXPECT_TRUE(msg.starts_with(where)) << "expected to start with '" << where << "': " << msg;
    for (const std::string& word : c.words) EXPECT_THAT(msg, ::testing::HasSubstr(word));
  }
}

TEST_F(TaskLoaderBadInput, KeyLikeApiKeyEnvIsRefusedAndNotEchoed) {
  const std::string keys[] = {"sk-proj-abcdefghijklmnop1234567890", "sk-ant-api03-xyz",
                              "AbCdEf0123456789GhIjKlMn", std::string(48, 'A')};
  for (const std::string& key : keys) {
    SCOPED_TRACE(key);
    absl::StatusOr<v1::TaskBatch> r =
        ParseTaskYaml(Base("mutators: [{kind: openai, model: m, api_key_env: \"" + key + "\"}]\n"), "k.yaml");
    ASSERT_FALSE(r.ok());
    const std::string msg(r.status().message());
    EXPECT_THAT(msg, ::testing::StartsWith("k.yaml:6:"));
    EXPECT_THAT(msg, ::testing::HasSubstr("mutators[0].api_key_env: looks like an API key"));
    EXPECT_THAT(msg, ::testing::Not(::testing::HasSubstr(key)));
  }
  for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "hf_token", "_my_key2"}) {
    absl::StatusOr<v1::TaskBatch> r =
        ParseTaskYaml(Base(fmt::format("mutators: [{{kind: openai, model: m, api_key_env: {}}}]\n", name)), "k.yaml");
    EXPECT_TRUE(r.ok()) << name << ": " << r.status();
  }
}

}  // namespace
}  // namespace sparseditto
