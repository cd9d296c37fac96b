// Child processes: the one place SparseDitto starts them (nvcc compiles, the evaluator's runner child).
//
// A child gets exactly what SpawnOptions names and nothing else:
//   * argv, executed with execve (no shell). argv[0] without '/' is looked up in the child's PATH.
//   * an explicit environment: by default only PATH, HOME (a fresh private temp folder,
//     <temp>/sparseditto-home-<our pid>-XXXXXX (common/owned_temp_folders.h), removed when the
//     ChildProcess is destroyed; the first Spawn of a process sweeps those whose process is gone; with a
//     sandbox that drops root, HOME is home/ inside it, owned by the sandbox's uid) and LANG=C. No variable of ours is inherited unless named in
//     `inherit_variables` ("no inherited secrets").
//   * its own process group (setpgid), so Kill() and timeouts take the whole tree (nvcc -> cicc -> ptxas).
//     A descendant that calls setsid()/setpgid() itself escapes the group; only `sandbox` (its PID
//     namespace) takes such a descendant too.
//   * optionally an OS sandbox (SpawnOptions::sandbox, evaluator/sandbox/sandbox_policy.h): namespaces,
//     uid drop, parent-death signal, no_new_privs, Landlock. Then pid() is a small process that mirrors
//     the program's end (evaluator/sandbox/sandbox_child.h), so outcomes read exactly as without it.
//   * rlimits (CPU seconds, file size, address space, open files) and no core dumps.
//   * fds: stdin is /dev/null unless a pipe to child fd 0 is asked for; stdout and stderr are captured
//     through pipes with a byte cap per stream (excess is read and discarded, `truncated` is set);
//     extra pipes map to fixed child fds (e.g. 3 = requests in, 4 = replies out) for framed protocols.
//     Every other fd is closed in the child. Signal mask and dispositions are reset to the defaults.
//
// Outcomes are typed (ExitOutcome): exited with a code, killed by a signal (named), timed out (we killed
// it), or killed by the supervisor (Kill()). Errors of ours (fork failed, exec failed, bad options) are
// absl::Status; a child that crashes is not an error of ours, it is an outcome.
//
// Thread-safety: free functions are thread-safe. A ChildProcess is not: one thread drives it (WaitFor,
// Pump, reads and writes), though different ChildProcess objects may be driven from different threads.
// Requirement on the process: SIGCHLD must not be ignored (SIG_IGN auto-reaps children, and waitpid
// then fails with ECHILD), and no other code may waitpid(-1) our children.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/sandbox/sandbox_policy.h"

namespace sparseditto {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// A deadline `seconds` from now (fractions allowed).
Deadline DeadlineAfter(double seconds);

// Limits set with setrlimit in the child before exec. Unset optionals leave the inherited limit.
struct ResourceLimits {
  std::optional<int64_t> cpu_seconds;          // RLIMIT_CPU: SIGXCPU, then SIGKILL
  std::optional<int64_t> file_size_bytes;      // RLIMIT_FSIZE: larger writes fail (SIGXFSZ)
  std::optional<int64_t> address_space_bytes;  // RLIMIT_AS: leave unset for CUDA processes
  std::optional<int64_t> open_files = 1024;    // RLIMIT_NOFILE
  bool core_dumps = false;                     // false: RLIMIT_CORE = 0
  // Added to the child's niceness before exec (setpriority; the result is capped at 19): a lower CPU
  // priority for work that must not slow ours. 0 keeps ours; negative values are refused by Spawn.
  int nice_increment = 0;
};

// A pipe between us and a fixed fd of the child. fds 1 and 2 are always the captured stdout/stderr.
struct ChildPipe {
  enum class Direction { kToChild, kFromChild };
  int child_fd = 0;  // 0 (stdin), or 3 and up
  Direction direction = Direction::kToChild;
};

// One of our fds handed to the child at a fixed fd (e.g. a sealed memfd it maps). We keep ours open.
struct InheritedFd {
  int fd = -1;        // ours; required
  int child_fd = 3;   // 3 and up, not one of the pipes' fds
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program; required
  // Variables set in the child, over the defaults (PATH, HOME, LANG). Setting HOME here replaces the
  // private temp HOME; setting PATH replaces the default PATH (/usr/local/bin:/usr/bin:/bin).
  std::map<std::string, std::string> environment;
  // Names of our own variables copied into the child when set (e.g. "CUDA_VISIBLE_DEVICES").
  std::vector<std::string> inherit_variables;
  std::string working_directory;  // empty: ours
  ResourceLimits limits;
  std::vector<ChildPipe> pipes;   // at most one per child fd; child fds 1 and 2 are refused
  std::vector<InheritedFd> inherited_fds;  // with the pipes, at most 12 fds in all
  bool merge_stderr_into_stdout = false;  // the child's fd 2 writes to the stdout pipe (ordered log)
  int64_t max_captured_bytes = 1 << 20;   // per stream; the rest is read and discarded
  // nullopt (default): no sandbox, the behaviour above. Set: the child runs inside it. As root with the
  // default uid drop, the private HOME is chowned to the sandbox's uid; other folders the child must
  // write (working_directory included) are the caller's to chown (PrepareWritableFolder).
  std::optional<SandboxPolicy> sandbox;
};

// How a child ended.
struct ExitOutcome {
  enum class Kind { kExited, kSignaled, kTimedOut, kKilled };
  Kind kind = Kind::kExited;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignaled: the signal; kTimedOut / kKilled: the signal we sent (SIGKILL)

