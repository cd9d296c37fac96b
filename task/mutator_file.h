// Mutator files: a YAML file holding only a `mutators:` list, in exactly the form a task's `mutators:`
// takes (configs/tasks/README.md documents each field; configs/mutators/ has examples). A search can
// take its mutators from such a file instead of the task's own list, so one set of models can serve
// many tasks, and endpoints and prices live in one place.
//
//   mutators:
//     - {name: local_coder, kind: openai, endpoint: http://localhost:8000/v1, model: Qwen/Qwen2.5-Coder-32B-Instruct}
//
// The loader's defaults and the validation rules are those of task files (task_loader.h): each
// mutator's name its kind, weight 1, concurrency 1, timeout_seconds 120; api_key_env must be the NAME
// of a variable (a value that looks like a key is refused and not echoed).
// Nothing here throws (yaml-cpp's exceptions become InvalidArgument). Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto {

// Errors: InvalidArgument "<file>:<line>:<col>: mutators[i].<field>: <reason>" (empty file, several
// documents, YAML syntax, a root that is not a mapping with exactly the key `mutators`, a list that
// is empty or holds a non-mapping, any field error a task's mutators would get).
absl::StatusOr<std::vector<v1::MutatorSpec>> ParseMutatorsYaml(std::string_view yaml, const std::string& file_name);

// Reads `path` and parses it as above. NotFound, PermissionDenied, Unavailable for the file itself;
// InvalidArgument for a file that is not regular or larger than kMaxTaskFileBytes.
absl::StatusOr<std::vector<v1::MutatorSpec>> LoadMutatorsFile(const std::string& path);

}  // namespace sparseditto
