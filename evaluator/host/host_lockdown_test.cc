// LockDownBeforeLoad on the CPU, each case in a forked child (the layers cannot be undone): what a
// candidate loaded after it could still reach. The "caps" layer matters where the host runs as root:
// the evaluator beside it (this test process) holds the API keys in its environment.
#include "evaluator/host/host_lockdown.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

// Runs `body` in a child after LockDownBeforeLoad(layers); the child's exit code (0 = body true).
int InLockedChild(const std::string& layers, bool (*body)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!LockDownBeforeLoad("", layers).ok()) _exit(2);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

bool ParentEnvironmentReadable() {
  const std::string path = "/proc/" + std::to_string(getppid()) + "/environ";
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  char c;
  const bool read_one = read(fd, &c, 1) >= 0;
  close(fd);
  return read_one;
}

bool NoCapabilityLeft() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return data[0].effective == 0 && data[0].permitted == 0 && data[1].effective == 0 && data[1].permitted == 0 &&
         prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 0;
}

TEST(HostLockdownTest, CapsClosesTheEvaluatorsProcFilesToARootHost) {
  if (geteuid() != 0) GTEST_SKIP() << "the caps layer matters for a host that runs as root";
  // Without the layer, root reads its parent's environment (the hole the layer closes).
  EXPECT_EQ(InLockedChild("", ParentEnvironmentReadable), 0);
  EXPECT_EQ(InLockedChild("caps", ParentEnvironmentReadable), 1);
  EXPECT_EQ(InLockedChild("caps", NoCapabilityLeft), 0);
  // With seccomp after it, as in the host's default.
  EXPECT_EQ(InLockedChild("caps,seccomp", ParentEnvironmentReadable), 1);
}

// tests/adversarial/escape_under_sanitizer.cu's two ways out (a socket, a file created in the temporary folder), which it tries only under the finalist's
// compute-sanitizer, where the --sanitize host now applies these layers before loading it (sanitize_smoke.cc).
bool SocketOpens() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0) close(fd);
  return fd >= 0;
}
std::string escape_template;  // set before the fork: a name under this test process's own temporary folder
bool FileCreatedInTempFolder() {
  std::string path = escape_template;
  const int fd = mkstemp(path.data());
  if (fd < 0) return false;
  close(fd);
  unlink(path.c_str());
  return true;
}

TEST(HostLockdownTest, TheDefaultLayersRefuseASocketAndANewFile) {
  if (InLockedChild("landlock,caps,seccomp", [] { return true; }) == 2) GTEST_SKIP() << "a layer is not available here";
  escape_template = testing_support::ProcessTempDir() + "escape_XXXXXX";  // in the temporary folder, outside Landlock's rules
  struct Case { const char* layers; bool (*escape)(); int want; };
  const Case cases[] = {
      {"", SocketOpens, 0},  // unconfined: the escape works (the control)
      {"", FileCreatedInTempFolder, 0},
      {"landlock,caps,seccomp", SocketOpens, 1},
      {"landlock,caps,seccomp", FileCreatedInTempFolder, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string("layers '") + c.layers + "', " + (c.escape == SocketOpens ? "socket" : "file in the temporary folder"));
    EXPECT_EQ(InLockedChild(c.layers, c.escape), c.want);
  }
}

// tests/adversarial/outlive_under_sanitizer.cu's way out: a forked child that would outlive the host (and the
// compute-sanitizer it runs under). The child here leaves at once; what matters is whether it could be made.
bool ChildForked() {
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return true;
}

TEST(HostLockdownTest, TheDefaultLayersRefuseAChildThatWouldOutliveTheHost) {
  if (InLockedChild("landlock,caps,seccomp", [] { return true; }) == 2) GTEST_SKIP() << "a layer is not available here";
  EXPECT_EQ(InLockedChild("", ChildForked), 0) << "unconfined, the fork works (the control)";
  EXPECT_EQ(InLockedChild("landlock,caps,seccomp", ChildForked), 1) << "the default in-process layers refuse it";
}

TEST(HostLockdownTest, UnknownLayerIsRefused) {
  EXPECT_FALSE(LockDownBeforeLoad("", "caps,bogus").ok());
}

}  // namespace
}  // namespace sparseditto
