// Task files: YAML into v1::Task messages (proto/task.proto), validated.
// (Contract sketch; the implementer documents it fully.)
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto {

// Reads and validates a task file. Errors: NotFound, or InvalidArgument with
// "<file>:<line>:<column>: <field path>: <reason>".
absl::StatusOr<v1::TaskBatch> LoadTaskFile(const std::string& path);
absl::StatusOr<v1::TaskBatch> ParseTaskYaml(std::string_view yaml, const std::string& file_name);

}  // namespace sparseditto
