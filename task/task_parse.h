// Internal to task/: one task's YAML fields (already layered over the batch's defaults) into a
// v1::Task with the loader's defaults filled in. Type errors, unknown fields and enum names are
// reported here; ranges and cross-field rules are task_validation's.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "task.pb.h"
#include "task/yaml_fields.h"

namespace sparseditto::task_internal {

// Records every field it reads in ctx.sources. `base_dir` resolves relative matrix paths; a matrix
// file that does not exist is NotFound at its line.
// The contents of a YAML file of at most kMaxTaskFileBytes; `what` names it in messages ("task
// file"). NotFound, InvalidArgument (not a regular file, too large), PermissionDenied, Unavailable.
absl::StatusOr<std::string> ReadYamlFile(const std::string& path, std::string_view what);

// One mutator mapping into `out`, with the loader's defaults (weight, concurrency, timeout, name).
absl::Status ParseMutator(const ParseContext& ctx, const Fields& mutator, v1::MutatorSpec* out);

absl::StatusOr<v1::Task> ParseTask(const ParseContext& ctx, const Fields& task, const std::filesystem::path& base_dir);

}  // namespace sparseditto::task_internal
