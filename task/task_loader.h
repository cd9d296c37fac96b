// Task files: YAML into v1::Task messages (proto/task.proto), validated (DESIGN.md §3.1).
// configs/tasks/README.md is the user's reference for every field; this header is the contract.
//
// A file holds one task (a mapping of the task's fields) or a batch: a mapping with `tasks:` (a
// list of task mappings) and an optional `defaults:` mapping merged under every task. Merging is key
// by key through nested mappings (budget, pattern, matrix, matrix.generated); a task's own value
// wins; lists (n, arch, mutators, command) and scalars replace, never concatenate. A task whose
// pattern names another family than the defaults' inherits none of the defaults' pattern, and one
// whose matrix names another source (generated vs file) inherits none of the defaults' matrix.
//
// YAML field names are the proto's field names. Enums are written in lower case: op `spmm`;
// dtype `fp32|fp16|bf16`; pattern.family `unstructured|block|n_m|row_sparse|column_sparse|banded|
// block_diagonal|dense|file`; row_lengths `uniform|skewed`; mutator kind
// `builtin|openai|anthropic|command` (task/task_names.h). Durations (budget.max_wall_seconds,
// mutators[].timeout_seconds) are seconds or strings like "90s", "10m", "2h", "1h30m". `n` and `arch`
// accept a single value for a list of one. Numbers must not be quoted.
//
// Defaults the loader fills in when a field is absent (an explicit value is kept and validated):
//   op spmm; arch [sm_90]; seed 1; matrix.seed the task's seed; pattern.family `file` when the
//   matrix is a file and no family is given; pattern.skew 1.0 for row_lengths skewed;
//   budget.max_evaluations 200; budget.max_retries 1 (other budget fields 0: no limit);
//   mutators [{kind: builtin, weight: 1}]; each mutator's name its kind, weight 1, concurrency 1,
//   timeout_seconds 120.
// The loader sets source_file (the file name as given) and source_line (where the task starts), and
// stores a matrix file's path resolved against the task file's folder, absolute and normalised.
//
// Nothing here throws; yaml-cpp's exceptions are caught and become InvalidArgument. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto {

inline constexpr std::string_view kDefaultArch = "sm_90";
inline constexpr uint64_t kDefaultTaskSeed = 1;
inline constexpr int64_t kDefaultMaxEvaluations = 200;
inline constexpr int32_t kDefaultMaxRetries = 1;
inline constexpr double kDefaultMutatorWeight = 1.0;
inline constexpr int32_t kDefaultMutatorConcurrency = 1;
inline constexpr double kDefaultMutatorTimeoutSeconds = 120.0;
inline constexpr double kDefaultSkew = 1.0;

// Limits the validator enforces.
inline constexpr int64_t kMaxN = int64_t{1} << 20;        // each n value in [1, kMaxN]
inline constexpr int64_t kMaxTaskFileBytes = int64_t{1} << 20;
inline constexpr int kMaxNmGroup = 32;                    // N:M: 1 <= n < m <= kMaxNmGroup
// The target architectures a task may name.
inline constexpr std::string_view kKnownArchs[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};

// Reads, parses and validates the task file at `path`; see ParseTaskYaml for the parse.
// Returns the tasks in file order (a single-task file gives a batch of one).
// Errors:
//   NotFound          `path` does not exist ("<path>: no such task file"), or a matrix file a task
//                     names does not ("<path>:<line>:<col>: matrix.file.path: no such file: <abs>").
//   InvalidArgument   `path` is not a regular file or is larger than kMaxTaskFileBytes; or any
//                     error of ParseTaskYaml.
//   PermissionDenied  the file cannot be opened for lack of permission.
//   Unavailable       any other failure to read the file.
absl::StatusOr<v1::TaskBatch> LoadTaskFile(const std::string& path);

// Parses and validates task YAML held in memory. `file_name` names the file in messages and in
// source_file, and its folder resolves relative matrix paths (the working directory if it has none).
// Errors (every message is "<file>:<line>:<column>: <field path>: <reason>", the field path being
// "tasks[i]...." in a batch, "defaults...." for a value inherited from the defaults, and plain
// "dtype" in a single-task file; position and path are left out where there is none):
//   InvalidArgument  empty file (no document, or only comments); several YAML documents; a YAML
//                    syntax error ("YAML syntax error: <yaml-cpp's reason>", at its mark); a root
//                    that is not a mapping; `tasks` not a non-empty list of mappings; `defaults` not
//                    a mapping or without `tasks`; an unknown field ("unknown field (did you mean
//                    'dtype'?)") or one given twice; a wrong type ("expected a number, got 'abc'");
//                    an unknown enum name or arch (with a suggestion); a missing required field
//                    (name, dtype, pattern.family unless the matrix is a file, matrix, n, and the
//                    family's parameters for a generated matrix); any ValidateTask error; two
//                    tasks with the same name in a batch.
//   NotFound         a matrix file that does not exist, reported at its path's line.
absl::StatusOr<v1::TaskBatch> ParseTaskYaml(std::string_view yaml, const std::string& file_name);

// ParseTaskYaml of the task document held under `key` of the root mapping of `yaml` (the HTTP API's
// {"run": ..., "task": {...}}; JSON is YAML): positions are those in `yaml`, field paths those of the
// task document as in a file. The root's other keys are the caller's to check. Errors as
// ParseTaskYaml's, and InvalidArgument for a root that is not a mapping or has no `key`.
absl::StatusOr<v1::TaskBatch> ParseTaskYamlAt(std::string_view yaml, std::string_view key,
                                              const std::string& file_name);

// Checks a task as the loader returns it (defaults filled in), e.g. one that arrived over gRPC.
// It reads no files. Rules:
//   name matches [A-Za-z0-9_.-]{1,128}; op and dtype are set; matrix has exactly one source;
//   generated rows and cols in [1, 2^24] and an expected nnz below 2^31; a file path with extension
//   .smtx, .mtx or .npy; pattern.family set, `file` only with a matrix file; only the family's
//   own fields set (unstructured: sparsity, row_lengths, skew (skewed only); block: sparsity,
//   block_rows, block_cols; n_m: n, m; row_sparse, column_sparse: sparsity; banded: half_bandwidth;
//   block_diagonal: num_blocks; dense, file: none); sparsity in [0, 1); skew in (0, 10];
//   1 <= block_rows <= rows, 1 <= block_cols <= cols; 1 <= n < m <= 32; half_bandwidth >= 0;
//   1 <= num_blocks <= min(rows, cols); n values non-empty, each in [1, 2^20], no duplicates;
//   arch values in kKnownArchs, no duplicates; budget: max_evaluations >= 1, others >= 0;
//   at least one mutator, each with a kind, a unique name, weight > 0, concurrency in [1, 1024],
//   timeout_seconds > 0; openai/anthropic: a model, endpoint http(s)://..., api_key_env the NAME of
//   an environment variable (a value that looks like a key, e.g. "sk-...", is refused and not
//   echoed), temperature in [0, 2], max_tokens in [1, 10^7] when set, prices >= 0; command: a
//   non-empty argv; builtin: none of the LLM fields.
// Errors: InvalidArgument "<source_file>: <field path>: <reason>" for the first rule broken.
absl::Status ValidateTask(const v1::Task& task);

// ValidateTask on every task (paths "tasks[i]...."), and task names unique.
absl::Status ValidateTaskBatch(const v1::TaskBatch& batch);

}  // namespace sparseditto
