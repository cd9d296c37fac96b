// Internal to task/: range and cross-field rules for one task (the rules ValidateTask documents in
// task/task_loader.h), reporting at the positions a SourceMap recorded.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "task.pb.h"
#include "task/yaml_fields.h"

namespace sparseditto::task_internal {

// `presence_known`: `sources` records every field the YAML set (the loader's case), so fields whose
// zero value is valid (sparsity, half_bandwidth) can be required, and a field set to its zero value
// is still "set" for the family-relevance rules. Without it (a task from a protobuf message), a field
// is set when it is non-zero. Errors are InvalidArgument "<file>:<line>:<col>: <path>: <reason>".
absl::Status ValidateTaskFields(const v1::Task& task, const SourceMap& sources, std::string_view file,
                                bool presence_known);

// The mutator rules of ValidateTaskFields over a list read from YAML (paths "mutators[i]....").
absl::Status ValidateMutatorFields(const google::protobuf::RepeatedPtrField<v1::MutatorSpec>& mutators,
                                   const SourceMap& sources, std::string_view file);

}  // namespace sparseditto::task_internal
