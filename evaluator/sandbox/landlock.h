// Landlock (Linux 5.13+), without libc wrappers: the kernel's own syscalls through syscall(2), with the
// ABI constants defined here so the build does not depend on the installed kernel headers' age.
//
// A ruleset is built in the supervisor (paths opened there) and either handed to a child, which only
// calls restrict_self on it (async-signal-safe; sandbox_child.h), or applied in-process.
//
// Landlock restricts the calling *thread* and the threads and processes it creates afterwards, never
// threads that already exist. In-process use (InstallLandlock) in a process that already has threads
// (the CUDA runtime starts some) leaves those threads unrestricted, and code that can rewrite memory
// can make one of them do its opens. So the candidate host gets its Landlock rules at spawn (the
// SandboxPolicy, before execve: every thread it will ever have is covered), and InstallLandlock after
// CUDA initialisation only narrows them further for the thread that loads the candidate.
//
// Thread-safety: all functions are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/sandbox/sandbox_policy.h"

namespace sparseditto {

// The Landlock ABI version the running kernel offers (1 for Linux 5.13 ... 7 for 6.15), from
// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION). Unavailable with the reason when
// the kernel has no Landlock (ENOSYS) or it is disabled at boot (EOPNOTSUPP, "lsm=" without landlock).
absl::StatusOr<int> LandlockAbiVersion();

// A built ruleset: an fd owned by this object (close-on-exec), closed by the destructor. Move-only.
class LandlockRuleset {
 public:
  LandlockRuleset() = default;
  LandlockRuleset(LandlockRuleset&& other) noexcept : fd_(other.fd_), abi_(other.abi_) { other.fd_ = -1; }
  LandlockRuleset& operator=(LandlockRuleset&& other) noexcept;
  LandlockRuleset(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(const LandlockRuleset&) = delete;
  ~LandlockRuleset();

  int fd() const { return fd_; }  // -1 for a default-constructed (empty) object
  int abi() const { return abi_; }

 private:
  friend absl::StatusOr<LandlockRuleset> BuildLandlockRuleset(const LandlockRules& rules);
  int fd_ = -1;
  int abi_ = 0;
};

// Builds a ruleset handling every filesystem right the kernel's ABI knows (and TCP bind/connect from
// ABI 4, signal and abstract-socket scoping from ABI 6, as `rules` asks), with one path-beneath rule per
// existing path. Errors: Unavailable (no Landlock, as LandlockAbiVersion), InvalidArgument (a relative
// or empty path), FailedPrecondition (a path exists but cannot be opened, or the kernel refused a rule:
// the message names the path and errno).
absl::StatusOr<LandlockRuleset> BuildLandlockRuleset(const LandlockRules& rules);

// Async-signal-safe: no_new_privs is the caller's (Landlock refuses without it or CAP_SYS_ADMIN).
// Restricts the calling thread to `ruleset_fd`. Returns 0, or -1 with errno set.
int RestrictSelfToLandlockRuleset(int ruleset_fd);

// In-process: builds `rules`, sets no_new_privs and restricts the calling thread (see the file comment
// on threads that already exist). Errors: those of BuildLandlockRuleset; Internal when prctl or
// landlock_restrict_self fails.
absl::Status InstallLandlock(const LandlockRules& rules);

// The folders and files a CUDA toolchain (nvcc, cicc, ptxas, fatbinary, nvlink, gcc, as, ld) reads or
// executes on Debian and Ubuntu: /usr (the CUDA toolkit under /usr/local/cuda included), /lib*, /bin,
// /sbin, /opt and /etc/alternatives (read and execute), the dynamic loader's configuration and
// /dev/urandom (read), /dev/null and /dev/zero (read-write). Nothing else of /etc, /home, /root, /proc or
// /tmp. `toolkit_dir` is added (read and execute) when it is outside /usr. The caller adds its folders.
LandlockRules ToolchainLandlockRules(const std::string& toolkit_dir);

// Starting rules for the candidate host (the process that initialises CUDA and loads one candidate),
// for SandboxPolicy::landlock at spawn: the CUDA runtime and driver libraries and the host binary
// (/usr, /lib*, /opt, `extra_read_only`, e.g. the toolkit and the host's folder), the loader's
// configuration, /proc and /sys (the driver reads its parameters, the topology and /proc/self/maps;
// other processes' private files stay refused to a process of another uid, PID namespace and Landlock
// domain), `candidate_dir` read-only (the library to load), and read-write /dev/nvidia*,
// /dev/nvidia-uvm*, /dev/nvidia-caps, /dev/null; the host binary's ../lib (a packaged install's
// libraries). Not /dev/shm: it is shared by every process, so a
// channel from one candidate to the next (add it only if the driver turns out to need it). Executes
// only `host_binary` and the dynamic loader (execve opens the ELF interpreter with the execute right). Written for the NVIDIA driver of DESIGN.md §6 and not
// yet tried on a GPU: a path the driver needs and Landlock refuses shows up as a CUDA init error
// naming no path; strace -f -e trace=%file of one unsandboxed host run lists what to add.
LandlockRules CandidateHostLandlockRules(const std::string& host_binary, const std::string& candidate_dir,
                                         const std::vector<std::string>& extra_read_only = {});

}  // namespace sparseditto
