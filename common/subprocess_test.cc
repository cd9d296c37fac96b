#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Kind = ExitOutcome::Kind;

SpawnOptions Argv(std::vector<std::string> argv) {
  SpawnOptions options;
  options.argv = std::move(argv);
  return options;
}
SpawnOptions Shell(const std::string& script) { return Argv({"/bin/sh", "-c", script}); }
// Options for /bin/true changed by `edit`.
template <typename Edit>
SpawnOptions TrueWith(Edit edit) {
  SpawnOptions options = Argv({"/bin/true"});
  edit(options);
  return options;
}

// True while `pid` is a live process (not gone, not a zombie waiting for its new parent to reap it).
bool IsRunning(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

// Waits (bounded) for a process we SIGKILLed to be gone; a kill is asynchronous.
bool GoneWithin(pid_t pid, double seconds) {
  const Deadline deadline = DeadlineAfter(seconds);
  while (IsRunning(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

struct OutcomeCase {
  std::string name;
  std::string script;
  Kind kind;
  int code_or_signal;
  std::string words;  // in ExitOutcome::ToString()
};
void PrintTo(const OutcomeCase& c, std::ostream* os) { *os << c.name; }

class OutcomeTest : public ::testing::TestWithParam<OutcomeCase> {};

TEST_P(OutcomeTest, ReportsHowTheChildEnded) {
  const OutcomeCase& c = GetParam();
  absl::StatusOr<CommandResult> result = RunCommand(Shell(c.script), 30);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome.kind, c.kind);
  EXPECT_EQ(c.kind == Kind::kExited ? result->outcome.exit_code : result->outcome.signal, c.code_or_signal);
  EXPECT_THAT(result->outcome.ToString(), HasSubstr(c.words));
  EXPECT_EQ(result->outcome.success(), c.kind == Kind::kExited && c.code_or_signal == 0);
}

INSTANTIATE_TEST_SUITE_P(
    Subprocess, OutcomeTest,
    ::testing::Values(OutcomeCase{"success", "true", Kind::kExited, 0, "exited with code 0"},
                      OutcomeCase{"exit3", "exit 3", Kind::kExited, 3, "exited with code 3"},
                      OutcomeCase{"segv", "kill -SEGV $$", Kind::kSignaled, SIGSEGV, "signal 11 (SIGSEGV)"},
                      OutcomeCase{"abort", "kill -ABRT $$", Kind::kSignaled, SIGABRT, "(SIGABRT)"},
                      OutcomeCase{"sigkill", "kill -KILL $$", Kind::kSignaled, SIGKILL, "(SIGKILL)"}),
    [](const auto& info) { return info.param.name; });

TEST(Subprocess, CapturesStdoutAndStderrApartOrMerged) {
  absl::StatusOr<CommandResult> apart = RunCommand(Shell("echo out; echo err >&2"), 30);
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_EQ(apart->stdout_output.bytes, "out\n");
  EXPECT_EQ(apart->stderr_output.bytes, "err\n");
  SpawnOptions merged = Shell("echo one; echo two >&2; echo three");
  merged.merge_stderr_into_stdout = true;
  absl::StatusOr<CommandResult> together = RunCommand(merged, 30);
  ASSERT_TRUE(together.ok()) << together.status();
  EXPECT_EQ(together->stdout_output.bytes, "one\ntwo\nthree\n");
  EXPECT_EQ(together->stderr_output.bytes, "");
}

TEST(Subprocess, SleepBeyondTheDeadlineIsKilled) {
  absl::StatusOr<CommandResult> result = RunCommand(Argv({"/bin/sleep", "100"}), 1.0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome.kind, Kind::kTimedOut);
  EXPECT_EQ(result->outcome.signal, SIGKILL);
  EXPECT_LT(result->seconds, 100);
}

TEST(Subprocess, OutputFloodIsCappedAndTheRestDiscarded) {
  SpawnOptions options = Shell("head -c 5000000 /dev/zero; echo tail >&2");
  options.max_captured_bytes = 1000;
  absl::StatusOr<CommandResult> result = RunCommand(options, 60);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->outcome.success()) << result->outcome.ToString();
  EXPECT_EQ(result->stdout_output.bytes.size(), 1000u);
  EXPECT_TRUE(result->stdout_output.truncated);
  EXPECT_EQ(result->stdout_output.discarded_bytes, 5000000 - 1000);
  EXPECT_EQ(result->stderr_output.bytes, "tail\n");
  EXPECT_FALSE(result->stderr_output.truncated);
}

TEST(Subprocess, EndlessFloodStillTimesOut) {
  SpawnOptions options = Shell("while :; do echo flood; done");
  options.max_captured_bytes = 100;
  absl::StatusOr<CommandResult> result = RunCommand(options, 1.0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome.kind, Kind::kTimedOut);
  EXPECT_TRUE(result->stdout_output.truncated);
}

TEST(Subprocess, EnvironmentIsMinimalAndNotInherited) {
  ASSERT_EQ(setenv("SPARSEDITTO_TEST_SECRET", "hunter2", 1), 0);
  absl::StatusOr<CommandResult> plain = RunCommand(Argv({"env"}), 30);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const std::string& env = plain->stdout_output.bytes;
  EXPECT_THAT(env, Not(HasSubstr("hunter2")));
  EXPECT_THAT(env, HasSubstr("LANG=C\n"));
  EXPECT_THAT(env, HasSubstr("PATH=/usr/local/bin:/usr/bin:/bin\n"));
  EXPECT_THAT(env, HasSubstr("HOME=/"));

  SpawnOptions named = Argv({"env"});
  named.environment = {{"EXTRA", "1"}};
  named.inherit_variables = {"SPARSEDITTO_TEST_SECRET", "SPARSEDITTO_TEST_UNSET"};
  absl::StatusOr<CommandResult> inherited = RunCommand(named, 30);
  ASSERT_TRUE(inherited.ok()) << inherited.status();
  EXPECT_THAT(inherited->stdout_output.bytes, HasSubstr("SPARSEDITTO_TEST_SECRET=hunter2\n"));
  EXPECT_THAT(inherited->stdout_output.bytes, HasSubstr("EXTRA=1\n"));
  EXPECT_THAT(inherited->stdout_output.bytes, Not(HasSubstr("SPARSEDITTO_TEST_UNSET")));
  unsetenv("SPARSEDITTO_TEST_SECRET");
}

TEST(Subprocess, PrivateHomeExistsWhileRunningAndIsRemovedAfter) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(Shell("test -d \"$HOME\" && echo \"$HOME\""));
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_TRUE((*child)->WaitFor(DeadlineAfter(30)).ok());
  std::string home = (*child)->captured_stdout().bytes;
  ASSERT_FALSE(home.empty());
  home.pop_back();
  EXPECT_TRUE(std::filesystem::exists(home));
  child->reset();
  EXPECT_FALSE(std::filesystem::exists(home));
}

// A supervisor killed with -9 leaves its children's private HOMEs behind; the first Spawn of the next
// process removes those whose process is gone, and only those.
TEST(Subprocess, TheFirstSpawnSweepsPrivateHomesOfDeadProcesses) {
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  namespace fs = std::filesystem;
  const fs::path stale = fs::temp_directory_path() / ("sparseditto-home-" + std::to_string(dead) + "-sweeptest");
  const fs::path live = fs::temp_directory_path() / ("sparseditto-home-" + std::to_string(getpid()) + "-sweeptest");
  fs::create_directories(stale / "inside");
  fs::create_directories(live);
  // A fresh process (this test binary again, running one test that spawns) makes its first Spawn; a
  // fork would not do, it inherits whether this process already swept.
  SpawnOptions fresh;
  fresh.argv = {fs::read_symlink("/proc/self/exe").string(), "--gtest_filter=Subprocess.StdinDataIsFed"};
  absl::StatusOr<CommandResult> run = RunCommand(fresh, 60);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->outcome.success()) << run->stdout_output.bytes;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  fs::remove_all(live);
  fs::remove_all(stale);
}

