// Spawn (common/subprocess.h) with a SandboxPolicy: the layers seen from inside the child, outcomes
// mirrored exactly, and the whole tree killed, a descendant that called setsid() included.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "common/subprocess.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/sandbox_child.h"
#include "evaluator/sandbox/sandbox_probe.h"
#include "evaluator/sandbox/sandbox_testing.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using sandbox_testing::TempFolder;

// The probe's verdict for each layer, computed once.
const std::map<std::string, SandboxLayerStatus>& Layers() {
  static const auto* layers = [] {
    auto* map = new std::map<std::string, SandboxLayerStatus>;
    for (SandboxLayerStatus& layer : ProbeSandboxLayers({})) (*map)[layer.name] = layer;
    return map;
  }();
  return *layers;
}

// Empty when every named layer is on here; else why not (for GTEST_SKIP).
std::string MissingLayer(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const SandboxLayerStatus& layer = Layers().at(name);
    if (layer.needed && !layer.on) return std::string(name) + " is not available here: " + layer.reason;
    if (!layer.needed && std::string(name) == "user namespace") continue;  // not used as root
  }
  return "";
}
const std::initializer_list<const char*> kSpawnLayers = {"user namespace", "PID namespace", "network namespace",
                                                         "IPC namespace", "uid drop", "parent-death signal",
                                                         "no_new_privs"};

CommandResult RunSandboxed(const std::string& script, const SandboxPolicy& policy = {}, double timeout = 20) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.sandbox = policy;
  absl::StatusOr<CommandResult> result = RunCommand(options, timeout);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : CommandResult{};
}

// Is a process whose command line holds `token` alive (not a zombie) anywhere on the machine?
bool ProcessWithTokenAlive(const std::string& token) {
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (text.find(token) == std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("State:", 0) == 0 && line.find('Z') == std::string::npos) return true;
    }
  }
  return false;
}

bool WaitUntil(const std::function<bool()>& condition, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

// A sleep with a command line unique to this run (a fractional duration nobody else uses).
std::string UniqueSleep() {
  return "1000." + std::to_string(getpid()) + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
}

TEST(SandboxSpawnTest, TheChildSeesItsLayers) {
  if (std::string missing = MissingLayer(kSpawnLayers); !missing.empty()) GTEST_SKIP() << missing;
  struct Case {
    const char* what;
    std::string script;
    std::string expected_stdout;
  };
  const bool root = geteuid() == 0;
  const std::vector<Case> cases = {
      {"pid 2 of a new PID namespace", "echo $$", "2\n"},
      {"no network but loopback", "tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' '", "lo\n"},
      {"no_new_privs", "grep NoNewPrivs /proc/self/status | tr -d '\\t '", "NoNewPrivs:1\n"},
      {"uid", "id -u", root ? "65534\n" : std::to_string(geteuid()) + "\n"},
      {"no supplementary groups as root", root ? "id -G" : "echo none", root ? "65534\n" : "none\n"},
  };
  for (const Case& c : cases) {
    const CommandResult result = RunSandboxed(c.script);
    EXPECT_TRUE(result.outcome.success()) << c.what << ": " << result.outcome.ToString() << " " << result.stderr_output.bytes;
    EXPECT_EQ(result.stdout_output.bytes, c.expected_stdout) << c.what;
  }
}

TEST(SandboxSpawnTest, OutcomesAreThoseOfTheProgram) {
  if (std::string missing = MissingLayer(kSpawnLayers); !missing.empty()) GTEST_SKIP() << missing;
  struct Case {
    std::string script;
    ExitOutcome::Kind kind;
    int code_or_signal;
  };
  const std::vector<Case> cases = {
      {"exit 0", ExitOutcome::Kind::kExited, 0},
      {"exit 7", ExitOutcome::Kind::kExited, 7},
      {"kill -SEGV $$", ExitOutcome::Kind::kSignaled, SIGSEGV},
      {"kill -ABRT $$", ExitOutcome::Kind::kSignaled, SIGABRT},
      {"kill -TERM $$", ExitOutcome::Kind::kSignaled, SIGTERM},
  };
  for (const Case& c : cases) {
    const CommandResult result = RunSandboxed(c.script);
    EXPECT_EQ(result.outcome.kind, c.kind) << c.script << ": " << result.outcome.ToString();
    EXPECT_EQ(c.kind == ExitOutcome::Kind::kExited ? result.outcome.exit_code : result.outcome.signal,
              c.code_or_signal)
        << c.script;
  }
  // An exec failure inside the sandbox is still Spawn's FailedPrecondition naming execve.
  SpawnOptions options;
  options.argv = {"/nonexistent/program"};
  options.sandbox = SandboxPolicy{};
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(options);
  ASSERT_FALSE(child.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(child.status())) << child.status();
  EXPECT_NE(child.status().message().find("execve"), std::string::npos) << child.status();
}

// The whole tree dies at the deadline and on Kill(), a grandchild that left the group with setsid().
TEST(SandboxSpawnTest, TimeoutAndKillTakeADescendantThatCalledSetsid) {
  if (std::string missing = MissingLayer(kSpawnLayers); !missing.empty()) GTEST_SKIP() << missing;
  for (const bool use_kill : {false, true}) {
    const std::string token = UniqueSleep();
    SpawnOptions options;
    options.argv = {"/bin/sh", "-c", "setsid sleep " + token + " & sleep 1000"};
    options.sandbox = SandboxPolicy{};
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(options);
    ASSERT_TRUE(child.ok()) << child.status();
    ASSERT_TRUE(WaitUntil([&] { return ProcessWithTokenAlive(token); }, 10)) << "the setsid grandchild never started";
    if (use_kill) (*child)->Kill();
    absl::StatusOr<ExitOutcome> outcome = (*child)->WaitFor(DeadlineAfter(use_kill ? 10 : 0.5));
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->kind, use_kill ? ExitOutcome::Kind::kKilled : ExitOutcome::Kind::kTimedOut);
    EXPECT_TRUE(WaitUntil([&] { return !ProcessWithTokenAlive(token); }, 5))
        << "the grandchild that called setsid() outlived the sandbox (" << (use_kill ? "Kill" : "timeout") << ")";
  }
}

