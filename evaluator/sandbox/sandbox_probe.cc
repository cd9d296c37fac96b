#include "evaluator/sandbox/sandbox_probe.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>

#include "evaluator/sandbox/elf_hardening.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/seccomp_filter.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

std::string ErrnoText(int error) { return fmt::format("{} ({})", strerrordesc_np(error), error); }

struct Trial {
  bool on = false;
  std::string reason;
};

// Runs `body` in a forked child and returns what it said. The child's verdict travels through a pipe;
// a child killed by a signal (a seccomp kill, say) is off with the signal named.
Trial TryInChild(const std::function<Trial()>& body) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {false, "pipe2: " + ErrnoText(errno)};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, "fork: " + ErrnoText(errno)};
  }
  if (pid == 0) {
    close(fds[0]);
    const Trial trial = body();
    const std::string message = (trial.on ? "1" : "0") + trial.reason;
    (void)!write(fds[1], message.data(), message.size());
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[512];
  for (;;) {
    const ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got > 0) {
      message.append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (message.empty()) {
    return {false, WIFSIGNALED(status) ? fmt::format("the trying child was killed by signal {}", WTERMSIG(status))
                                       : "the trying child said nothing"};
  }
  return {message[0] == '1', message.substr(1)};
}

// unshare(flag), with a user namespace when not root (as the default policy does).
Trial TryUnshare(int flag, const char* what) {
  return TryInChild([flag, what]() -> Trial {
    const bool root = geteuid() == 0;
    const int flags = flag | (root ? 0 : CLONE_NEWUSER);
    if (unshare(flags) != 0) {
      return {false, fmt::format("unshare({}{}) failed: {}", what, root ? "" : " with a user namespace", ErrnoText(errno))};
    }
    return {true, fmt::format("unshare({}{}) works", what, root ? " as root" : " inside a user namespace")};
  });
}

Trial TryPidNamespace() {
  return TryInChild([]() -> Trial {
    const bool root = geteuid() == 0;
    if (unshare(CLONE_NEWPID | (root ? 0 : CLONE_NEWUSER)) != 0) {
      return {false, "unshare(CLONE_NEWPID) failed: " + ErrnoText(errno)};
    }
    const pid_t init = fork();
    if (init < 0) return {false, "fork after unshare(CLONE_NEWPID) failed: " + ErrnoText(errno)};
    if (init == 0) _exit(getpid() == 1 ? 0 : 1);
    int status = 0;
    while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {false, "the namespace's first process was not pid 1"};
    return {true, "a child of unshare(CLONE_NEWPID) is pid 1 of its namespace: killing it kills the whole tree"};
  });
}

Trial TryLandlock() {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  if (!abi.ok()) return {false, std::string(abi.status().message())};
  return TryInChild([abi = *abi]() -> Trial {
    absl::Status installed = InstallLandlock(LandlockRules{});
    if (!installed.ok()) return {false, std::string(installed.message())};
    const int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) return {false, fmt::format("ABI {}: restricted to nothing, yet / could be opened", abi)};
    if (errno != EACCES) return {false, "opening / under an empty ruleset failed with " + ErrnoText(errno)};
    std::string features = abi >= 6 ? "files, TCP, signal and abstract-socket scoping"
                           : abi >= 4 ? "files and TCP" : "files only";
    return {true, fmt::format("ABI {} ({}): under an empty ruleset opening / fails with EACCES", abi, features)};
  });
}

Trial TrySeccomp() {
  return TryInChild([]() -> Trial {
    absl::Status installed = InstallCandidateSeccomp({});
    if (!installed.ok()) return {false, std::string(installed.message())};
    const int sock = socket(AF_INET, SOCK_STREAM, 0);
    if (sock >= 0 || errno != EPERM) return {false, "the candidate filter loaded, yet socket() was not refused"};
    const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    char byte;
    if (fd < 0 || read(fd, &byte, 1) != 1) return {false, "the candidate filter loaded, but reading a file failed"};
    return {true, "the candidate allow-list (libseccomp, TSYNC) loads; socket() then fails with EPERM"};
  });
}

Trial TryUidDrop() {
  if (geteuid() != 0) return {true, fmt::format("not needed: running as uid {}, not root", geteuid())};
  return TryInChild([]() -> Trial {
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) {
      return {false, "setresuid(65534) as root failed: " + ErrnoText(errno)};
    }
    if (setresuid(0, 0, 0) == 0) return {false, "after dropping to 65534 the process could become root again"};
    return {true, "root drops to uid/gid 65534 (nobody) and cannot come back"};
  });
}

Trial TryPrctlFlag(int set, int get, unsigned long value, const char* what) {
  return TryInChild([=]() -> Trial {
    if (prctl(set, value, 0, 0, 0) != 0) return {false, fmt::format("prctl({}) failed: {}", what, ErrnoText(errno))};
    int got = 0;
    const int rc = get == PR_GET_PDEATHSIG ? prctl(get, &got, 0, 0, 0) : (got = prctl(get, 0, 0, 0, 0));
    if (rc < 0 || static_cast<unsigned long>(got) != value) return {false, fmt::format("prctl({}) did not stick", what)};
    return {true, fmt::format("prctl({}) works", what)};
  });
}

