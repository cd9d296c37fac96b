// The sweep of temporary folders whose owning process is gone (a kill -9 during a compile).
#include "common/owned_temp_folders.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

// A pid that was alive a moment ago and is not now.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

TEST(OwnedTempFolders, OwnerOfReadsThePidAfterThePrefix) {
  const struct {
    std::string name;
    std::optional<pid_t> owner;
  } cases[] = {
      {"sparseditto-nvcc-1234-AbC123", 1234}, {"sd_sanitizer_77_memcheck", 77}, {"sparseditto-nvcc-1234", 1234},
      {"sparseditto-nvcc-abc-1", std::nullopt}, {"sparseditto-nvcc--1", std::nullopt},
      {"sparseditto-nvcc-0-x", std::nullopt},   {"sparseditto-nvcc-12x", std::nullopt},
      {"other-1234-x", std::nullopt},           {"sparseditto-nvcc-99999999999999999999-x", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(OwnerOf(c.name, c.name.starts_with("sd_") ? "sd_sanitizer_" : "sparseditto-nvcc-"), c.owner) << c.name;
  }
}

TEST(OwnedTempFolders, SweepRemovesWhatDeadOrReplacedOwnersLeftAndNothingElse) {
  testing_support::TempFolder tmp("owned_temp_folders_test");
  ASSERT_TRUE(tmp.ok());
  const pid_t dead = DeadPid();
  const std::time_t long_ago = 1'000'000'000;  // 2001: before this machine booted
  struct Case {
    std::string name;
    bool directory;
    bool old;      // last changed long ago (before its owner, if alive, started: a reused pid)
    bool removed;  // what the sweep must do
  };
  const Case cases[] = {
      {fmt::format("sparseditto-nvcc-{}-live01", getpid()), true, false, false},
      {fmt::format("sparseditto-nvcc-{}-dead01", dead), true, false, true},
      {fmt::format("sd_sanitizer_{}_memcheck", dead), true, false, true},
      {fmt::format("sparseditto-owned-{}-dead02", dead), true, false, true},
      {fmt::format("sparseditto-nvcc-{}-reused", getpid()), true, true, true},
      {"sparseditto-nvcc-1-init", true, false, false},  // pid 1 runs, and started before this folder
      {fmt::format("other-{}-dead03", dead), true, false, false},
      {fmt::format("sparseditto-nvcc-{}-file", dead), false, false, false},
      {"sparseditto-nvcc-x-y", true, false, false},
  };
  for (const Case& c : cases) {
    const fs::path path = tmp / c.name;
    if (c.directory) {
      fs::create_directories(path / "tmp");
      std::ofstream(path / "tmp" / "tmpxft_0001-candidate.cpp") << "nvcc's intermediate";
    } else {
      std::ofstream(path) << "a file";
    }
    if (c.old) {
      const utimbuf times{long_ago, long_ago};
      ASSERT_EQ(utime(path.c_str(), &times), 0);
    }
  }
  const SweepOutcome outcome = SweepOrphanedTempFolders(tmp.path());
  for (const Case& c : cases) {
    EXPECT_EQ(fs::exists(tmp / c.name), !c.removed) << c.name;
  }
  EXPECT_EQ(outcome.removed.size(), 4u);
  EXPECT_EQ(outcome.failed, 0);
  EXPECT_EQ(outcome.kept_alive, 2);
}

TEST(OwnedTempFolders, AnotherUsersFoldersAreLeftAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  testing_support::TempFolder tmp("owned_temp_folders_test");
  ASSERT_TRUE(tmp.ok());
  const fs::path theirs = tmp / fmt::format("sparseditto-nvcc-{}-theirs", DeadPid());
  fs::create_directory(theirs);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  EXPECT_TRUE(SweepOrphanedTempFolders(tmp.path()).removed.empty());
  EXPECT_TRUE(fs::exists(theirs));
}

TEST(OwnedTempFolders, MakeOwnedTempFolderNamesThisProcess) {
  testing_support::TempFolder tmp("owned_temp_folders_test");
  ASSERT_TRUE(tmp.ok());
  absl::StatusOr<fs::path> made = MakeOwnedTempFolder(tmp.path());
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(OwnerOf(made->filename().string(), kOwnedTempPrefix), getpid());
  EXPECT_TRUE(fs::is_directory(*made));
  EXPECT_TRUE(SweepOrphanedTempFolders(tmp.path()).removed.empty()) << "its owner runs";
  EXPECT_FALSE(MakeOwnedTempFolder(tmp / "absent" / "deeper").ok());
}

}  // namespace
}  // namespace sparseditto
