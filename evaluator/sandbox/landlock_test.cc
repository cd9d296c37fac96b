#include "evaluator/sandbox/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "evaluator/sandbox/sandbox_testing.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using sandbox_testing::TempFolder;

// A folder of this test's own (mkdtemp), removed at the end.
void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// What a restricted child tries, and whether it must work.
struct Access {
  const char* what;
  std::string path;
  int flags;  // open(2) flags
  bool allowed;
};

TEST(LandlockTest, OnlyTheNamedPathsCanBeOpenedWithTheirRights) {
  if (absl::StatusOr<int> abi = LandlockAbiVersion(); !abi.ok()) GTEST_SKIP() << abi.status().message();
  TempFolder readable, writable, outside;
  ASSERT_FALSE(readable.path.empty() || writable.path.empty() || outside.path.empty());
  WriteText(readable.path + "/input.txt", "input");
  WriteText(writable.path + "/old.txt", "old");
  WriteText(outside.path + "/secret.txt", "secret");
  LandlockRules rules;
  rules.read_only = {readable.path, "/does/not/exist"};  // a missing path is skipped
  rules.read_write = {writable.path};
  const std::vector<Access> accesses = {
      {"read an allowed file", readable.path + "/input.txt", O_RDONLY, true},
      {"write into a read-only folder", readable.path + "/input.txt", O_WRONLY, false},
      {"create in a read-only folder", readable.path + "/new.txt", O_WRONLY | O_CREAT, false},
      {"create in the read-write folder", writable.path + "/new.txt", O_WRONLY | O_CREAT, true},
      {"truncate in the read-write folder", writable.path + "/old.txt", O_WRONLY | O_TRUNC, true},
      {"read a secret outside", outside.path + "/secret.txt", O_RDONLY, false},
      {"list the folder outside", outside.path, O_RDONLY | O_DIRECTORY, false},
      {"read /etc/passwd", "/etc/passwd", O_RDONLY, false},
  };
  const pid_t pid = fork();
  if (pid == 0) {
    if (!InstallLandlock(rules).ok()) _exit(100);
    for (size_t i = 0; i < accesses.size(); ++i) {
      const int fd = open(accesses[i].path.c_str(), accesses[i].flags | O_CLOEXEC, 0600);
      const bool opened = fd >= 0;
      if (opened != accesses[i].allowed || (!opened && errno != EACCES)) _exit(static_cast<int>(i) + 1);
      if (fd >= 0) close(fd);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  ASSERT_NE(code, 100) << "InstallLandlock failed in the child";
  EXPECT_EQ(code, 0) << "wrong answer for: " << accesses[code - 1].what;
  EXPECT_FALSE(fs::exists(readable.path + "/new.txt"));
  EXPECT_TRUE(fs::exists(writable.path + "/new.txt"));
}

TEST(LandlockTest, BadRulesAreErrors) {
  if (absl::StatusOr<int> abi = LandlockAbiVersion(); !abi.ok()) GTEST_SKIP() << abi.status().message();
  const std::vector<std::pair<std::string, absl::StatusCode>> cases = {
      {"relative/path", absl::StatusCode::kInvalidArgument},
      {"", absl::StatusCode::kInvalidArgument},
      {"/nonexistent-landlock-test-path", absl::StatusCode::kOk},
  };
  for (const auto& [path, code] : cases) {
    LandlockRules rules;
    rules.read_only = {path};
    EXPECT_EQ(BuildLandlockRuleset(rules).status().code(), code) << "'" << path << "'";
  }
}

TEST(LandlockTest, AbiVersionIsPositiveOrNamesWhyNot) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  if (abi.ok()) {
    EXPECT_GE(*abi, 1);
  } else {
    EXPECT_TRUE(absl::IsUnavailable(abi.status()));
    EXPECT_NE(abi.status().message(), "");
  }
}

}  // namespace
}  // namespace sparseditto