  bool success() const { return kind == Kind::kExited && exit_code == 0; }
  // "exited with code 3", "killed by signal 11 (SIGSEGV)", "timed out (killed by us)",
  // "killed by the supervisor".
  std::string ToString() const;
};

// Output read from one of the child's streams.
struct CapturedOutput {
  std::string bytes;            // at most max_captured_bytes: the beginning of the stream
  bool truncated = false;       // more was written and discarded
  int64_t discarded_bytes = 0;
};

// "SIGSEGV" for 11, "SIG42" for numbers without a name.
std::string SignalName(int signal);

// Resident memory (VmRSS) of a process, from /proc/<pid>/status. NotFound when it is gone (or a
// zombie, which has no VmRSS line); Internal when the file cannot be parsed.
absl::StatusOr<int64_t> ReadResidentBytes(pid_t pid);

// A running (or finished, not yet destroyed) child. Created by Spawn. Destroying it kills the process
// group with SIGKILL if the child has not been reaped, reaps it, closes our pipe ends and removes the
// private HOME folder.
class ChildProcess {
 public:
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }  // also the process-group id

  // Drains stdout/stderr (and nothing else) until the child exits or `deadline` passes; at the
  // deadline kills the group and returns kTimedOut. After the child exits, the rest of its group is
  // killed too and the streams are read to their end. Calling again after it returned an outcome
  // returns the same outcome. Internal on a waitpid/poll failure.
  absl::StatusOr<ExitOutcome> WaitFor(Deadline deadline);

  // Sends SIGKILL to the whole group (no-op once reaped). The next WaitFor returns kKilled.
  void Kill();

  // One round of supervision: drains stdout/stderr, notices the child's exit (reaping it), and
  // returns when one of `watch` has events (their revents are filled in), the child has exited, or
  // `deadline` passed, whichever is first. Never kills. `watch` fds are ours (e.g. parent_fd(4)).
  enum class PumpEvent { kWatchReady, kExited, kDeadline };
  absl::StatusOr<PumpEvent> Pump(Deadline deadline, std::span<pollfd> watch = {});

  // Waits until the pipe mapped to `child_fd` has data or the child has exited (a read then says what
  // is left), draining output, and between slices of `poll_seconds` looks at ResidentBytes(). OK when
  // there is something to read or the child exited; DeadlineExceeded at `deadline`; ResourceExhausted
  // "used N MiB of host memory (limit M MiB)" once the resident memory exceeds `max_resident_bytes`
  // (the caller kills, or not); Pump's errors. Never kills.
  absl::Status WaitReadableWithin(int child_fd, Deadline deadline, int64_t max_resident_bytes, double poll_seconds);

  // Writes all of `bytes` to the pipe mapped to `child_fd` (kToChild), draining the child's output
  // meanwhile. DeadlineExceeded if it did not fit by `deadline`; FailedPrecondition if the child
  // closed its end or exited; InvalidArgument if there is no such pipe. SIGPIPE is never raised.
  absl::Status WriteToChild(int child_fd, std::string_view bytes, Deadline deadline);

