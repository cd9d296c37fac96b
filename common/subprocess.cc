#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "common/owned_temp_folders.h"
#include "common/status_macros.h"
#include "evaluator/sandbox/sandbox_child.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";
constexpr std::string_view kHomePrefix = "sparseditto-home-";  // + <pid of ours>-XXXXXX, under the temp dir

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

std::string ErrnoText(int error) { return fmt::format("{} ({})", strerrordesc_np(error), error); }

absl::StatusOr<std::string> ResolveProgram(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return program;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return absl::NotFoundError(fmt::format("program '{}' not found in PATH={}", program, path));
}

// What the child reports through the error pipe when it cannot reach execve.
// Sandbox steps (SandboxStep, >= 100) travel the same way; a kStageSandboxSkipped record (error = the
// mask of layers let go) is not a failure and is followed by the exec.
enum ChildStage : int { kStageFds = 1, kStageChdir, kStageRlimit, kStageExec, kStageSandboxSkipped = 99 };
struct ChildFailure {
  int stage;
  int error;
};
const char* StageName(int stage) {
  if (const char* name = SandboxStepName(stage)) return name;
  switch (stage) {
    case kStageFds: return "setting up fds";
    case kStageChdir: return "chdir";
    case kStageRlimit: return "setrlimit";
    default: return "execve";
  }
}

// One fd to install in the child: `source` (ours, pre-fork) becomes child fd `target`.
struct FdMapping {
  int source;
  int target;
};

struct ChildPlan {
  const char* program;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<FdMapping> fds;
  int max_target;
  int error_fd;
  const char* working_directory;  // nullptr: stay
  std::vector<std::pair<int, rlimit>> limits;
  int niceness;  // the child's, absolute (ours plus ResourceLimits::nice_increment)
  bool renice;
  int fallback_max_fd;
  const PreparedSandbox* sandbox;  // nullptr: none
};

// Closes every fd from `low` up except those in `keep` (ascending, each >= low).
void CloseFrom(int low, const int* keep, int kept, int fallback_max_fd) {
  int start = low;
  bool ranges_ok = true;
  for (int i = 0; i < kept; ++i) {
    if (keep[i] > start) ranges_ok &= close_range(start, keep[i] - 1, 0) == 0;
    start = keep[i] + 1;
  }
  ranges_ok &= close_range(start, ~0U, 0) == 0;
  if (ranges_ok) return;
  for (int fd = low; fd < fallback_max_fd; ++fd) {
    bool is_kept = false;
    for (int i = 0; i < kept; ++i) is_kept |= keep[i] == fd;
    if (!is_kept) close(fd);
  }
}

// Runs in the forked child: async-signal-safe calls only. Never returns.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  auto fail = [&](int stage, int fd) {
    ChildFailure failure{stage, errno};
    if (fd >= 0) (void)!write(fd, &failure, sizeof failure);
    _exit(127);
  };
  setpgid(0, 0);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  // Move every source above the targets first, so no dup2 overwrites a source still needed.
  const int high = plan.max_target + 1;
  const int error_fd = fcntl(plan.error_fd, F_DUPFD_CLOEXEC, high);
  if (error_fd < 0) fail(kStageFds, plan.error_fd);
  int landlock_fd = -1;
  if (plan.sandbox != nullptr && plan.sandbox->landlock_fd() >= 0) {
    landlock_fd = fcntl(plan.sandbox->landlock_fd(), F_DUPFD_CLOEXEC, high);
    if (landlock_fd < 0) fail(kStageFds, error_fd);
  }
  int moved[16];
  for (size_t i = 0; i < plan.fds.size(); ++i) {
    moved[i] = fcntl(plan.fds[i].source, F_DUPFD_CLOEXEC, high);
    if (moved[i] < 0) fail(kStageFds, error_fd);
  }
  for (size_t i = 0; i < plan.fds.size(); ++i) {
    if (dup2(moved[i], plan.fds[i].target) < 0) fail(kStageFds, error_fd);  // clears close-on-exec
  }
  for (int fd = 0; fd < high; ++fd) {
    bool is_target = false;
    for (const FdMapping& m : plan.fds) is_target |= m.target == fd;
    if (!is_target) close(fd);
  }
  int keep[2] = {error_fd, landlock_fd};
  int kept = landlock_fd >= 0 ? 2 : 1;
  if (kept == 2 && keep[1] < keep[0]) std::swap(keep[0], keep[1]);
  CloseFrom(high, keep, kept, plan.fallback_max_fd);
  uint32_t skipped = 0;
  if (plan.sandbox != nullptr) {
    const int step = plan.sandbox->EnterSandboxInChild(error_fd, &skipped);
    if (step != kStepNone) fail(step, error_fd);
  }
  if (plan.working_directory != nullptr && chdir(plan.working_directory) != 0) fail(kStageChdir, error_fd);
  for (const auto& [resource, limit] : plan.limits) {
    if (setrlimit(resource, &limit) != 0) fail(kStageRlimit, error_fd);
  }
  if (plan.renice && setpriority(PRIO_PROCESS, 0, plan.niceness) != 0) fail(kStageRlimit, error_fd);
  if (plan.sandbox != nullptr) {
    const int step = plan.sandbox->FinishSandboxInChild(landlock_fd, &skipped);
    if (step != kStepNone) fail(step, error_fd);
    if (landlock_fd >= 0) close(landlock_fd);
    if (skipped != 0) {
      ChildFailure record{kStageSandboxSkipped, static_cast<int>(skipped)};
      (void)!write(error_fd, &record, sizeof record);
    }
  }
  execve(plan.program, plan.argv.data(), plan.envp.data());
  fail(kStageExec, error_fd);
  _exit(127);
}

