// The names that become folders of a search run, and the one way every path inside a run is made.
//
// A run's folder (coordinator/search/run_artifacts.h, cli/run_folder.h):
//
//   <runs_dir>/<run>/store/              the population store
//   <runs_dir>/<run>/provenance.json     the run's provenance
//   <runs_dir>/<run>/export/             `sparseditto export`'s default output
//   <runs_dir>/<run>/<task>/...          one folder per task
//
// so a run name is one path component, and a task name is one path component that is none of the run's
// own entries. Both must match [A-Za-z0-9_.-]{1,128}, a task name optionally followed by "@<arch>" (the
// population of one arch of a task with several, task/arch_populations.h); neither may be "." or ".." (the folder itself,
// its parent: a task named ".." put its files, and its clean-up, beside the run, among other runs).
// Task names that are the run's own entries (store, export, provenance.json) are refused in any letter
// case (a case-insensitive file system would still collide), as are names holding the markers of the
// writers' temporary files (".sparseditto-tmp-", ".sparseditto-old-", ".creating-"), which the
// writers' clean-up removes.
//
// PathInside is the only way a writer of a run makes a path (run_artifacts.cc, `search`, `export`,
// bench-mutators): it refuses, rather than resolves, any part that could leave the folder.
// Thread-safety: pure functions (PathInside reads the file system to resolve symbolic links).
#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace sparseditto {

// Why `name` cannot name a run's folder, e.g. "'..' names the folder above the folder of runs (outside
// of it)"; nullopt when it can.
std::optional<std::string> RunNameProblem(std::string_view name);

// Why `name` cannot name a task's folder inside a run: RunNameProblem's reasons, a name the run's own
// layout uses, or a writer's temporary marker; nullopt when it can.
std::optional<std::string> TaskNameProblem(std::string_view name);

// OK, or InvalidArgument "<where>: run name '<name>' <why>" (`where` names the flag or file it came
// from, e.g. "--run" or "the task file's name t.yaml (give --run NAME for another)").
absl::Status CheckRunName(std::string_view name, std::string_view where);

// OK, or InvalidArgument "task name '<name>' <why>".
absl::Status CheckTaskName(std::string_view name);

// <root>/<parts[0]>/<parts[1]>/...: each part must be a single path component (not empty, no '/' or
// NUL, not "." or ".."), and the result must lie inside `root` both lexically and once the symbolic
// links of what exists already are resolved (a link planted inside the run that points outside is
// refused). `root` itself need not exist. Errors: InvalidArgument "cannot write <root>/<part...>:
// <why>" naming the part; nothing is created.
absl::StatusOr<std::filesystem::path> PathInside(const std::filesystem::path& root,
                                                 std::initializer_list<std::string_view> parts);

}  // namespace sparseditto