TEST(Subprocess, OurFdsAreNotInherited) {
  const int leaked = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  const std::string script = "test -e /proc/self/fd/" + std::to_string(leaked) + " && echo leaked || echo clean";
  absl::StatusOr<CommandResult> result = RunCommand(Shell(script), 30);
  close(leaked);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_output.bytes, "clean\n");
}

TEST(Subprocess, InheritedFdsReachTheChildAtTheirNumberAndStayOpenHere) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(write(fds[1], "handed on\n", 10), 10);
  close(fds[1]);
  SpawnOptions options = Shell("cat <&7");
  options.inherited_fds = {{fds[0], 7}};
  absl::StatusOr<CommandResult> result = RunCommand(options, 30);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_output.bytes, "handed on\n");
  EXPECT_GE(fcntl(fds[0], F_GETFD), 0) << "our end was closed";
  close(fds[0]);
}

TEST(Subprocess, BadInheritedFdsAreRefused) {
  const int open_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(open_fd, 3);
  struct Case {
    const char* what;
    InheritedFd fd;
    std::vector<ChildPipe> pipes;
  };
  const Case cases[] = {
      {"closed fd", {1000, 5}, {}},
      {"negative fd", {-1, 5}, {}},
      {"onto stdout", {open_fd, 1}, {}},
      {"onto a pipe's fd", {open_fd, 3}, {{3, ChildPipe::Direction::kToChild}}},
  };
  for (const Case& c : cases) {
    SpawnOptions options = Argv({"/bin/true"});
    options.inherited_fds = {c.fd};
    options.pipes = c.pipes;
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(options);
    EXPECT_TRUE(absl::IsInvalidArgument(child.status())) << c.what << ": " << child.status();
  }
  close(open_fd);
}

