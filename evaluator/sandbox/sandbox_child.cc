#include "evaluator/sandbox/sandbox_child.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "fmt/format.h"

namespace sparseditto {
namespace {

static_assert(CLONE_NEWPID == 0x20000000);

// fork() without glibc's atfork handlers (libraries of the supervisor register some, and they may
// take locks): the raw clone, as fork does it. Only syscalls follow in the new process.
pid_t RawFork() { return static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)); }

// Closes every fd but `keep` (-1: none). close_range needs Linux 5.9; below that, a loop.
void CloseAllExcept(int keep) {
  if (keep < 0) {
    if (syscall(SYS_close_range, 0, ~0U, 0) == 0) return;
    for (int fd = 0; fd < 4096; ++fd) close(fd);
    return;
  }
  if ((keep == 0 || syscall(SYS_close_range, 0, keep - 1, 0) == 0) &&
      syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) {
    return;
  }
  for (int fd = 0; fd < 4096; ++fd) {
    if (fd != keep) close(fd);
  }
}

bool WriteFile(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int error = errno;
  close(fd);
  errno = error;
  return ok;
}

// Ends this process the way `status` (a wait status) says: the exit code, or death by the signal.
[[noreturn]] void EndLike(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigaction(sig, &action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

}  // namespace

std::string SandboxLayerNames(uint32_t mask) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {kLayerUserNamespace, "user namespace"}, {kLayerPidNamespace, "PID namespace"},
      {kLayerNetworkNamespace, "network namespace"}, {kLayerIpcNamespace, "IPC namespace"},
      {kLayerUidDrop, "uid drop"}, {kLayerParentDeathSignal, "parent-death signal"},
      {kLayerNoNewPrivs, "no_new_privs"}, {kLayerLandlock, "landlock"}};
  std::string names;
  for (const auto& [bit, name] : kNames) {
    if (!(mask & bit)) continue;
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

const char* SandboxStepName(int step) {
  switch (step) {
    case kStepUnshare: return "sandbox: unshare of the namespaces";
    case kStepIdMaps: return "sandbox: writing uid_map/gid_map of the user namespace";
    case kStepUidDrop: return "sandbox: dropping root (setgroups/setresgid/setresuid)";
    case kStepParentDeath: return "sandbox: prctl(PR_SET_PDEATHSIG)";
    case kStepFork: return "sandbox: fork of the namespace's init or program";
    case kStepNoNewPrivs: return "sandbox: prctl(PR_SET_NO_NEW_PRIVS)";
    case kStepLandlock: return "sandbox: landlock_restrict_self";
    default: return nullptr;
  }
}

absl::StatusOr<PreparedSandbox> PrepareSandbox(const SandboxPolicy& policy) {
  PreparedSandbox s;
  const bool root = geteuid() == 0;
  s.require_all_ = policy.require_all_layers;
  s.supervisor_pid_ = getpid();
  s.parent_death_ = policy.parent_death_signal;
  s.no_new_privs_ = policy.no_new_privs || policy.landlock.has_value();  // Landlock needs it
  s.drop_uid_ = root && policy.drop_root;
  s.uid_ = policy.uid;
  s.gid_ = policy.gid;
  if (policy.new_pid_namespace) s.unshare_flags_ |= CLONE_NEWPID;
  if (policy.new_network_namespace) s.unshare_flags_ |= CLONE_NEWNET;
  if (policy.new_ipc_namespace) s.unshare_flags_ |= CLONE_NEWIPC;
  // Unprivileged, the other namespaces need one of user's own; as root they do not (sandbox_policy.h).
  if (!root && (policy.new_user_namespace || s.unshare_flags_ != 0)) {
    s.user_namespace_ = true;
    s.unshare_flags_ |= CLONE_NEWUSER;
    s.uid_map_ = fmt::format("{0} {0} 1\n", geteuid());
    s.gid_map_ = fmt::format("{0} {0} 1\n", getegid());
  }
  if (policy.landlock) {
    absl::StatusOr<LandlockRuleset> ruleset = BuildLandlockRuleset(*policy.landlock);
    if (ruleset.ok()) {
      s.landlock_ = std::move(*ruleset);
    } else if (absl::IsUnavailable(ruleset.status())) {
      if (s.require_all_) {
        return absl::FailedPreconditionError(
            fmt::format("sandbox layer 'landlock' is not available here: {} (SandboxPolicy.require_all_layers = "
                        "false runs without it)", std::string(ruleset.status().message())));
      }
      s.skipped_ |= kLayerLandlock;
    } else {
      return ruleset.status();
    }
  }
  return s;
}

int PreparedSandbox::EnterSandboxInChild(int report_fd, uint32_t* skipped) const {
  int made = 0;
  if (unshare_flags_ != 0) {
    if (unshare(unshare_flags_) == 0) {
      made = unshare_flags_;
    } else if (require_all_) {
      return kStepUnshare;
    } else {
      // One at a time, the user namespace first (it grants the others to an unprivileged process).
      static constexpr std::pair<int, uint32_t> kEach[] = {{CLONE_NEWUSER, kLayerUserNamespace},
                                                           {CLONE_NEWPID, kLayerPidNamespace},
                                                           {CLONE_NEWNET, kLayerNetworkNamespace},
                                                           {CLONE_NEWIPC, kLayerIpcNamespace}};
      for (const auto& [flag, layer] : kEach) {
        if (!(unshare_flags_ & flag)) continue;
        if (unshare(flag) == 0) {
          made |= flag;
        } else {
          *skipped |= layer;
        }
      }
    }
  }
  if (made & CLONE_NEWUSER) {
    if (!WriteFile("/proc/self/setgroups", "deny") || !WriteFile("/proc/self/uid_map", uid_map_) ||
        !WriteFile("/proc/self/gid_map", gid_map_)) {
      return kStepIdMaps;
    }
  }
  if (drop_uid_) {
    if (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, gid_, gid_, gid_) != 0 ||
        syscall(SYS_setresuid, uid_, uid_, uid_) != 0) {
      if (require_all_) return kStepUidDrop;
      *skipped |= kLayerUidDrop;
    }
  }
  // After the uid change, which clears the parent-death signal.
  if (parent_death_) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
      if (require_all_) return kStepParentDeath;
      *skipped |= kLayerParentDeathSignal;
    }
    if (getppid() != supervisor_pid_) _exit(127);  // the supervisor (thread) is already gone
  }
  if (!(made & CLONE_NEWPID)) return kStepNone;

  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) return kStepFork;
  const pid_t init = RawFork();
  if (init < 0) return kStepFork;
  if (init == 0) {  // B: pid 1 of the namespace
    close(status_pipe[0]);
    if (parent_death_) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    const pid_t program = RawFork();
    if (program < 0) return kStepFork;
    if (program == 0) {  // C: the program
      close(status_pipe[1]);
      if (parent_death_) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      return kStepNone;
    }
    CloseAllExcept(status_pipe[1]);  // report_fd and the program's pipes included
    int status = 0;
    for (;;) {  // reap every orphan of the namespace until the program itself ends
      const pid_t done = waitpid(-1, &status, 0);
      if (done == program) break;
      if (done < 0 && errno != EINTR) {
        status = SIGKILL;  // "killed by SIGKILL": cannot happen while the program is our child
        break;
      }
    }
    (void)!write(status_pipe[1], &status, sizeof status);
    _exit(0);  // the kernel now kills every process left in the namespace
  }
  // A: the mirror.
  (void)report_fd;  // closed below with the rest
  close(status_pipe[1]);
  CloseAllExcept(status_pipe[0]);
  int init_status = 0;
  while (waitpid(init, &init_status, 0) < 0) {
    if (errno != EINTR) EndLike(SIGKILL);
  }
  int program_status = 0;
  ssize_t got;
  do {
    got = read(status_pipe[0], &program_status, sizeof program_status);
  } while (got < 0 && errno == EINTR);
  EndLike(got == static_cast<ssize_t>(sizeof program_status) ? program_status : init_status);
}

