#include "evaluator/host/host_lockdown.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_split.h"
#include "common/status_format.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/seccomp_filter.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

// Every capability gone: effective, permitted, inheritable, ambient and the bounding set. A root
// process left with none passes no ptrace access check against a process that holds any (the kernel
// requires the target's permitted set within the caller's, or CAP_SYS_PTRACE), so /proc/<pid>/environ
// and /proc/<pid>/mem of the evaluator and the judge are closed to it, and so is every privileged
// call. Not a uid change: CUDA IPC fails across uids (H200, session 17), so uid 0 stays.
absl::Status DropAllCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) {
    return absl::FailedPreconditionError(fmt::format("capget: {}", std::strerror(errno)));
  }
  const bool any = data[0].permitted != 0 || data[1].permitted != 0;
  if (any) {
    for (int cap = 0; cap < 64; ++cap) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
        if (errno == EINVAL) break;  // past the last capability this kernel knows
        return absl::FailedPreconditionError(fmt::format("PR_CAPBSET_DROP({}): {}", cap, std::strerror(errno)));
      }
    }
  }
  (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);  // EINVAL on kernels without ambient sets
  __user_cap_data_struct none[2] = {};
  if (syscall(SYS_capset, &header, none) != 0) {
    return absl::FailedPreconditionError(fmt::format("capset: {}", std::strerror(errno)));
  }
  if (syscall(SYS_capget, &header, data) != 0 || data[0].effective != 0 || data[0].permitted != 0 ||
      data[1].effective != 0 || data[1].permitted != 0) {
    return absl::FailedPreconditionError("capabilities still held after capset");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LockDownBeforeLoad(const std::string& library_path, std::string_view layers) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return absl::FailedPreconditionError(fmt::format("no_new_privs: {}", std::strerror(errno)));
  }
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return absl::FailedPreconditionError(fmt::format("PR_SET_DUMPABLE: {}", std::strerror(errno)));
  }
  bool landlock = false, caps = false, seccomp = false;
  for (absl::string_view layer : absl::StrSplit(absl::string_view(layers.data(), layers.size()), ',', absl::SkipEmpty())) {
    if (layer == "landlock") landlock = true;
    else if (layer == "caps") caps = true;
    else if (layer == "seccomp") seccomp = true;
    else return absl::InvalidArgumentError(fmt::format("unknown in-process layer '{}'", layer));
  }
  if (landlock) {
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
    const std::string host_binary = length > 0 ? std::string(self, length) : std::string();
    // The calibration host loads nothing: it gets no folder at all.
    const std::string folder = library_path.empty() ? host_binary : std::filesystem::path(library_path).parent_path().string();
    if (absl::Status s = InstallLandlock(CandidateHostLandlockRules(host_binary, folder)); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format("Landlock: {}", s.message()));
    }
  }
  if (caps) {
    if (absl::Status s = DropAllCapabilities(); !s.ok()) return absl::FailedPreconditionError(fmt::format("caps: {}", s.message()));
  }
  if (seccomp) {
    if (absl::Status s = InstallCandidateSeccomp(); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format("seccomp: {}", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