TEST(Subprocess, TimeoutKillsTheWholeProcessGroup) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(Shell("sleep 100 & echo $!; wait"));
  ASSERT_TRUE(child.ok()) << child.status();
  while ((*child)->captured_stdout().bytes.find('\n') == std::string::npos) {
    ASSERT_TRUE((*child)->Pump(DeadlineAfter(0.1)).ok());
  }
  const pid_t grandchild = std::stoi((*child)->captured_stdout().bytes);
  EXPECT_TRUE(IsRunning(grandchild));
  absl::StatusOr<ExitOutcome> outcome = (*child)->WaitFor(DeadlineAfter(1.0));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, Kind::kTimedOut);
  EXPECT_TRUE(GoneWithin(grandchild, 10));
}

TEST(Subprocess, GrandchildLeftBehindByANormalExitIsKilled) {
  absl::StatusOr<CommandResult> result = RunCommand(Shell("sleep 100 & echo $!"), 30);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->outcome.success());
  EXPECT_LT(result->seconds, 100);  // did not wait for the grandchild holding stdout
  EXPECT_TRUE(GoneWithin(std::stoi(result->stdout_output.bytes), 10));
}

TEST(Subprocess, DestructorKillsAndReaps) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(Argv({"/bin/sleep", "100"}));
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  EXPECT_TRUE(IsRunning(pid));
  child->reset();
  EXPECT_FALSE(IsRunning(pid));  // reaped by the destructor: no zombie of ours either
}

TEST(Subprocess, KillIsReportedAsTheSupervisors) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(Argv({"/bin/sleep", "100"}));
  ASSERT_TRUE(child.ok()) << child.status();
  absl::StatusOr<int64_t> rss = (*child)->ResidentBytes();
  ASSERT_TRUE(rss.ok()) << rss.status();
  EXPECT_GT(*rss, 0);
  (*child)->Kill();
  absl::StatusOr<ExitOutcome> outcome = (*child)->WaitFor(DeadlineAfter(30));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, Kind::kKilled);
  EXPECT_THAT(outcome->ToString(), HasSubstr("supervisor"));
  EXPECT_TRUE(absl::IsNotFound((*child)->ResidentBytes().status()));
}

