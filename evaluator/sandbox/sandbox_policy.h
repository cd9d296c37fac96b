// What an OS sandbox around a child process consists of (DESIGN.md §3.6, issue 23): the options of
// SpawnOptions::sandbox (common/subprocess.h) and of the in-process Landlock call (landlock.h).
//
// The layers, in the order the child applies them (sandbox_child.h has the process layout):
//   1. new PID, network and IPC namespaces (and a user namespace when we are not root, which is what
//      lets an unprivileged process make the others). The child's program runs as pid 2 under a tiny
//      init (pid 1) of its own: when the init dies the kernel kills every process of the namespace,
//      a descendant that called setsid() included. The network namespace holds only a loopback
//      device that is down: no network.
//   2. as root: every supplementary group dropped, then gid and uid set to `uid`/`gid` (nobody).
//   3. PR_SET_PDEATHSIG(SIGKILL) in every process we fork: when the thread that called Spawn exits
//      (or the whole supervisor is killed, kill -9 included) the child dies, and with it the namespace.
//   4. rlimits (SpawnOptions::limits), in the program's process.
//   5. no_new_privs, then Landlock (filesystem paths, TCP, signals and abstract sockets).
// seccomp is not a spawn layer (CUDA must initialise first): the candidate host installs it itself,
// seccomp_filter.h.
//
// Plain data; copy freely. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sparseditto {

// Landlock rules: everything not named here is denied for the handled access rights. Paths are
// opened (following symlinks) when the ruleset is built, in the supervisor; a path that does not exist
// is skipped (so "/lib32" can be listed on machines without it); one that exists and cannot be opened
// is an error. A rule on a file (not a folder) gets only the file rights of its class.
struct LandlockRules {
  // Read files and list folders beneath each path.
  std::vector<std::string> read_only;
  // Read, and execute (execve) files beneath each path. Shared libraries need only read_only:
  // Landlock's execute right covers execve, not mmap(PROT_EXEC).
  std::vector<std::string> executable;
  // Everything: read, write, truncate, create/remove/rename files and folders, ioctl on devices
  // (so /dev/nvidia* and /dev/null belong here).
  std::vector<std::string> read_write;
  // Landlock ABI 4+ (Linux 6.7): deny TCP bind and connect. Harmless next to a network namespace,
  // and the only network layer of the in-process InstallLandlock.
  bool deny_tcp = true;
  // Landlock ABI 6+ (Linux 6.12): no signals to processes outside the domain and no connects to
  // abstract unix sockets made outside it (the supervisor's, D-Bus, ...).
  bool scope_signals_and_abstract_sockets = true;

  bool operator==(const LandlockRules&) const = default;
};

struct SandboxPolicy {
  // Namespaces. Each defaults to on. Cost, measured on the 2-core development VM (Linux 6.18): a spawn
  // of /bin/true to its reaping takes 4.8 ms plain and 14.9 ms with every layer (Landlock included);
  // without the network namespace 3.2 ms, without the IPC namespace 8.7 ms: the network and IPC
  // namespaces are most of it. Small next to an nvcc compile (seconds) or CUDA initialisation.
  // A user namespace is made only when we are not root: it is what lets an unprivileged supervisor
  // make the other namespaces. As root they are made with root's own privilege before the uid drop,
  // and a user namespace would only hand the dropped process capabilities (over a namespace of its
  // own, but still a larger kernel surface), so none is made.
  bool new_user_namespace = true;
  // The whole-tree kill: the program runs as pid 2 of a new PID namespace under an init of ours.
  bool new_pid_namespace = true;
  // No network: only a loopback device, down. nvcc and the candidate host need none.
  bool new_network_namespace = true;
  // No System V IPC or POSIX message queues shared with the host.
  bool new_ipc_namespace = true;

  // PR_SET_NO_NEW_PRIVS before execve: setuid binaries and file capabilities do not grant anything.
  // Required by Landlock for an unprivileged process; on by default for every sandboxed child.
  bool no_new_privs = true;

  // PR_SET_PDEATHSIG(SIGKILL) in each process of the child. Note: it fires when the *thread* that
  // called Spawn exits, not only the process: spawn from a thread that outlives the child (a worker of
  // a pool does; a std::thread that ends right after Spawn does not).
  bool parent_death_signal = true;

  // When we run as root (euid 0): drop every supplementary group and become gid/uid below before the
  // program runs. 65534 is "nobody"/"nogroup" on Debian and Ubuntu: it owns no files, so the child can
  // write only where the supervisor chowned (Spawn chowns the private HOME it makes; callers chown
  // their writable folders, PrepareWritableFolder in sandbox_child.h). Ignored when not root.
  bool drop_root = true;
  uid_t uid = 65534;
  gid_t gid = 65534;

  // Landlock rules for the program, applied last before execve (so they cover every thread it will
  // ever have). nullopt: no Landlock.
  std::optional<LandlockRules> landlock;

  // true (default): a layer asked for and not available (no user namespaces, Landlock absent, an old
  // kernel, a container) fails Spawn with FailedPrecondition naming it. false: such a layer is skipped
  // and named in ChildProcess::sandbox_skipped() (the explicit opt-out of issue 23 item 6).
  bool require_all_layers = true;

  bool operator==(const SandboxPolicy&) const = default;
};

}  // namespace sparseditto
