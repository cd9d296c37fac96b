#include "evaluator/sandbox/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "fmt/format.h"

namespace sparseditto {
namespace {

// Allowed without conditions (see the header for why each group). Names this architecture lacks
// (open, stat, poll, ... on arm64) are skipped.
constexpr const char* kAllowed[] = {
    // I/O on fds
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
    "lseek", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "ioctl", "fsync", "fdatasync",
    "openat", "open", "fstat", "newfstatat", "stat", "lstat", "statx", "fstatfs", "statfs", "access",
    "faccessat", "faccessat2", "readlink", "readlinkat", "getcwd", "getdents64", "pipe", "pipe2", "eventfd2",
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "epoll_pwait2", "timerfd_create", "timerfd_settime", "timerfd_gettime", "sendmsg",
    "recvmsg", "sendto", "recvfrom", "shutdown", "getsockopt", "getsockname", "getpeername",
    // memory
    "mmap", "munmap", "mprotect", "mremap", "madvise", "brk", "msync", "mincore", "mlock", "mlock2", "munlock",
    "get_mempolicy", "set_mempolicy", "mbind",
    // threads
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "sched_yield",
    "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_getscheduler", "sched_getattr",
    "sched_get_priority_max", "sched_get_priority_min", "membarrier", "exit", "exit_group", "arch_prctl",
    "getcpu",
    // time and identity
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getpid",
    "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
    "uname", "sysinfo", "getrandom", "getrusage", "times", "getrlimit",
    // signals
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "rt_sigpending", "rt_sigsuspend",
    "sigaltstack", "restart_syscall",
};

using Context = std::unique_ptr<void, void (*)(scmp_filter_ctx)>;

std::string ErrnoText(int error) { return fmt::format("{} ({})", strerrordesc_np(error), error); }

absl::Status Check(int rc, std::string_view what) {
  if (rc >= 0) return absl::OkStatus();
  return absl::InternalError(fmt::format("libseccomp {}: {}", what, ErrnoText(-rc)));
}

int Resolve(const char* name) { return seccomp_syscall_resolve_name(name); }

}  // namespace

absl::Status InstallCandidateSeccomp(const CandidateSeccompOptions& options) {
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
    return absl::UnavailableError("seccomp: the kernel has no seccomp (CONFIG_SECCOMP off)");
  }
  const uint32_t deny = options.kill_on_denial ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM);
  Context ctx(seccomp_init(deny), seccomp_release);
  if (ctx == nullptr) return absl::InternalError("libseccomp seccomp_init failed");
  scmp_filter_ctx c = ctx.get();
  if (absl::Status s = Check(seccomp_attr_set(c, SCMP_FLTATR_CTL_TSYNC, 1), "attr TSYNC"); !s.ok()) return s;
  if (absl::Status s = Check(seccomp_attr_set(c, SCMP_FLTATR_CTL_NNP, options.set_no_new_privs ? 1 : 0), "attr NNP");
      !s.ok()) {
    return s;
  }
  for (const char* name : kAllowed) {
    const int nr = Resolve(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 0), name); !s.ok()) return s;
  }
  for (const std::string& name : options.extra_allowed_syscalls) {
    const int nr = Resolve(name.c_str());
    if (nr == __NR_SCMP_ERROR) {
      return absl::InvalidArgumentError(fmt::format("seccomp: no syscall named '{}' on this architecture", name));
    }
    if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 0), name); !s.ok()) return s;
  }
  // Threads only: clone must carry CLONE_THREAD and no namespace flag (fork is clone without it).
  constexpr uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
  if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD | kNamespaceFlags, CLONE_THREAD)),
                             "clone rule");
      !s.ok()) {
    return s;
  }
  // clone3 passes its flags in memory, where a filter cannot look: ENOSYS makes glibc use clone.
  if (const int nr = Resolve("clone3"); nr != __NR_SCMP_ERROR) {
    if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), nr, 0), "clone3 rule"); !s.ok()) return s;
  }
  for (int option : {PR_SET_NAME, PR_GET_NAME}) {
    if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(option))),
                               "prctl rule");
        !s.ok()) {
      return s;
    }
  }
  // Signals to ourselves only (raise, abort, pthread_kill of a sibling thread: tgkill(our pid, tid)).
  const scmp_datum_t self = static_cast<scmp_datum_t>(getpid());
  for (const char* name : {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"}) {
    const int nr = Resolve(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, self)), name); !s.ok()) {
      return s;
    }
  }
  // Reading our own limits (getrlimit is prlimit64(0, resource, NULL, old) in glibc).
  if (absl::Status s = Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
                                              SCMP_A2(SCMP_CMP_EQ, 0)),
                             "prlimit64 rule");
      !s.ok()) {
    return s;
  }
  const int loaded = seccomp_load(c);
  if (loaded == -ESRCH) {
    return absl::InternalError("seccomp_load: a thread could not be synchronised (TSYNC): it has a filter of its own");
  }
  if (loaded == -EINVAL || loaded == -ENOSYS) {
    return absl::UnavailableError("seccomp: the kernel refused the filter (" + ErrnoText(-loaded) + ")");
  }
  return Check(loaded, "seccomp_load");
}

}  // namespace sparseditto
