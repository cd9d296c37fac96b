#include "evaluator/sandbox/landlock.h"

#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "fmt/format.h"

namespace sparseditto {
namespace {

// The kernel's numbers (include/uapi/linux/landlock.h), the same on every architecture.
#ifndef SYS_landlock_create_ruleset
constexpr long SYS_landlock_create_ruleset = 444;
constexpr long SYS_landlock_add_rule = 445;
constexpr long SYS_landlock_restrict_self = 446;
#endif
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kFsExecute = 1ULL << 0;
constexpr uint64_t kFsWriteFile = 1ULL << 1;
constexpr uint64_t kFsReadFile = 1ULL << 2;
constexpr uint64_t kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsAbi1All = (1ULL << 13) - 1;  // execute ... make_sym
constexpr uint64_t kFsRefer = 1ULL << 13;          // ABI 2
constexpr uint64_t kFsTruncate = 1ULL << 14;       // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;       // ABI 5
constexpr uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;
constexpr uint64_t kNetBindTcp = 1ULL << 0;     // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;  // ABI 4
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

// struct landlock_ruleset_attr as of ABI 6; older kernels are given the prefix they know.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

std::string ErrnoText(int error) { return fmt::format("{} ({})", strerrordesc_np(error), error); }

uint64_t HandledFsRights(int abi) {
  uint64_t rights = kFsAbi1All;
  if (abi >= 2) rights |= kFsRefer;
  if (abi >= 3) rights |= kFsTruncate;
  if (abi >= 5) rights |= kFsIoctlDev;
  return rights;
}

}  // namespace

absl::StatusOr<int> LandlockAbiVersion() {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi >= 0) return static_cast<int>(abi);
  const int error = errno;
  if (error == ENOSYS) return absl::UnavailableError("Landlock: the kernel has no landlock syscalls (ENOSYS; Linux < 5.13 or a seccomp profile of the container)");
  if (error == EOPNOTSUPP) return absl::UnavailableError("Landlock: built into the kernel but not enabled at boot (EOPNOTSUPP; add landlock to lsm=)");
  return absl::UnavailableError("Landlock: landlock_create_ruleset failed: " + ErrnoText(error));
}

LandlockRuleset& LandlockRuleset::operator=(LandlockRuleset&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    abi_ = other.abi_;
    other.fd_ = -1;
  }
  return *this;
}

LandlockRuleset::~LandlockRuleset() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<LandlockRuleset> BuildLandlockRuleset(const LandlockRules& rules) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  if (!abi.ok()) return abi.status();
  const uint64_t fs_rights = HandledFsRights(*abi);
  RulesetAttr attr{fs_rights, 0, 0};
  size_t attr_size = sizeof(uint64_t);
  if (*abi >= 4 && rules.deny_tcp) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;  // with no port rule: every port denied
    attr_size = 2 * sizeof(uint64_t);
  }
  if (*abi >= 6 && rules.scope_signals_and_abstract_sockets) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    attr_size = 3 * sizeof(uint64_t);
  }
  LandlockRuleset ruleset;
  ruleset.abi_ = *abi;
  ruleset.fd_ = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0));
  if (ruleset.fd_ < 0) {
    return absl::FailedPreconditionError("landlock_create_ruleset: " + ErrnoText(errno));
  }
  fcntl(ruleset.fd_, F_SETFD, FD_CLOEXEC);  // the kernel makes it close-on-exec already; be explicit

  auto add = [&](const std::string& path, uint64_t rights) -> absl::Status {
    if (path.empty() || path[0] != '/') {
      return absl::InvalidArgumentError(fmt::format("Landlock rule: '{}' is not an absolute path", path));
    }
    const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return absl::OkStatus();  // documented: missing paths are skipped
      return absl::FailedPreconditionError(fmt::format("Landlock rule: cannot open {}: {}", path, ErrnoText(errno)));
    }
    struct stat st {};
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileRights;
    PathBeneathAttr beneath{rights & fs_rights, fd};
    const long added = syscall(SYS_landlock_add_rule, ruleset.fd_, kRulePathBeneath, &beneath, 0);
    const int error = errno;
    close(fd);
    if (added != 0) {
      return absl::FailedPreconditionError(fmt::format("Landlock rule on {}: {}", path, ErrnoText(error)));
    }
    return absl::OkStatus();
  };
  for (const std::string& path : rules.read_only) {
    if (absl::Status s = add(path, kFsReadFile | kFsReadDir); !s.ok()) return s;
  }
  for (const std::string& path : rules.executable) {
    if (absl::Status s = add(path, kFsReadFile | kFsReadDir | kFsExecute); !s.ok()) return s;
  }
  for (const std::string& path : rules.read_write) {
    if (absl::Status s = add(path, fs_rights); !s.ok()) return s;
  }
  return ruleset;
}

int RestrictSelfToLandlockRuleset(int ruleset_fd) {
  return static_cast<int>(syscall(SYS_landlock_restrict_self, ruleset_fd, 0));
}

absl::Status InstallLandlock(const LandlockRules& rules) {
  absl::StatusOr<LandlockRuleset> ruleset = BuildLandlockRuleset(rules);
  if (!ruleset.ok()) return ruleset.status();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return absl::InternalError("prctl(PR_SET_NO_NEW_PRIVS): " + ErrnoText(errno));
  }
  if (RestrictSelfToLandlockRuleset(ruleset->fd()) != 0) {
    return absl::InternalError("landlock_restrict_self: " + ErrnoText(errno));
  }
  return absl::OkStatus();
}

LandlockRules ToolchainLandlockRules(const std::string& toolkit_dir) {
  LandlockRules rules;
  rules.executable = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt", "/etc/alternatives"};
  if (!toolkit_dir.empty() && toolkit_dir.rfind("/usr/", 0) != 0) rules.executable.push_back(toolkit_dir);
  rules.read_only = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                     "/dev/urandom", "/dev/random"};
  rules.read_write = {"/dev/null", "/dev/zero"};
  return rules;
}

LandlockRules CandidateHostLandlockRules(const std::string& host_binary, const std::string& candidate_dir,
                                         const std::vector<std::string>& extra_read_only) {
  LandlockRules rules;
  // execve opens the ELF interpreter with the execute right too.
  rules.executable = {host_binary, "/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"};
  rules.read_only = {"/usr", "/lib", "/lib64", "/lib32", "/opt", "/etc/ld.so.cache", "/etc/ld.so.conf",
                     "/etc/ld.so.conf.d", "/etc/localtime", "/proc", "/sys", "/dev/urandom", "/dev/random",
                     candidate_dir};
  // A packaged host (scripts/package_gpu.sh) finds its libraries through RUNPATH $ORIGIN/../lib.
  rules.read_only.push_back((std::filesystem::path(host_binary).parent_path() / ".." / "lib").lexically_normal().string());
  rules.read_only.insert(rules.read_only.end(), extra_read_only.begin(), extra_read_only.end());
  rules.read_write = {"/dev/null", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                      "/dev/nvidia-modeset", "/dev/nvidia-caps"};
  for (int i = 0; i < 64; ++i) rules.read_write.push_back(fmt::format("/dev/nvidia{}", i));  // missing: skipped
  return rules;
}

}  // namespace sparseditto
