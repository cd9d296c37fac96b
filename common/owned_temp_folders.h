// Temporary folders that name the process owning them, and the sweep that removes those whose owner is
// gone. A process killed with -9 (or by Ctrl-C, or SIGTERM, without running its destructors) leaves its
// temporary folders behind, and the children it had (nvcc and its tools, compute-sanitizer) theirs
// inside them; the next start of `sparseditto` sweeps them (cli/main.cc).
//
// A folder is owned when its name is <prefix><pid> followed by '-' or '_' (mkdtemp's
// <prefix><pid>-XXXXXX, or a fixed <prefix><pid>_<what>). Its owner is gone when no process has that
// pid, or the process that has it now started after the folder last changed (the pid was reused). Only
// folders of this user (st_uid) are swept. Limitation: two pid namespaces (containers) sharing one temp
// folder can name the same pid for different processes; their folders can be taken for another's.
//
// Errors: MakeOwnedTempFolder returns Internal naming the path; the sweep never fails (what it cannot
// remove is left and counted). Thread-safety: the functions may be called from any thread.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseditto {

// The prefixes of the temporary folders SparseDitto's processes make under the temp folder
// (std::filesystem::temp_directory_path(), $TMPDIR): nvcc's compile folders
// (evaluator/compile/nvcc_compiler.cc), the sanitizer runs' (evaluator/evaluator.cc), and those made by
// MakeOwnedTempFolder with kOwnedTempPrefix.
inline constexpr std::string_view kOwnedTempPrefix = "sparseditto-owned-";
inline const std::vector<std::string_view>& OwnedTempPrefixes() {
  static const std::vector<std::string_view> prefixes = {"sparseditto-nvcc-", "sd_sanitizer_", kOwnedTempPrefix};
  return prefixes;
}

// <parent>/<prefix><this pid>-XXXXXX, made by mkdtemp (mode 0700).
absl::StatusOr<std::filesystem::path> MakeOwnedTempFolder(const std::filesystem::path& parent,
                                                          std::string_view prefix = kOwnedTempPrefix);

// The pid a folder's `name` records after `prefix`, or nullopt when it is not an owned folder's name.
std::optional<pid_t> OwnerOf(std::string_view name, std::string_view prefix);

// True when the process that made a folder last changed at `changed` (seconds since the epoch) with
// owner `pid` is gone: no such process, or the one with that pid started later.
bool OwnerIsGone(pid_t pid, std::time_t changed);

struct SweepOutcome {
  std::vector<std::string> removed;  // paths
  int kept_alive = 0;                // owned folders whose owner still runs
  int failed = 0;                    // stale folders that could not be removed
};

// Removes the folders in `parent` owned (by these `prefixes`) by processes that are gone.
SweepOutcome SweepOrphanedTempFolders(const std::filesystem::path& parent,
                                      const std::vector<std::string_view>& prefixes = OwnedTempPrefixes());

}  // namespace sparseditto