// Our cgroup v2 folder, if there is a cgroup2 mount and /proc/self/cgroup names a v2 path.
Trial TryCgroupDelegation() {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line, mount_point;
  while (std::getline(mounts, line)) {
    const size_t dash = line.find(" - cgroup2 ");
    if (dash == std::string::npos) continue;
    // fields: id parent major:minor root mount-point ...
    size_t pos = 0;
    for (int field = 0; field < 4 && pos != std::string::npos; ++field) pos = line.find(' ', pos + 1);
    if (pos == std::string::npos) continue;
    mount_point = line.substr(pos + 1, line.find(' ', pos + 1) - pos - 1);
    break;
  }
  if (mount_point.empty()) return {false, "no cgroup2 file system is mounted"};
  std::ifstream cgroups("/proc/self/cgroup");
  std::string own;
  while (std::getline(cgroups, line)) {
    if (line.rfind("0::", 0) == 0) own = line.substr(3);
  }
  if (own.empty()) return {false, "/proc/self/cgroup names no cgroup v2 path"};
  const std::string folder = fmt::format("{}{}/sparseditto-probe-{}", mount_point, own == "/" ? "" : own, getpid());
  if (mkdir(folder.c_str(), 0755) != 0) {
    return {false, fmt::format("cannot make a cgroup under {}{}: {}", mount_point, own, ErrnoText(errno))};
  }
  const bool has_kill = access((folder + "/cgroup.kill").c_str(), W_OK) == 0;
  rmdir(folder.c_str());
  if (!has_kill) return {false, "a child cgroup can be made but has no cgroup.kill (Linux < 5.14)"};
  return {true, fmt::format("a child cgroup with cgroup.kill can be made under {}{}", mount_point, own)};
}

}  // namespace

std::vector<SandboxLayerStatus> ProbeSandboxLayers(const SandboxProbeOptions& options) {
  const bool root = geteuid() == 0;
  std::vector<SandboxLayerStatus> layers;
  auto add = [&](std::string name, bool needed, Trial trial) {
    layers.push_back({std::move(name), trial.on, needed, std::move(trial.reason)});
  };
  Trial user = TryInChild([]() -> Trial {
    if (unshare(CLONE_NEWUSER) != 0) return {false, "unshare(CLONE_NEWUSER) failed: " + ErrnoText(errno)};
    return {true, "unshare(CLONE_NEWUSER) works"};
  });
  if (root) user.reason += " (not needed as root: the other namespaces are made with root's privilege, then uid 65534)";
  add("user namespace", !root, std::move(user));
  add("PID namespace", true, TryPidNamespace());
  add("network namespace", true, TryUnshare(CLONE_NEWNET, "CLONE_NEWNET"));
  add("IPC namespace", true, TryUnshare(CLONE_NEWIPC, "CLONE_NEWIPC"));
  add("uid drop", root, TryUidDrop());
  add("parent-death signal", true, TryPrctlFlag(PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, SIGKILL, "PR_SET_PDEATHSIG"));
  add("no_new_privs", true, TryPrctlFlag(PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, 1, "PR_SET_NO_NEW_PRIVS"));
  add("landlock", true, TryLandlock());
  add("seccomp", true, TrySeccomp());
  add("cgroup v2 delegation", false, TryCgroupDelegation());
  Trial relro;
  if (options.runner_path.empty()) {
    relro.reason = "no runner binary given";
  } else if (absl::StatusOr<ElfHardening> elf = ReadElfHardening(options.runner_path); !elf.ok()) {
    relro.reason = std::string(elf.status().message());
  } else {
    relro = {elf->full_relro(), fmt::format("{}: {}", options.runner_path, elf->ToString())};
  }
  add("full RELRO of the runner", true, std::move(relro));
  return layers;
}

bool AllNeededLayersOn(const std::vector<SandboxLayerStatus>& layers) {
  for (const SandboxLayerStatus& layer : layers) {
    if (layer.needed && !layer.on) return false;
  }
  return true;
}

bool MissingLayersAllowed() {
  const char* allowed = std::getenv("SPARSEDITTO_ALLOW_MISSING_LAYERS");
  return allowed != nullptr && std::string(allowed) == "1";
}

std::string DescribeMissingLayers(const std::vector<SandboxLayerStatus>& layers) {
  std::string out;
  for (const SandboxLayerStatus& layer : layers) {
    if (!layer.needed || layer.on) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{} ({})", layer.name, layer.reason);
  }
  return out;
}

absl::Status CheckNeededLayers(const std::vector<SandboxLayerStatus>& layers, bool allow_missing) {
  if (allow_missing || AllNeededLayersOn(layers)) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format(
      "sandbox layers missing on this machine: {}. Untrusted candidates are not compiled or run without them "
      "(`sparseditto doctor` lists every layer); set SPARSEDITTO_ALLOW_MISSING_LAYERS=1 to accept that",
      DescribeMissingLayers(layers)));
}

}  // namespace sparseditto
