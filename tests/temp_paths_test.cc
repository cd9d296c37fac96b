// Two test runs on one machine (ctest -j, two checkouts, two containers sharing /tmp) must not share a
// path: every test works in a folder mkdtemp made for it (tests/testing/temp_folder.h). This test
// reads the test sources for the ways a shared path was made before, and checks the helper itself.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

bool IsTestSource(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::string parent = path.parent_path().filename().string();
  return name.ends_with("_test.cc") || name.ends_with("_test.cu") || name.ends_with("test_util.h") ||
         parent == "testing";
}

TEST(TempPaths, NoTestMakesAPathThatAnotherTestRunCouldShare) {
  const struct {
    std::string what;
    std::regex pattern;
  } shared_paths[] = {
      {"::testing::TempDir() is /tmp/ itself, shared by every test run", std::regex(R"(::testing::TempDir\(\))")},
      {"a fixed name (or only a pid) under the temp folder; mkdtemp's XXXXXX makes it a test's own",
       std::regex(R"(temp_directory_path\(\)\s*/\s*(?![^;]*XXXXXX))")},
      {"a fixed path under /tmp", std::regex(R"re("/tmp/[A-Za-z_])re")},
  };
  // Where a match is no shared path, or another engineer's file in flight when this was written (to be
  // converted with it); each with its reason.
  const std::set<std::string> allowed = {
      "evaluator/runner_client_test.cc",      // a marker file under ::testing::TempDir()
      "common/subprocess_test.cc",            // its sweep test needs the real temp folder, pid-named
      "evaluator/compile/static_screen_test.cc",  // "/tmp/x" is candidate source text, never a path
      "llm_mutator/prompt_builder_test.cc",       // "/tmp/sd-compile" is log text to scrub, never a path
      "tests/temp_paths_test.cc",                 // these patterns
      "tests/testing/temp_folder.h",              // the helper, which names what it replaces
  };
  const fs::path root = SPARSEDITTO_SOURCE_DIR;
  int files = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string top = it->path().lexically_relative(root).begin()->string();
    if (it->is_directory() && (top == "build" || top.starts_with("."))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !IsTestSource(it->path())) continue;
    const std::string relative = it->path().lexically_relative(root).string();
    if (allowed.contains(relative)) continue;
    ++files;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    for (const auto& shared : shared_paths) {
      std::smatch found;
      if (std::regex_search(source, found, shared.pattern)) {
        const auto line = std::count(source.begin(), source.begin() + found.position(), '\n') + 1;
        ADD_FAILURE() << relative << ":" << line << ": " << shared.what;
      }
    }
  }
  EXPECT_GT(files, 50) << "the test sources were not found under " << root;
}

TEST(TempPaths, EachProcessHasAFolderOfItsOwn) {
  const std::string mine = testing_support::ProcessTempDir();
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  const pid_t child = fork();
  if (child == 0) {
    // A new process image would start without the parent's static folder: the child asks afresh.
    testing_support::TempFolder its_own("temp_paths_test");
    const std::string path = its_own.path().string();
    (void)!write(pipe_ends[1], path.data(), path.size());
    _exit(0);
  }
  close(pipe_ends[1]);
  char buffer[4096] = {};
  const ssize_t got = read(pipe_ends[0], buffer, sizeof(buffer) - 1);
  close(pipe_ends[0]);
  waitpid(child, nullptr, 0);
  ASSERT_GT(got, 0);
  EXPECT_NE(std::string(buffer, got) + "/", mine);
  EXPECT_NE(mine, ::testing::TempDir());
  EXPECT_TRUE(fs::is_directory(mine));
}

}  // namespace
}  // namespace sparseditto