int PreparedSandbox::FinishSandboxInChild(int landlock_fd, uint32_t* skipped) const {
  if (no_new_privs_ && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    if (require_all_) return kStepNoNewPrivs;
    *skipped |= kLayerNoNewPrivs;
  }
  if (landlock_fd >= 0) {
    if (RestrictSelfToLandlockRuleset(landlock_fd) != 0) {
      if (require_all_) return kStepLandlock;
      *skipped |= kLayerLandlock;
    }
  }
  return kStepNone;
}

absl::Status PrepareWritableFolder(const std::string& path, const SandboxPolicy& policy) {
  if (geteuid() != 0 || !policy.drop_root) return absl::OkStatus();
  namespace fs = std::filesystem;
  auto own = [&](const fs::path& p) -> absl::Status {
    if (lchown(p.c_str(), policy.uid, policy.gid) != 0) {
      return absl::InternalError(fmt::format("chown {} to {}:{}: {}", p.string(), policy.uid, policy.gid,
                                             strerrordesc_np(errno)));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = own(path); !s.ok()) return s;
  std::error_code error;
  if (!fs::is_directory(path, error)) return absl::OkStatus();
  for (auto it = fs::recursive_directory_iterator(path, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (absl::Status s = own(it->path()); !s.ok()) return s;
  }
  if (error) return absl::InternalError(fmt::format("listing {}: {}", path, error.message()));
  return absl::OkStatus();
}

}  // namespace sparseditto
