// LockDownBeforeLoad on the CPU, each case in a forked child (the layers cannot be undone): what a
// candidate loaded after it could still reach. The "caps" layer matters where the host runs as root:
// the evaluator beside it (this test process) holds the API keys in its environment.
#include "evaluator/host/host_lockdown.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gtest/gtest.h"

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

TEST(HostLockdownTest, UnknownLayerIsRefused) {
  EXPECT_FALSE(LockDownBeforeLoad("", "caps,bogus").ok());
}

}  // namespace
}  // namespace sparseditto
