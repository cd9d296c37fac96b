// Applying a SandboxPolicy around a forked child: the part common/subprocess.cc calls. Everything is
// decided and allocated in the supervisor (PrepareSandbox); the child-side calls use raw syscalls only
// and are async-signal-safe, as a fork of a multi-threaded process requires.
//
// Process layout with a PID namespace (the default):
//
//   supervisor ── fork ──> A "mirror"   (our pid namespace; the pid Spawn returns, its process group)
//                            │ unshare(PID|NET|IPC[|USER]), uid drop, PDEATHSIG
//                            └─ fork ──> B "init"  (pid 1 of the new namespace; PDEATHSIG)
//                                          └─ fork ──> C the program (pid 2; rlimits, no_new_privs,
//                                                                      Landlock, execve)
//   B reaps every orphan of the namespace; when C ends, B sends C's wait status to A through a pipe and
//   exits, and the kernel kills whatever is left in the namespace (setsid() or not). A waits for B and
//   ends the way C ended: the same exit code, or the same signal (raised on itself, core dumps off), so
//   the supervisor's ExitOutcome is the program's. Killing A's process group (timeout, Kill()) kills
//   A, B and C; a descendant that left the group dies with B, by PDEATHSIG or by the group kill. A
//   supervisor killed with -9 takes A (PDEATHSIG), then B, then the namespace.
// Without a PID namespace there is no A or B: the child is the program.
//
// Thread-safety: PreparedSandbox is immutable after PrepareSandbox; the child-side functions touch
// only the child's own process state.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/sandbox_policy.h"

namespace sparseditto {

// Layers, as bits of a mask (ChildProcess::sandbox_skipped()).
enum SandboxLayer : uint32_t {
  kLayerUserNamespace = 1u << 0,
  kLayerPidNamespace = 1u << 1,
  kLayerNetworkNamespace = 1u << 2,
  kLayerIpcNamespace = 1u << 3,
  kLayerUidDrop = 1u << 4,
  kLayerParentDeathSignal = 1u << 5,
  kLayerNoNewPrivs = 1u << 6,
  kLayerLandlock = 1u << 7,
};
// "user namespace", "PID namespace", ... for one bit; "user namespace, landlock" for a mask.
std::string SandboxLayerNames(uint32_t mask);

// Child-side failure steps (reported with errno through Spawn's error pipe).
enum SandboxStep : int {
  kStepNone = 0,
  kStepUnshare = 100,
  kStepIdMaps,
  kStepUidDrop,
  kStepParentDeath,
  kStepFork,
  kStepNoNewPrivs,
  kStepLandlock,
};
// "unshare", "writing uid_map/gid_map", ... ; nullptr for a step that is not a sandbox step.
const char* SandboxStepName(int step);

// A policy made ready for one fork: the namespace flags, the id maps, the Landlock ruleset (an fd owned
// here, close-on-exec). Move-only. Built in the supervisor, read in the child.
class PreparedSandbox {
 public:
  PreparedSandbox(PreparedSandbox&&) = default;
  PreparedSandbox& operator=(PreparedSandbox&&) = default;

  bool pid_namespace() const { return unshare_flags_ & kUnsharePid; }
  int landlock_fd() const { return landlock_.fd(); }
  // Layers asked for that this machine does not offer (only with require_all_layers = false), known
  // before fork; the child may add more (EnterSandboxInChild's `skipped`).
  uint32_t skipped_before_fork() const { return skipped_; }
  // The uid/gid the program runs as when we are root (-1 when no drop happens): Spawn chowns the
  // private HOME to them.
  uid_t run_as_uid() const { return drop_uid_ ? uid_ : static_cast<uid_t>(-1); }
  gid_t run_as_gid() const { return drop_uid_ ? gid_ : static_cast<gid_t>(-1); }

  // Runs in the forked child, which must be single-threaded (a fork child is) and must already have its
  // fds 0, 1, 2 and pipes in place. `report_fd` is the error pipe: closed in A and B once they fork.
  // Returns kStepNone in the process that goes on to execve (C, or the child itself without a PID
  // namespace); on a failure returns the step with errno set, in whichever process failed. A and B
  // never return. Adds the layers that the kernel refused and the policy let go to *skipped.
  int EnterSandboxInChild(int report_fd, uint32_t* skipped) const;

  // Runs in the program's process right before execve (after chdir and rlimits): no_new_privs, then
  // Landlock on `landlock_fd` (landlock_fd() as the caller moved it among the child's fds; -1: none).
  // Returns kStepNone or the failed step with errno set. Async-signal-safe.
  int FinishSandboxInChild(int landlock_fd, uint32_t* skipped) const;

 private:
  friend absl::StatusOr<PreparedSandbox> PrepareSandbox(const SandboxPolicy& policy);
  PreparedSandbox() = default;
  static constexpr int kUnsharePid = 0x20000000;  // CLONE_NEWPID

  int unshare_flags_ = 0;   // CLONE_NEW* flags
  bool user_namespace_ = false;
  bool require_all_ = true;
  bool drop_uid_ = false;
  uid_t uid_ = 65534;
  gid_t gid_ = 65534;
  bool parent_death_ = true;
  bool no_new_privs_ = true;
  pid_t supervisor_pid_ = 0;
  std::string uid_map_;  // "<uid> <uid> 1\n": written by A into its new user namespace
  std::string gid_map_;
  LandlockRuleset landlock_;
  uint32_t skipped_ = 0;
};

// Builds what the child needs. Errors: FailedPrecondition naming the layer when the policy requires a
// layer this machine does not offer (today detectable before fork: Landlock); errors of
// BuildLandlockRuleset.
absl::StatusOr<PreparedSandbox> PrepareSandbox(const SandboxPolicy& policy);

// Makes `path` (a folder, recursively, or a file) writable by the uid/gid a sandboxed child of `policy`
// runs as: chowns it to policy.uid/gid when we are root and policy.drop_root; no-op otherwise.
// Internal when a chown fails.
absl::Status PrepareWritableFolder(const std::string& path, const SandboxPolicy& policy);

}  // namespace sparseditto
