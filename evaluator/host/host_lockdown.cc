#include "evaluator/host/host_lockdown.h"

#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_split.h"
#include "common/status_format.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/seccomp_filter.h"
#include "fmt/format.h"

namespace sparseditto {

absl::Status LockDownBeforeLoad(const std::string& library_path, std::string_view layers) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return absl::FailedPreconditionError(fmt::format("no_new_privs: {}", std::strerror(errno)));
  }
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return absl::FailedPreconditionError(fmt::format("PR_SET_DUMPABLE: {}", std::strerror(errno)));
  }
  bool landlock = false, seccomp = false;
  for (absl::string_view layer : absl::StrSplit(absl::string_view(layers.data(), layers.size()), ',', absl::SkipEmpty())) {
    if (layer == "landlock") landlock = true;
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
  if (seccomp) {
    if (absl::Status s = InstallCandidateSeccomp(); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format("seccomp: {}", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
