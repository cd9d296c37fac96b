// The candidate host's sandbox layers, named in a comma list (SPARSEDITTO_HOST_SANDBOX): the one parser for
// every process that loads a candidate, the judged host the runner starts (evaluator/runner/candidate_host.h)
// and the finalist's host under compute-sanitizer (Evaluator::RunSanitizer). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "evaluator/sandbox/sandbox_policy.h"

namespace sparseditto {

// The layers a candidate host gets unless SPARSEDITTO_HOST_SANDBOX names others: no network, no shared System V
// IPC, and in the process, after CUDA is up and before the library loads, Landlock, no capabilities, seccomp.
inline constexpr const char* kDefaultHostSandboxLayers = "netns,ipcns,landlock,caps,seccomp";

// The layer list in force: SPARSEDITTO_HOST_SANDBOX when it is set and not empty, else kDefaultHostSandboxLayers.
// `from_environment`, when given, says which.
std::string HostSandboxLayerList(bool* from_environment = nullptr);

struct HostSandboxLayers {
  // Set up before the host's program starts; nullopt: none ("off").
  std::optional<SandboxPolicy> spawn;
  // Applied by the host to itself before it loads the library (evaluator/host/host_lockdown.h), passed in
  // SPARSEDITTO_HOST_LOCKDOWN: "landlock", "caps", "seccomp", comma-separated; empty for none.
  std::string in_process;
};

// From a comma list: "netns", "ipcns", "pidns", "uid" (root only: run as nobody) and "spawn-landlock" before
// exec; "landlock", "caps" and "seccomp" in the process; "off" alone for none. Unknown names: InvalidArgument
// naming the layer and the known ones. `host_binary` and `library_dir` are for the spawn-time Landlock rules.
// no_new_privs and the parent-death signal are on whenever `spawn` is set.
absl::StatusOr<HostSandboxLayers> ParseHostSandboxLayers(const std::string& layers, const std::string& host_binary,
                                                         const std::string& library_dir);

}  // namespace sparseditto
