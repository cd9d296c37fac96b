#include "evaluator/sandbox/host_layers.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "evaluator/sandbox/landlock.h"
#include "fmt/format.h"

namespace sparseditto {

std::string HostSandboxLayerList(bool* from_environment) {
  const char* asked = std::getenv("SPARSEDITTO_HOST_SANDBOX");
  const bool set = asked != nullptr && *asked != 0;
  if (from_environment != nullptr) *from_environment = set;
  return set ? asked : kDefaultHostSandboxLayers;
}

absl::StatusOr<HostSandboxLayers> ParseHostSandboxLayers(const std::string& layers, const std::string& host_binary,
                                                         const std::string& library_dir) {
  HostSandboxLayers parsed;
  if (layers == "off") return parsed;
  SandboxPolicy policy;
  policy.new_user_namespace = policy.new_pid_namespace = policy.new_network_namespace = policy.new_ipc_namespace = false;
  policy.drop_root = false;
  std::vector<std::string> in_process;
  for (absl::string_view layer : absl::StrSplit(layers, ',', absl::SkipEmpty())) {
    if (layer == "netns") policy.new_network_namespace = true;
    else if (layer == "ipcns") policy.new_ipc_namespace = true;
    else if (layer == "pidns") policy.new_pid_namespace = true;
    else if (layer == "uid") policy.drop_root = true;
    else if (layer == "spawn-landlock") policy.landlock = CandidateHostLandlockRules(host_binary, library_dir);
    else if (layer == "landlock" || layer == "caps" || layer == "seccomp") {
      in_process.emplace_back(std::string(layer));
    } else {
      return absl::InvalidArgumentError(fmt::format("SPARSEDITTO_HOST_SANDBOX: unknown layer '{}' (known: netns, ipcns, "
                                                    "pidns, uid, spawn-landlock, landlock, caps, seccomp, off)", std::string(layer)));
    }
  }
  parsed.spawn = policy;  // no_new_privs and the parent-death signal always
  parsed.in_process = absl::StrJoin(in_process, ",");
  return parsed;
}

}  // namespace sparseditto
