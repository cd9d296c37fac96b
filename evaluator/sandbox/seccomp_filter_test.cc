#include "evaluator/sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>

#include "common/subprocess.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/sandbox_testing.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

// Runs `body` in a forked child (the filter cannot be removed, so never in the test process) and returns
// its message: "" for success, "skip: ..." when seccomp is not available, anything else a failure.
struct ChildEnd {
  std::string message;
  int status = 0;
};
ChildEnd InChild(const std::function<std::string()>& body) {
  int fds[2];
  EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string message = body();
    (void)!write(fds[1], message.data(), message.size());
    _exit(0);
  }
  close(fds[1]);
  ChildEnd end;
  char buffer[512];
  ssize_t got;
  while ((got = read(fds[0], buffer, sizeof buffer)) > 0) end.message.append(buffer, static_cast<size_t>(got));
  close(fds[0]);
  waitpid(pid, &end.status, 0);
  return end;
}

std::string Install(const CandidateSeccompOptions& options = {}) {
  absl::Status installed = InstallCandidateSeccomp(options);
  if (absl::IsUnavailable(installed)) return "skip: " + std::string(installed.message());
  if (!installed.ok()) return "install failed: " + installed.ToString();
  return "";
}

void* ReadOneByte(void*) {
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  char byte;
  const bool ok = fd >= 0 && read(fd, &byte, 1) == 1;
  if (fd >= 0) close(fd);
  return reinterpret_cast<void*>(ok ? 1 : 0);
}

// A denied call and the errno it must fail with.
struct DeniedCase {
  const char* name;
  std::function<long()> call;  // returns the syscall's result (-1 with errno on failure)
  int expected_errno;
};

TEST(SeccompFilterTest, DeniesProcessCreationNetworkAndDebuggingButAllowsThreadsAndReads) {
  const std::vector<DeniedCase> cases = {
      {"execve", [] {
         char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
         return static_cast<long>(execve("/bin/true", argv, nullptr));
       }, EPERM},
      {"execveat", [] { return syscall(SYS_execveat, AT_FDCWD, "/bin/true", nullptr, nullptr, 0); }, EPERM},
      {"fork", [] { return static_cast<long>(fork()); }, EPERM},
      {"vfork-like clone", [] { return syscall(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0); }, EPERM},
      {"clone3", [] { return syscall(SYS_clone3, nullptr, 0); }, ENOSYS},
      {"thread clone with a new namespace",
       [] { return syscall(SYS_clone, CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | CLONE_NEWNET, 0, 0, 0, 0); }, EPERM},
      {"socket", [] { return static_cast<long>(socket(AF_INET, SOCK_STREAM, 0)); }, EPERM},
      {"socket unix", [] { return static_cast<long>(socket(AF_UNIX, SOCK_STREAM, 0)); }, EPERM},
      {"connect", [] { return static_cast<long>(connect(0, nullptr, 0)); }, EPERM},
      {"ptrace", [] { return syscall(SYS_ptrace, 0 /*PTRACE_TRACEME*/, 0, 0, 0); }, EPERM},
      {"process_vm_readv", [] { return syscall(SYS_process_vm_readv, 1, nullptr, 0, nullptr, 0, 0); }, EPERM},
      {"kill of another process", [] { return static_cast<long>(kill(1, 0)); }, EPERM},
      {"mount", [] { return syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, nullptr); }, EPERM},
      {"unshare", [] { return static_cast<long>(unshare(CLONE_NEWUSER)); }, EPERM},
      {"setns", [] { return syscall(SYS_setns, 0, 0); }, EPERM},
      {"personality", [] { return syscall(SYS_personality, 0xffffffff); }, EPERM},
      {"bpf", [] { return syscall(SYS_bpf, 0, nullptr, 0); }, EPERM},
      {"perf_event_open", [] { return syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0); }, EPERM},
      {"memfd_create", [] { return syscall(SYS_memfd_create, "x", 0); }, EPERM},
      {"io_uring_setup", [] { return syscall(SYS_io_uring_setup, 1, nullptr); }, EPERM},
      {"prctl other than the thread name", [] { return static_cast<long>(syscall(SYS_prctl, 1 /*PR_SET_PDEATHSIG*/, 9, 0, 0, 0)); }, EPERM},
      {"setrlimit through prlimit64", [] {
         static rlimit limit{64, 64};
         return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &limit, nullptr);
       }, EPERM},
  };
  // A thread that exists before the filter is installed gets it too (TSYNC): it tries socket() after.
  ChildEnd end = InChild([&]() -> std::string {
    int go[2];
    if (pipe(go) != 0) return "pipe failed";
    static int go_read;
    go_read = go[0];
    pthread_t early;
    if (pthread_create(&early, nullptr, [](void*) -> void* {
          char byte;
          if (read(go_read, &byte, 1) != 1) return reinterpret_cast<void*>(2);
          const int sock = socket(AF_INET, SOCK_DGRAM, 0);
          return reinterpret_cast<void*>(sock < 0 && errno == EPERM ? 1 : 0);
        }, nullptr) != 0) {
      return "could not start the early thread";
    }
    if (std::string installed = Install(); !installed.empty()) return installed;
    std::string failures;
    for (const DeniedCase& c : cases) {
      errno = 0;
      const long rc = c.call();
      if (rc != -1 || errno != c.expected_errno) {
        failures += std::string(c.name) + ": rc " + std::to_string(rc) + " errno " + std::to_string(errno) + "; ";
      }
    }
    // Allowed: a new thread that reads a file, signalling ourselves, reading our limits.
    pthread_t late;
    void* late_ok = nullptr;
    if (pthread_create(&late, nullptr, ReadOneByte, nullptr) != 0 || pthread_join(late, &late_ok) != 0 ||
        late_ok != reinterpret_cast<void*>(1)) {
      failures += "a thread created after the filter could not read a file; ";
    }
    if (kill(getpid(), 0) != 0) failures += "kill(getpid(), 0) was refused; ";
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) failures += "getrlimit was refused; ";
    void* mapped = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED || mprotect(mapped, 4096, PROT_READ) != 0) failures += "mmap/mprotect were refused; ";
    (void)!write(go[1], "x", 1);
    void* early_ok = nullptr;
    pthread_join(early, &early_ok);
    if (early_ok != reinterpret_cast<void*>(1)) failures += "a thread that existed before the filter was not filtered; ";
    return failures;
  });
  if (end.message.rfind("skip: ", 0) == 0) GTEST_SKIP() << end.message;
  EXPECT_TRUE(WIFEXITED(end.status)) << "child status " << end.status;
  EXPECT_EQ(end.message, "");
}

