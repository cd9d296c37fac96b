// Names of runs and tasks, and PathInside: nothing a run writes can land outside its folder.
#include "task/run_paths.h"

#include <filesystem>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct NameCase {
  std::string name;
  std::optional<std::string> run_problem;   // a substring of RunNameProblem's answer; nullopt: accepted
  std::optional<std::string> task_problem;  // the same for TaskNameProblem
};

TEST(RunPaths, NamesThatLeaveOrCollideWithTheRunAreRefused) {
  const NameCase cases[] = {
      {"nm_2_4_fp16", std::nullopt, std::nullopt},
      {"a.b-c_D9", std::nullopt, std::nullopt},
      {"...", std::nullopt, std::nullopt},  // an ordinary (if odd) name: not "." or ".."
      {"..", "'..' names the folder above", "'..' names the folder above the run"},
      {".", "'.' names the folder of runs itself", "'.' names the run's folder itself"},
      {"", "is empty", "is empty"},
      {"a/b", "must match", "must match"},
      {"../x", "must match", "must match"},
      {"a b", "must match", "must match"},
      {std::string("a\0b", 3), "must match", "must match"},
      {std::string(129, 'a'), "must match", "must match"},
      {"store", std::nullopt, "taken by the run's own runs/<run>/store"},
      {"STORE", std::nullopt, "taken by the run's own runs/<run>/store"},
      {"export", std::nullopt, "taken by the run's own runs/<run>/export"},
      {"provenance.json", std::nullopt, "runs/<run>/provenance.json"},
      {"best.sparseditto-tmp-42", std::nullopt, "the mark of the run's temporary files"},
      {"x.sparseditto-old-1", std::nullopt, "the mark of the run's temporary files"},
      {"store.creating-abc", std::nullopt, "the mark of the run's temporary files"},
      // A task's population of one arch (arch_populations.h): a task's folder, never a run's.
      {"spmm@sm_80", "must match", std::nullopt},
      {"spmm@sm_90a", "must match", std::nullopt},
      {"spmm@gpu0", "must match", "not followed by an arch"},
      {"spmm@", "must match", "not followed by an arch"},
      {"store@sm_80", "must match", "taken by the run's own runs/<run>/store"},
      {"..@sm_80", "must match", "'..' names the folder above the run"},
      {"@sm_80", "must match", "is empty"},
      {"a@b@sm_80", "must match", "must match"},
  };
  for (const NameCase& c : cases) {
    SCOPED_TRACE("name '" + c.name + "'");
    const std::optional<std::string> run = RunNameProblem(c.name);
    const std::optional<std::string> task = TaskNameProblem(c.name);
    ASSERT_EQ(run.has_value(), c.run_problem.has_value()) << run.value_or("accepted");
    ASSERT_EQ(task.has_value(), c.task_problem.has_value()) << task.value_or("accepted");
    if (run) {
      EXPECT_THAT(*run, HasSubstr(*c.run_problem));
    }
    if (task) {
      EXPECT_THAT(*task, HasSubstr(*c.task_problem));
    }
  }
}

TEST(RunPaths, CheckRunNameNamesWhereTheNameCameFrom) {
  const absl::Status s = CheckRunName("..", "--run");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--run: run name '..' names the folder above"));
  EXPECT_TRUE(CheckRunName("r1", "--run").ok());
  EXPECT_THAT(std::string(CheckTaskName("export").message()), HasSubstr("task name 'export' is taken"));
  EXPECT_TRUE(CheckTaskName("t").ok());
}

class RunPathsFolder : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(folder_.ok()); }
  testing_support::TempFolder folder_{"run_paths_test"};
  const fs::path& root_ = folder_.path();
};

TEST_F(RunPathsFolder, PathInsideRefusesEveryWayOut) {
  const fs::path run = root_ / "runs" / "r";
  fs::create_directories(run / "t");
  fs::create_directories(root_ / "outside");
  fs::create_directory_symlink(root_ / "outside", run / "t" / "link");
  struct Case {
    std::string label;
    std::initializer_list<std::string_view> parts;
    std::string refusal;  // empty: accepted
  };
  const Case cases[] = {
      {"a task's candidate", {"t", "candidates", "t.000001"}, ""},
      {"provenance", {"provenance.json"}, ""},
      {"a folder not made yet", {"new", "deeper", "file.cu"}, ""},
      {"parent", {".."}, "the part '..' is '..', the parent folder"},
      {"parent, then a sibling run's store", {"..", "other", "store"}, "the part '..'"},
      {"parent deeper down", {"t", "..", "..", "x"}, "the part '..'"},
      {"the folder itself", {"."}, "the part '.' is '.'"},
      {"a slash", {"t/../../x"}, "holds a '/'"},
      {"an absolute part", {"/etc/passwd"}, "holds a '/'"},
      {"empty", {""}, "is empty"},
      {"a NUL byte", {std::string_view("a\0b", 3)}, "NUL"},
      {"a symbolic link planted inside the run", {"t", "link", "kernel.cu"}, "outside"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    absl::StatusOr<fs::path> path = PathInside(run, c.parts);
    if (c.refusal.empty()) {
      ASSERT_TRUE(path.ok()) << path.status();
      EXPECT_EQ(path->string().rfind(run.string(), 0), 0u) << *path;
    } else {
      ASSERT_FALSE(path.ok()) << *path;
      EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(path.status().message()), HasSubstr(c.refusal));
      EXPECT_THAT(std::string(path.status().message()), HasSubstr("cannot write"));
    }
  }
  EXPECT_FALSE(fs::exists(run / "new")) << "PathInside creates nothing";
}

}  // namespace
}  // namespace sparseditto