absl::Status MakePipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError("pipe2: " + ErrnoText(errno));
  return absl::OkStatus();
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

Deadline DeadlineAfter(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("SIG{}", signal);
}

std::string ExitOutcome::ToString() const {
  switch (kind) {
    case Kind::kExited: return fmt::format("exited with code {}", exit_code);
    case Kind::kSignaled: return fmt::format("killed by signal {} ({})", signal, SignalName(signal));
    case Kind::kTimedOut: return "timed out (killed by us)";
    case Kind::kKilled: return "killed by the supervisor";
  }
  return "unknown outcome";
}

absl::StatusOr<int64_t> ReadResidentBytes(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  if (!status) return absl::NotFoundError(fmt::format("process {} is gone", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    char* end = nullptr;
    const long long kib = std::strtoll(line.c_str() + 6, &end, 10);
    if (end == line.c_str() + 6) return absl::InternalError("unparsable VmRSS line: " + line);
    return static_cast<int64_t>(kib) * 1024;
  }
  return absl::NotFoundError(fmt::format("process {} has no VmRSS (exited)", pid));
}

absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("Spawn: empty argv");
  if (options.pipes.size() > 13) return absl::InvalidArgumentError("Spawn: too many pipes");
  if (options.limits.nice_increment < 0) return absl::InvalidArgumentError("Spawn: negative nice_increment");
  std::map<std::string, std::string> env = {{"PATH", kDefaultPath}, {"LANG", "C"}};
  for (const std::string& name : options.inherit_variables) {
    if (const char* value = std::getenv(name.c_str())) env[name] = value;
  }
  for (const auto& [name, value] : options.environment) env[name] = value;
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return absl::InvalidArgumentError(fmt::format("Spawn: bad variable name '{}'", name));
    }
  }
  SD_ASSIGN_OR_RETURN(const std::string program, ResolveProgram(options.argv[0], env["PATH"]));

  std::optional<PreparedSandbox> sandbox;
  if (options.sandbox) {
    absl::StatusOr<PreparedSandbox> prepared = PrepareSandbox(*options.sandbox);
    if (!prepared.ok()) return prepared.status();
    sandbox.emplace(std::move(*prepared));
  }

  std::unique_ptr<ChildProcess> child(new ChildProcess);
  child->max_captured_bytes_ = options.max_captured_bytes;
  if (!env.count("HOME")) {
    static std::once_flag swept;  // the private HOMEs of processes killed before they could remove them
    std::call_once(swept, [] { (void)SweepOrphanedTempFolders(std::filesystem::temp_directory_path(), {kHomePrefix}); });
    SD_ASSIGN_OR_RETURN(const std::filesystem::path folder,
                        MakeOwnedTempFolder(std::filesystem::temp_directory_path(), kHomePrefix));
    child->private_home_ = folder.string();
    std::string home = folder.string();
    if (sandbox && sandbox->run_as_uid() != static_cast<uid_t>(-1)) {
      // The sandbox's uid gets home/ inside; the folder itself stays ours, so the sweep (this user's
      // folders only) still finds it.
      home += "/home";
      if (mkdir(home.c_str(), 0700) != 0 || chown(home.c_str(), sandbox->run_as_uid(), sandbox->run_as_gid()) != 0) {
        return absl::InternalError(fmt::format("making {} for the sandbox: {}", home, ErrnoText(errno)));
      }
      chmod(folder.c_str(), 0711);
    }
    env["HOME"] = home;
  }

  // Our pipe ends go into `child` as soon as they exist, so every error path closes them.
  std::vector<int> child_ends;  // closed after fork
  auto close_child_ends = [&] {
    for (int& fd : child_ends) CloseFd(fd);
  };
  ChildPlan plan{};
  int max_target = 2;
  bool has_stdin_pipe = false;
  for (const ChildPipe& p : options.pipes) {
    if (p.child_fd < 0 || p.child_fd == 1 || p.child_fd == 2 || child->parent_fd(p.child_fd) >= 0) {
      close_child_ends();
      return absl::InvalidArgumentError(fmt::format("Spawn: bad or repeated pipe fd {}", p.child_fd));
    }
    int fds[2];
    if (absl::Status s = MakePipe(fds); !s.ok()) return close_child_ends(), s;
    const bool to_child = p.direction == ChildPipe::Direction::kToChild;
    child->pipes_.push_back({p.child_fd, to_child ? fds[1] : fds[0], p.direction});
    child_ends.push_back(to_child ? fds[0] : fds[1]);
    plan.fds.push_back({child_ends.back(), p.child_fd});
    SetNonBlocking(child->pipes_.back().fd);
    max_target = std::max(max_target, p.child_fd);
    has_stdin_pipe |= p.child_fd == 0;
  }
  for (const InheritedFd& f : options.inherited_fds) {
    bool taken = child->parent_fd(f.child_fd) >= 0;
    for (const FdMapping& m : plan.fds) taken |= m.target == f.child_fd;
    if (f.fd < 0 || f.child_fd < 3 || taken || fcntl(f.fd, F_GETFD) < 0) {
      close_child_ends();
      return absl::InvalidArgumentError(fmt::format("Spawn: bad inherited fd {} (as the child's {})", f.fd, f.child_fd));
    }
    plan.fds.push_back({f.fd, f.child_fd});  // not one of child_ends: ours stays open
    max_target = std::max(max_target, f.child_fd);
  }
  if (plan.fds.size() > 12) {  // RunChild moves them through a fixed array (the 3 standard fds join them)
    close_child_ends();
    return absl::InvalidArgumentError(fmt::format("Spawn: {} pipes and inherited fds (at most 12)", plan.fds.size()));
  }
  int out[2], err[2] = {-1, -1}, report[2];
  if (absl::Status s = MakePipe(out); !s.ok()) return close_child_ends(), s;
  child->stdout_fd_ = out[0];
  child_ends.push_back(out[1]);
  plan.fds.push_back({out[1], 1});
  if (options.merge_stderr_into_stdout) {
    plan.fds.push_back({out[1], 2});
  } else {
    if (absl::Status s = MakePipe(err); !s.ok()) return close_child_ends(), s;
    child->stderr_fd_ = err[0];
    child_ends.push_back(err[1]);
    plan.fds.push_back({err[1], 2});
  }
  if (!has_stdin_pipe) {
    child_ends.push_back(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (child_ends.back() < 0) return close_child_ends(), absl::InternalError("open /dev/null failed");
    plan.fds.push_back({child_ends.back(), 0});
  }
  if (absl::Status s = MakePipe(report); !s.ok()) return close_child_ends(), s;
  child_ends.push_back(report[1]);
  SetNonBlocking(child->stdout_fd_);
  if (child->stderr_fd_ >= 0) SetNonBlocking(child->stderr_fd_);

  // Everything the child needs is built before fork: it may only make async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  plan.program = program.c_str();
  for (const std::string& arg : options.argv) plan.argv.push_back(const_cast<char*>(arg.c_str()));
  plan.argv.push_back(nullptr);
  for (std::string& entry : env_strings) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  plan.max_target = max_target;
  plan.error_fd = report[1];
  plan.working_directory = options.working_directory.empty() ? nullptr : options.working_directory.c_str();
  const ResourceLimits& limits = options.limits;
  auto add_limit = [&](int resource, std::optional<int64_t> value) {
    if (value) plan.limits.push_back({resource, rlimit{static_cast<rlim_t>(*value), static_cast<rlim_t>(*value)}});
  };
  add_limit(RLIMIT_CPU, limits.cpu_seconds);
  add_limit(RLIMIT_FSIZE, limits.file_size_bytes);
  add_limit(RLIMIT_AS, limits.address_space_bytes);
  add_limit(RLIMIT_NOFILE, limits.open_files);
  if (!limits.core_dumps) add_limit(RLIMIT_CORE, 0);
  plan.renice = limits.nice_increment != 0;
  if (plan.renice) {
    errno = 0;
    const int ours = getpriority(PRIO_PROCESS, 0);  // -1 is a valid niceness: errno tells
    if (errno != 0) return absl::InternalError("getpriority: " + ErrnoText(errno));
    plan.niceness = std::min(19, ours + limits.nice_increment);
  }
  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  plan.fallback_max_fd = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 65536));
  plan.sandbox = sandbox ? &*sandbox : nullptr;

  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close_child_ends();
    CloseFd(report[0]);
    return absl::InternalError("fork: " + ErrnoText(error));
  }
  if (pid == 0) RunChild(plan);
  setpgid(pid, pid);  // also here, so the group exists before any kill of ours; EACCES after exec is fine
  child->pid_ = pid;
  child->pid_namespace_ = sandbox && sandbox->pid_namespace();
  child->sandbox_skipped_ = sandbox ? sandbox->skipped_before_fork() : 0;
  close_child_ends();
  ChildFailure failure{};
  ssize_t got;
  for (;;) {
    do {
      got = read(report[0], &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(sizeof failure) || failure.stage != kStageSandboxSkipped) break;
    child->sandbox_skipped_ |= static_cast<uint32_t>(failure.error);
  }
  CloseFd(report[0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    (void)child->TryReap(0);
    return absl::FailedPreconditionError(fmt::format("Spawn {}: {} failed: {}", program,
                                                     StageName(failure.stage), ErrnoText(failure.error)));
  }
  child->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // -1: poll instead
  return child;
}

absl::StatusOr<int64_t> ChildProcess::ResidentBytes() const {
  if (!pid_namespace_) return ReadResidentBytes(pid_);
  pid_t pid = pid_;
  for (int level = 0; level < 2; ++level) {  // mirror -> init -> program
    std::ifstream children(fmt::format("/proc/{0}/task/{0}/children", pid));
    pid_t next = 0;
    if (!(children >> next) || next <= 0) return absl::NotFoundError(fmt::format("process {} has no child (exited)", pid));
    pid = next;
  }
  return ReadResidentBytes(pid);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !outcome_) {
    KillGroup();
    (void)TryReap(0);
  }
  CloseFd(pidfd_);
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  for (ParentPipe& p : pipes_) CloseFd(p.fd);
  if (!private_home_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(private_home_, ignored);
  }
}