TEST(Subprocess, WorkingDirectoryAndLimitsApply) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  SpawnOptions options = Shell("pwd; ulimit -f; ulimit -c; ulimit -n; ulimit -t");
  options.working_directory = dir;
  options.limits.file_size_bytes = 512 * 100;
  options.limits.open_files = 64;
  options.limits.cpu_seconds = 30;
  absl::StatusOr<CommandResult> result = RunCommand(options, 30);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_output.bytes, dir + "\n100\n0\n64\n30\n");
}

TEST(Subprocess, NiceIncrementLowersTheChildsPriorityCappedAt19) {
  errno = 0;
  const int ours = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  for (const int increment : {0, 7, 40}) {
    SpawnOptions options = Shell("nice");  // coreutils nice with no command prints the niceness
    options.limits.nice_increment = increment;
    absl::StatusOr<CommandResult> result = RunCommand(options, 30);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->stdout_output.bytes, std::to_string(std::min(19, ours + increment)) + "\n") << increment;
  }
}

TEST(Subprocess, StdinDataIsFed) {
  absl::StatusOr<CommandResult> result = RunCommand(Argv({"cat"}), 30, "hello through stdin");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_output.bytes, "hello through stdin");
  absl::StatusOr<CommandResult> no_stdin = RunCommand(Argv({"cat"}), 30);
  ASSERT_TRUE(no_stdin.ok()) << no_stdin.status();
  EXPECT_EQ(no_stdin->stdout_output.bytes, "");  // /dev/null
}

SpawnOptions WithProtocolPipes(const std::string& script) {
  SpawnOptions options = Shell(script);
  options.pipes = {{3, ChildPipe::Direction::kToChild}, {4, ChildPipe::Direction::kFromChild}};
  return options;
}

TEST(Subprocess, ExtraPipesCarryARequestReplyProtocol) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      Spawn(WithProtocolPipes("while read line <&3; do echo \"got $line\" >&4; echo noise; done"));
  ASSERT_TRUE(child.ok()) << child.status();
  for (std::string word : {"alpha", "beta"}) {
    ASSERT_TRUE((*child)->WriteToChild(3, word + "\n", DeadlineAfter(30)).ok());
    pollfd watch{(*child)->parent_fd(4), POLLIN, 0};
    absl::StatusOr<ChildProcess::PumpEvent> event = (*child)->Pump(DeadlineAfter(30), {&watch, 1});
    ASSERT_TRUE(event.ok()) << event.status();
    EXPECT_EQ(*event, ChildProcess::PumpEvent::kWatchReady);
    absl::StatusOr<std::string> reply = (*child)->ReadFromChild(4, 5 + word.size(), DeadlineAfter(30));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(*reply, "got " + word + "\n");
  }
  absl::StatusOr<std::string> nothing = (*child)->ReadFromChild(4, 1, DeadlineAfter(0.2));
  EXPECT_TRUE(absl::IsDeadlineExceeded(nothing.status())) << nothing.status();
  (*child)->ClosePipe(3);  // EOF ends the loop
  absl::StatusOr<ExitOutcome> outcome = (*child)->WaitFor(DeadlineAfter(30));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->success()) << outcome->ToString();
  EXPECT_EQ((*child)->captured_stdout().bytes, "noise\nnoise\n");
}

TEST(Subprocess, WaitReadableWithinSeesOutputExitTheDeadlineAndTheMemoryLimit) {
  struct Case {
    std::string script;
    int64_t max_resident_bytes;
    absl::StatusCode expected;
    double poll_seconds = 0.05;
  };
  const Case cases[] = {
      {"echo reply >&4; sleep 30", int64_t{1} << 40, absl::StatusCode::kOk},   // output waiting
      {"exit 0", int64_t{1} << 40, absl::StatusCode::kOk},                      // exited: a read says what is left
      {"sleep 30", int64_t{1} << 40, absl::StatusCode::kDeadlineExceeded},
      {"sleep 30", 1, absl::StatusCode::kResourceExhausted},                    // any resident memory is over 1 byte
      // A silent child over its limit whose only look at memory comes when the deadline has passed (the poll
      // is longer than the wait): reported for its memory, not as a timeout.
      {"sleep 30", 1, absl::StatusCode::kResourceExhausted, 10},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(WithProtocolPipes(c.script));
    ASSERT_TRUE(child.ok()) << child.status();
    const absl::Status s = (*child)->WaitReadableWithin(4, DeadlineAfter(0.6), c.max_resident_bytes, c.poll_seconds);
    EXPECT_EQ(s.code(), c.expected) << c.script << ": " << s;
    if (absl::IsResourceExhausted(s)) {
      EXPECT_NE(s.message().find("of host memory (limit 0 MiB)"), std::string::npos) << s;
    }
  }
}

