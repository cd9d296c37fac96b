// The evaluations of the task a bench has in hand, kept on disk after each one so that a bench cut short
// (a time limit, a kill, Ctrl-C) and resumed evaluates none of them again (bench_loop.h). One file per
// task, <out_dir>/bench-partial/<task>.json, rewritten whole (atomically) after each evaluation and
// removed once the task's rows are in bench.json:
//   {"task": "<task>", "evaluations": [{"seed": "<seed>", "source_hash": "<SourceHash of its source>",
//                                       "result": <the EvalResult as protobuf JSON>}, ...]}
// Thread-safety: pure functions over the file system; no two callers may write one file at once.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"

namespace sparseditto {

struct KeptEvaluation {
  std::string seed;
  std::string source_hash;  // of the seed's source when it was evaluated: a changed seed is evaluated again
  v1::EvalResult result;
};

// <out_dir>/bench-partial/<task>.json. InvalidArgument when `task` cannot name a file there (PathInside,
// task/run_paths.h: a '/', "..", an empty name).
absl::StatusOr<std::filesystem::path> PartialResultsPath(const std::filesystem::path& out_dir, const std::string& task);

// The evaluations kept in `path` for `task`. NotFound when there is no such file; InvalidArgument naming
// the path (and the entry, 0-based) when it is not JSON, not of this form, or kept for another task.
absl::StatusOr<std::vector<KeptEvaluation>> ReadPartialResults(const std::filesystem::path& path,
                                                               const std::string& task);

// Writes `kept` for `task` to `path` whole or not at all, making its folder. Errors: Unavailable or
// Internal from the file system, naming the path.
absl::Status WritePartialResults(const std::filesystem::path& path, const std::string& task,
                                 const std::vector<KeptEvaluation>& kept);

}  // namespace sparseditto
