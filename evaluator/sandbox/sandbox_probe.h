// Which sandbox layers this machine offers, found by trying each in a forked child (not by reading
// version numbers): what `sparseditto doctor` prints.
//
// Thread-safety: ProbeSandboxLayers forks; the children call libseccomp and format text (malloc), which
// is safe only when the calling process is single-threaded at that moment (a command at start-up, a
// test). Call it before starting threads.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sparseditto {

struct SandboxLayerStatus {
  std::string name;    // "user namespace", "PID namespace", ..., "full RELRO of the runner"
  bool on = false;     // the layer works here
  bool needed = true;  // the default SandboxPolicy / candidate host requires it (as this user)
  std::string reason;  // why on or off: what was tried and what the kernel answered
};

struct SandboxProbeOptions {
  // The runner binary whose ELF is checked for full RELRO; empty: the check is reported off.
  std::string runner_path;
};

// Tries, each in a forked child: user, PID (the child is pid 1), network and IPC namespaces (as the
// default policy makes them: with a user namespace when not root), the uid drop (as root), the
// parent-death signal, no_new_privs, Landlock (a ruleset allowing nothing, then an open of / must fail),
// the candidate seccomp filter (then socket() must fail with EPERM and a read still work), and cgroup v2
// delegation (a folder made and removed in our cgroup, with cgroup.kill: not needed, the PID namespace
// is the whole-tree kill); and reads the runner's ELF for full RELRO. Never fails: a layer that cannot
// be tried is off with the reason.
std::vector<SandboxLayerStatus> ProbeSandboxLayers(const SandboxProbeOptions& options);

// True when every layer with needed = true is on.
bool AllNeededLayersOn(const std::vector<SandboxLayerStatus>& layers);

// The explicit opt-out of issue 23 item 6: SPARSEDITTO_ALLOW_MISSING_LAYERS=1 in the environment lets
// untrusted candidates be compiled and run where a needed layer is missing (nvcc then lets the layer go
// and names it in the compile log). Anything else, or unset: refuse.
bool MissingLayersAllowed();

// OK when every needed layer is on, or when `allow_missing`. Otherwise FailedPrecondition naming each
// missing layer with why it is off, and how to opt out. Pure; thread-safe.
absl::Status CheckNeededLayers(const std::vector<SandboxLayerStatus>& layers, bool allow_missing);

// The needed layers that are off, as "name (reason); ..."; empty when none.
std::string DescribeMissingLayers(const std::vector<SandboxLayerStatus>& layers);

}  // namespace sparseditto