TEST(SeccompFilterTest, KillOnDenialKillsWithSigsys) {
  ChildEnd end = InChild([]() -> std::string {
    CandidateSeccompOptions options;
    options.kill_on_denial = true;
    if (std::string installed = Install(options); !installed.empty()) return installed;
    (void)socket(AF_INET, SOCK_STREAM, 0);
    return "socket() returned instead of killing the process";
  });
  if (end.message.rfind("skip: ", 0) == 0) GTEST_SKIP() << end.message;
  EXPECT_EQ(end.message, "");
  ASSERT_TRUE(WIFSIGNALED(end.status)) << end.status;
  EXPECT_EQ(WTERMSIG(end.status), SIGSYS);
}

TEST(SeccompFilterTest, ExtraSyscallsAreAllowedAndUnknownNamesRefused) {
  ChildEnd end = InChild([]() -> std::string {
    CandidateSeccompOptions bad;
    bad.extra_allowed_syscalls = {"no_such_syscall"};
    absl::Status refused = InstallCandidateSeccomp(bad);
    if (!absl::IsInvalidArgument(refused) && !absl::IsUnavailable(refused)) return "unknown name: " + refused.ToString();
    CandidateSeccompOptions options;
    options.extra_allowed_syscalls = {"socket"};
    if (std::string installed = Install(options); !installed.empty()) return installed;
    const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    return sock >= 0 ? "" : "socket() was refused although allowed";
  });
  if (end.message.rfind("skip: ", 0) == 0) GTEST_SKIP() << end.message;
  EXPECT_EQ(end.message, "");
}

// The candidate host's order (after CUDA init, stood in for by a running thread): InstallLandlock, then
// InstallCandidateSeccomp, then dlopen of the candidate, whose constructor then runs confined.
TEST(SeccompFilterTest, TheCandidateHostOrderLetsTheCandidateLoadAndRunConfined) {
  if (absl::StatusOr<int> abi = LandlockAbiVersion(); !abi.ok()) GTEST_SKIP() << abi.status().message();
  sandbox_testing::TempFolder candidate("seccomp-host-test");
  ASSERT_FALSE(candidate.path.empty());
  std::ofstream(candidate.path + "/candidate.c")
      << "#include <stdio.h>\n#include <unistd.h>\n#include <sys/socket.h>\n"
         "int constructor_fork = 0, constructor_passwd = 0, constructor_socket = 0;\n"
         "__attribute__((constructor)) static void Payload(void) {\n"
         "  constructor_fork = fork();\n"
         "  constructor_passwd = fopen(\"/etc/passwd\", \"r\") != NULL;\n"
         "  constructor_socket = socket(AF_INET, SOCK_STREAM, 0);\n"
         "}\n"
         "int sparseditto_answer(void) { return 42; }\n";
  SpawnOptions cc;
  cc.argv = {"cc", "-shared", "-fPIC", "-o", candidate.path + "/candidate.so", candidate.path + "/candidate.c"};
  cc.merge_stderr_into_stdout = true;
  absl::StatusOr<CommandResult> built = RunCommand(cc, 60);
  if (!built.ok()) GTEST_SKIP() << "no C compiler: " << built.status();
  ASSERT_TRUE(built->outcome.success()) << built->stdout_output.bytes;

  ChildEnd end = InChild([&]() -> std::string {
    pthread_t worker;  // a thread started before the layers, like the CUDA runtime's
    pthread_create(&worker, nullptr, [](void*) -> void* {
      pause();
      return nullptr;
    }, nullptr);
    absl::Status landlock = InstallLandlock(CandidateHostLandlockRules("/proc/self/exe", candidate.path));
    if (!landlock.ok()) return "InstallLandlock: " + landlock.ToString();
    if (std::string installed = Install(); !installed.empty()) return installed;
    void* library = dlopen((candidate.path + "/candidate.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return std::string("dlopen failed: ") + dlerror();
    auto answer = reinterpret_cast<int (*)()>(dlsym(library, "sparseditto_answer"));
    std::string failures;
    if (answer == nullptr || answer() != 42) failures += "the candidate's function did not run; ";
    if (*static_cast<int*>(dlsym(library, "constructor_fork")) != -1) failures += "fork worked in the constructor; ";
    if (*static_cast<int*>(dlsym(library, "constructor_passwd")) != 0) failures += "/etc/passwd was readable; ";
    if (*static_cast<int*>(dlsym(library, "constructor_socket")) != -1) failures += "socket() worked; ";
    return failures;
  });
  if (end.message.rfind("skip: ", 0) == 0) GTEST_SKIP() << end.message;
  EXPECT_EQ(end.message, "");
}

}  // namespace
}  // namespace sparseditto