ChildProcess::ParentPipe* ChildProcess::FindPipe(int child_fd) {
  for (ParentPipe& p : pipes_) {
    if (p.child_fd == child_fd) return &p;
  }
  return nullptr;
}

int ChildProcess::parent_fd(int child_fd) const {
  for (const ParentPipe& p : pipes_) {
    if (p.child_fd == child_fd) return p.fd;
  }
  return -1;
}

void ChildProcess::ClosePipe(int child_fd) {
  if (ParentPipe* p = FindPipe(child_fd)) CloseFd(p->fd);
}

void ChildProcess::KillGroup() {
  if (pid_ <= 0 || outcome_) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
}

void ChildProcess::Kill() {
  if (outcome_) return;
  killed_by_supervisor_ = true;
  KillGroup();
}

// Notices the leader's exit without reaping it (WNOWAIT), kills the rest of its group while its pid
// still names the group, then reaps it.
absl::Status ChildProcess::TryReap(int wait_flags) {
  if (outcome_ || pid_ <= 0) return absl::OkStatus();
  siginfo_t info{};
  while (waitid(P_PID, pid_, &info, WEXITED | WNOWAIT | wait_flags) != 0) {
    if (errno != EINTR) return absl::InternalError(fmt::format("waitid {}: {}", pid_, ErrnoText(errno)));
  }
  if (info.si_pid == 0) return absl::OkStatus();  // still running
  kill(-pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(fmt::format("waitpid {}: {}", pid_, ErrnoText(errno)));
  }
  ExitOutcome outcome;
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else {
    outcome.signal = WTERMSIG(status);
    outcome.kind = ExitOutcome::Kind::kSignaled;
    if (outcome.signal == SIGKILL && timed_out_) outcome.kind = ExitOutcome::Kind::kTimedOut;
    if (outcome.signal == SIGKILL && killed_by_supervisor_) outcome.kind = ExitOutcome::Kind::kKilled;
  }
  outcome_ = outcome;
  CloseFd(pidfd_);
  DrainAfterExit();
  return absl::OkStatus();
}

}  // namespace sparseditto