  // Reads exactly `size` bytes from the pipe mapped to `child_fd` (kFromChild), draining output
  // meanwhile. DeadlineExceeded when not all arrived by `deadline`; OutOfRange (with how many came)
  // when the child closed the pipe or exited first; InvalidArgument if there is no such pipe.
  absl::StatusOr<std::string> ReadFromChild(int child_fd, size_t size, Deadline deadline);

  // Closes our end of the pipe to `child_fd` (the child then reads EOF). No-op if none.
  void ClosePipe(int child_fd);

  // Our end of the pipe mapped to `child_fd`, or -1. Owned by this object; non-blocking, close-on-exec.
  int parent_fd(int child_fd) const;

  // Resident memory of the child's program (not of its descendants); see ReadResidentBytes. With a
  // PID-namespace sandbox that is the program under the mirror and init processes, found through
  // /proc/<pid>/task/<pid>/children.
  absl::StatusOr<int64_t> ResidentBytes() const;

  // Sandbox layers that were asked for, not available, and let go (SandboxPolicy.require_all_layers =
  // false): a mask of SandboxLayer bits (evaluator/sandbox/sandbox_child.h, SandboxLayerNames). 0
  // without a sandbox or when every layer is in place.
  uint32_t sandbox_skipped() const { return sandbox_skipped_; }

  // The outcome once the child has been reaped (by WaitFor or Pump); nullopt while running.
  const std::optional<ExitOutcome>& outcome() const { return outcome_; }
  const CapturedOutput& captured_stdout() const { return stdout_; }
  const CapturedOutput& captured_stderr() const { return stderr_; }

 private:
  friend absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(const SpawnOptions& options);
  ChildProcess() = default;

  struct ParentPipe {
    int child_fd;
    int fd;  // ours; -1 once closed
    ChildPipe::Direction direction;
  };
  ParentPipe* FindPipe(int child_fd);
  void ReadAvailable(int& fd, CapturedOutput& out);
  absl::Status TryReap(int wait_flags);
  void KillGroup();
  void DrainAfterExit();

  pid_t pid_ = -1;
  int pidfd_ = -1;           // -1 where pidfd_open is unavailable; then Pump polls every 20 ms
  int stdout_fd_ = -1;       // ours, non-blocking; -1 at EOF
  int stderr_fd_ = -1;
  std::vector<ParentPipe> pipes_;
  int64_t max_captured_bytes_ = 0;
  CapturedOutput stdout_;
  CapturedOutput stderr_;
  std::optional<ExitOutcome> outcome_;
  bool killed_by_supervisor_ = false;
  bool timed_out_ = false;
  std::string private_home_;  // removed by the destructor; empty if none
  bool pid_namespace_ = false;  // pid_ is the sandbox's mirror; the program is its grandchild
  uint32_t sandbox_skipped_ = 0;
};

// Starts a child. Errors: InvalidArgument (empty argv, a pipe on fd 1/2 or twice on one fd, a '='
// in a variable name), NotFound (argv[0] not found in PATH), FailedPrecondition (the child could not
// chdir, set a limit, enter its sandbox or execve: the message names the step and errno; a sandbox
// layer required and not available here, named), Internal (pipe/fork failed, or chowning the private
// HOME for the sandbox's uid).
absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(const SpawnOptions& options);

// The result of a one-shot child.
struct CommandResult {
  ExitOutcome outcome;
  CapturedOutput stdout_output;
  CapturedOutput stderr_output;  // empty when merge_stderr_into_stdout
  double seconds = 0;            // wall time from spawn to reaping
  uint32_t sandbox_skipped = 0;  // ChildProcess::sandbox_skipped()
};

// Spawns, writes `stdin_data` (if non-empty, through a pipe to fd 0, then closes it), waits at most
// `timeout_seconds` (then kills the group: kTimedOut) and collects the output. Errors as Spawn, plus
// Internal from waiting. A child failing is not an error: look at `outcome`.
absl::StatusOr<CommandResult> RunCommand(SpawnOptions options, double timeout_seconds,
                                         std::string_view stdin_data = {});

}  // namespace sparseditto