TEST(Subprocess, ShortReplyFromAnExitingChildIsOutOfRange) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(WithProtocolPipes("printf abc >&4; exit 5"));
  ASSERT_TRUE(child.ok()) << child.status();
  absl::StatusOr<std::string> reply = (*child)->ReadFromChild(4, 10, DeadlineAfter(30));
  EXPECT_TRUE(absl::IsOutOfRange(reply.status())) << reply.status();
  EXPECT_THAT(reply.status().message(), HasSubstr("3 of 10"));
}

TEST(Subprocess, WritingToAChildThatClosedItsInputFailsWithoutSigpipe) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(WithProtocolPipes("exec 3<&-; sleep 100"));
  ASSERT_TRUE(child.ok()) << child.status();
  const std::string big(1 << 20, 'x');
  absl::Status wrote = (*child)->WriteToChild(3, big, DeadlineAfter(30));
  EXPECT_TRUE(absl::IsFailedPrecondition(wrote)) << wrote;
  EXPECT_TRUE(absl::IsInvalidArgument((*child)->WriteToChild(4, "x", DeadlineAfter(1))));
  EXPECT_TRUE(absl::IsInvalidArgument((*child)->ReadFromChild(3, 1, DeadlineAfter(1)).status()));
}

struct SpawnErrorCase {
  std::string name;
  SpawnOptions options;
  absl::StatusCode code;
  std::string words;
};
void PrintTo(const SpawnErrorCase& c, std::ostream* os) { *os << c.name; }

class SpawnErrorTest : public ::testing::TestWithParam<SpawnErrorCase> {};

TEST_P(SpawnErrorTest, IsAStatusNotACrash) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Spawn(GetParam().options);
  EXPECT_EQ(child.status().code(), GetParam().code) << child.status();
  EXPECT_THAT(child.status().message(), HasSubstr(GetParam().words));
}

INSTANTIATE_TEST_SUITE_P(
    Subprocess, SpawnErrorTest,
    ::testing::Values(
        SpawnErrorCase{"empty_argv", SpawnOptions(), absl::StatusCode::kInvalidArgument, "empty argv"},
        SpawnErrorCase{"not_in_path", Argv({"no-such-program-xyz"}), absl::StatusCode::kNotFound, "not found"},
        SpawnErrorCase{"not_executable", Argv({"/etc/passwd"}), absl::StatusCode::kFailedPrecondition,
                       "execve failed"},
        SpawnErrorCase{"bad_cwd", TrueWith([](SpawnOptions& o) { o.working_directory = "/no/such/dir"; }),
                       absl::StatusCode::kFailedPrecondition, "chdir failed"},
        SpawnErrorCase{"pipe_on_stdout", TrueWith([](SpawnOptions& o) { o.pipes = {{1, ChildPipe::Direction::kToChild}}; }),
                       absl::StatusCode::kInvalidArgument, "pipe fd 1"},
        SpawnErrorCase{"bad_variable", TrueWith([](SpawnOptions& o) { o.environment = {{"A=B", "1"}}; }),
                       absl::StatusCode::kInvalidArgument, "bad variable name"},
        SpawnErrorCase{"negative_nice", TrueWith([](SpawnOptions& o) { o.limits.nice_increment = -5; }),
                       absl::StatusCode::kInvalidArgument, "negative nice_increment"}),
    [](const auto& info) { return info.param.name; });

TEST(Subprocess, SignalNames) {
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGXFSZ), "SIGXFSZ");
}

}  // namespace
}  // namespace sparseditto
