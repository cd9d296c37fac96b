// What the candidate host does to itself after CUDA is initialised and before the candidate's
// library is loaded (whose constructors run at load): the in-process layers of the sandbox
// (DESIGN.md §3.6). The layers set up by the judge when it starts this process (namespaces,
// unprivileged uid, rlimits, death with the parent) are evaluator/sandbox's; these are the ones
// only the process itself can apply once CUDA holds its device files.
// Not thread-safe: call once, from the main thread, before any thread of the candidate's exists.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sparseditto {

// no_new_privs, not dumpable (no ptrace or /proc/<pid>/mem from other processes of the uid), then the
// `layers` the judge asked for (a comma list): "landlock" (CandidateHostLandlockRules: read-only the
// library's folder, the CUDA and system libraries, /proc and /sys; read-write only /dev/nvidia* and
// /dev/null; no TCP), "caps" (every capability dropped, bounding set included: as root, no access to
// other processes' /proc files or memory, no privileged call) and "seccomp" (InstallCandidateSeccomp:
// no process creation, exec, sockets, ptrace...), in that order. Errors: FailedPrecondition naming the layer that could not be applied (the host then
// refuses to load the library), InvalidArgument for an unknown layer name.
absl::Status LockDownBeforeLoad(const std::string& library_path, std::string_view layers);

}  // namespace sparseditto