// Pid of the live process whose command line holds `token`, or 0.
pid_t PidWithToken(const std::string& token) {
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (text.find(token) != std::string::npos) return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

// ResidentBytes() is the program's, found under the mirror and the namespace's init.
TEST(SandboxSpawnTest, ResidentBytesAreThoseOfTheProgram) {
  if (std::string missing = MissingLayer(kSpawnLayers); !missing.empty()) GTEST_SKIP() << missing;
  const std::string token = UniqueSleep();
  SpawnOptions options;
  options.argv = {"/bin/sleep", token};
  options.sandbox = SandboxPolicy{};
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(options);
  ASSERT_TRUE(child.ok()) << child.status();
  pid_t program = 0;
  ASSERT_TRUE(WaitUntil([&] { return (program = PidWithToken(token)) != 0; }, 10));
  EXPECT_NE(program, (*child)->pid());
  // Compared once the program sleeps: right after exec its loader is still mapping pages, and under
  // load the two reads below could fall on either side of that (seen in CI).
  auto sleeping = [&] {
    std::ifstream stat("/proc/" + std::to_string(program) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'S';
  };
  ASSERT_TRUE(WaitUntil(sleeping, 10));
  absl::StatusOr<int64_t> rss = (*child)->ResidentBytes();
  absl::StatusOr<int64_t> expected = ReadResidentBytes(program);
  ASSERT_TRUE(rss.ok()) << rss.status();
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(*rss, *expected);
}

// kill -9 of the supervisor: the parent-death signal takes the sandbox and its namespace.
TEST(SandboxSpawnTest, NoChildOutlivesASupervisorKilledWithSigkill) {
  if (std::string missing = MissingLayer(kSpawnLayers); !missing.empty()) GTEST_SKIP() << missing;
  const std::string token = UniqueSleep();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t supervisor = fork();
  if (supervisor == 0) {
    SpawnOptions options;
    options.argv = {"/bin/sh", "-c", "setsid sleep " + token + " & sleep 1000"};
    options.sandbox = SandboxPolicy{};
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(options);
    if (!child.ok()) _exit(1);
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the supervisor could not spawn";
  close(ready[0]);
  ASSERT_TRUE(WaitUntil([&] { return ProcessWithTokenAlive(token); }, 10));
  kill(supervisor, SIGKILL);
  waitpid(supervisor, nullptr, 0);
  EXPECT_TRUE(WaitUntil([&] { return !ProcessWithTokenAlive(token); }, 5)) << "a sandboxed process outlived kill -9 of its supervisor";
}

TEST(SandboxSpawnTest, LandlockKeepsTheChildToItsPaths) {
  if (std::string missing = MissingLayer({"landlock"}); !missing.empty()) GTEST_SKIP() << missing;
  TempFolder allowed, outside;
  std::ofstream(allowed.path + "/mine.txt") << "mine";
  std::ofstream(outside.path + "/secret.txt") << "secret";
  fs::permissions(allowed.path + "/mine.txt", fs::perms::all);
  fs::permissions(outside.path + "/secret.txt", fs::perms::all);
  SandboxPolicy policy;
  policy.landlock = ToolchainLandlockRules("");
  policy.landlock->read_write.push_back(allowed.path);
  ASSERT_TRUE(PrepareWritableFolder(allowed.path, policy).ok());
  const CommandResult mine = RunSandboxed("cat " + allowed.path + "/mine.txt && echo new > " + allowed.path + "/new.txt", policy);
  EXPECT_TRUE(mine.outcome.success()) << mine.stderr_output.bytes;
  EXPECT_EQ(mine.stdout_output.bytes, "mine");
  EXPECT_TRUE(fs::exists(allowed.path + "/new.txt"));
  for (const std::string& path : {outside.path + "/secret.txt", std::string("/etc/passwd")}) {
    const CommandResult secret = RunSandboxed("cat " + path, policy);
    EXPECT_FALSE(secret.outcome.success()) << path;
    EXPECT_EQ(secret.stdout_output.bytes, "") << path;
    EXPECT_NE(secret.stderr_output.bytes.find("Permission denied"), std::string::npos) << secret.stderr_output.bytes;
  }
}

// The candidate host's starting rules: it may read its candidate's folder and the libraries, execute
// only itself, and read nothing of /etc, /home, /root or /tmp beyond that.
TEST(SandboxSpawnTest, CandidateHostRulesLetTheHostReadItsCandidateAndExecuteOnlyItself) {
  if (std::string missing = MissingLayer({"landlock"}); !missing.empty()) GTEST_SKIP() << missing;
  TempFolder candidate, outside;
  std::ofstream(candidate.path + "/candidate.so") << "library";
  std::ofstream(outside.path + "/secret.txt") << "secret";
  fs::permissions(candidate.path + "/candidate.so", fs::perms::all);
  fs::permissions(outside.path + "/secret.txt", fs::perms::all);
  SandboxPolicy policy;
  policy.landlock = CandidateHostLandlockRules("/bin/cat", candidate.path);
  struct Case {
    std::vector<std::string> argv;
    bool spawns;  // execve allowed
    bool succeeds;
  };
  const std::vector<Case> cases = {
      {{"/bin/cat", candidate.path + "/candidate.so"}, true, true},
      {{"/bin/cat", "/proc/self/status"}, true, true},
      {{"/bin/cat", outside.path + "/secret.txt"}, true, false},
      {{"/bin/cat", "/etc/passwd"}, true, false},
      {{"/bin/sh", "-c", "true"}, false, false},
  };
  for (const Case& c : cases) {
    SpawnOptions options;
    options.argv = c.argv;
    options.sandbox = policy;
    absl::StatusOr<CommandResult> result = RunCommand(options, 10);
    ASSERT_EQ(result.ok(), c.spawns) << c.argv.back() << ": " << result.status();
    if (!c.spawns) {
      EXPECT_TRUE(absl::IsFailedPrecondition(result.status())) << result.status();
      continue;
    }
    EXPECT_EQ(result->outcome.success(), c.succeeds) << c.argv.back() << ": " << result->stderr_output.bytes;
  }
}

TEST(SandboxSpawnTest, WithoutASandboxSpawnIsUnchanged) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo $$; id -u"};
  absl::StatusOr<CommandResult> result = RunCommand(options, 10);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->stdout_output.bytes.substr(0, 2), "2\n");
  EXPECT_NE(result->stdout_output.bytes.find(std::to_string(geteuid()) + "\n"), std::string::npos);
}

}  // namespace
}  // namespace sparseditto
