// The candidate host's system-call allow-list (seccomp-bpf, built with libseccomp).
//
// Called inside the candidate-host process AFTER CUDA is initialised (cudaFree(0): the driver has
// opened /dev/nvidia*, mapped its memory, started its threads, read its configuration) and BEFORE the
// candidate's library is dlopen'ed (its constructors run at load). The filter is synchronised to every
// thread of the process (SECCOMP_FILTER_FLAG_TSYNC), the CUDA runtime's included, and is inherited by
// every thread created later. It cannot be removed.
//
// Allowed (what the CUDA runtime and driver, dlopen, threads and the host's protocol use after init):
//   I/O on fds already open or opened read-only-or-not through openat (paths are Landlock's job):
//     read/write/readv/writev/pread64/pwrite64/preadv(2)/pwritev(2), lseek, close, dup/dup2/dup3,
//     fcntl, ioctl (the driver's interface: every request on every fd), openat/open, fstat/newfstatat/
//     stat/lstat/statx/fstatfs/statfs, access/faccessat(2), readlink(at), getcwd, getdents64, pipe2,
//     eventfd2, poll/ppoll/select/pselect6, epoll_*, sendmsg/recvmsg/sendto/recvfrom/shutdown/
//     getsockopt/getsockname/getpeername on sockets already open (none can be made).
//   memory: mmap, munmap, mprotect, mremap, madvise, brk, msync, mincore, mlock/munlock,
//     get_mempolicy/set_mempolicy/mbind (the driver's NUMA placement of pinned memory).
//   threads: clone only with CLONE_THREAD and no CLONE_NEW* flag (pthread_create); clone3 fails
//     with ENOSYS so glibc falls back to clone, whose flags a filter can read; futex, set_robust_list,
//     get_robust_list, rseq, set_tid_address, sched_yield, sched_getaffinity/sched_setaffinity,
//     sched_get*, membarrier, exit, exit_group, prctl (PR_SET_NAME / PR_GET_NAME only), arch_prctl.
//   time and identity: clock_gettime/clock_getres/clock_nanosleep/nanosleep/gettimeofday/time,
//     getpid/gettid/getppid/get[e]uid/get[e]gid/getres[ug]id, uname, sysinfo, getrandom,
//     getrusage, times, prlimit64 only as a read of our own limits (new_limit == NULL, pid 0),
//     getrlimit.
//   signals: rt_sigaction, rt_sigprocmask, rt_sigreturn, rt_sigtimedwait, rt_sigpending,
//     sigaltstack, restart_syscall; kill/tgkill/tkill/rt_sigqueueinfo/rt_tgsigqueueinfo only aimed at
//     our own pid (raise, abort, a thread signalling a sibling).
// Denied with EPERM (or death, `kill_on_denial`): everything else, notably execve/execveat, fork/vfork
// and clone without CLONE_THREAD, socket/socketpair/connect/bind/listen/accept, ptrace,
// process_vm_readv/writev, kill of another process, mount/umount2/pivot_root/chroot, unshare/setns,
// personality, bpf, perf_event_open, memfd_create, userfaultfd, io_uring_* (which would bypass this
// filter), keyctl/add_key, kexec_*, *_module, seccomp, setuid-family calls, wait4/waitid (no children),
// unlink/rename/mkdir (the host writes no files). Syscalls of another ABI (i386 int 0x80, x32) kill the
// process (libseccomp's bad-architecture action).
//
// Thread-safety: InstallCandidateSeccomp may be called from any thread; it applies to all of them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sparseditto {

struct CandidateSeccompOptions {
  // Extra syscall names to allow (libseccomp spelling, e.g. "shmat"), for a driver that needs one more.
  // A name this architecture does not have is an InvalidArgument error.
  std::vector<std::string> extra_allowed_syscalls;
  // false (default): a denied syscall fails with EPERM, which the CUDA runtime reports as an error the
  // host can name. true: the process is killed (SIGSYS) at the first denied syscall.
  bool kill_on_denial = false;
  // Also set no_new_privs (required by the kernel for an unprivileged process, and harmless).
  bool set_no_new_privs = true;
};

// Builds the allow-list above and loads it into the kernel for every thread of the process.
// Errors: Unavailable (the kernel has no seccomp filters, or TSYNC: Linux < 3.17), InvalidArgument (an
// unknown extra syscall), Internal (libseccomp failed; the message names the call and errno). On an
// error nothing has been installed.
absl::Status InstallCandidateSeccomp(const CandidateSeccompOptions& options = {});

}  // namespace sparseditto
