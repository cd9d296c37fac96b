// scripts/ncu_profile.sh against a fake toolchain (ncu, sparseditto and its runner as small shell scripts that
// record how they were called): which launch it profiles, what it passes through, and how it fails. The real
// ncu runs on the GPU machine only (docs/lab/2026-11-29-s6-u14-stream-sp, call 6).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "tests/testing/shell_command.h"

namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(SPARSEDITTO_SOURCE_DIR) + "/scripts/ncu_profile.sh";

// Light-pass CSV rows: launch 1 has the largest grid and appears twice (one row per metric); launch 3 ties it
// on the grid but is shorter.
constexpr char kLightCsv[] =
    R"csv("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Metric Name","Metric Value"
"0","7","runner","h","K","1","13","(256, 1, 1)","(4, 1, 1)","0","9.0","gpu__time_duration.sum","5000"
"1","7","runner","h","K","1","13","(256, 1, 1)","(8, 32, 1)","0","9.0","gpu__time_duration.sum","9000"
"1","7","runner","h","K","1","13","(256, 1, 1)","(8, 32, 1)","0","9.0","launch__grid_size","256"
"2","7","runner","h","K","1","13","(256, 1, 1)","(2, 1, 1)","0","9.0","gpu__time_duration.sum","4000"
"3","7","runner","h","K","1","13","(256, 1, 1)","(16, 16, 1)","0","9.0","gpu__time_duration.sum","8900"
)csv";

// A light-pass CSV of launches (grid, duration in ns), ID i for the i-th, one row a metric.
std::string LightCsv(const std::vector<std::pair<std::string, std::string>>& launches) {
  std::string csv =
      R"q("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",)q"
      R"q("Device","CC","Metric Name","Metric Value")q"
      "\n";
  for (size_t i = 0; i < launches.size(); ++i) {
    const std::string head = "\"" + std::to_string(i) + R"q(","7","runner","h","K","1","13","(128, 1, 1)",")q" +
                             launches[i].first + R"q(","0","9.0",")q";
    csv += head + R"q(gpu__time_duration.sum",")q" + launches[i].second + "\"\n";
    csv += head + R"q(launch__grid_size","0")q" "\n";
  }
  return csv;
}

using Outcome = sparseditto::testing_support::ShellOutcome;
using sparseditto::testing_support::RunShell;
using sparseditto::testing_support::Slurp;

class NcuProfileScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / ("sd_ncu_profile_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "tools");
    Write(dir_ / "light.csv", kLightCsv);
    // The fake ncu: records its arguments; writes the light CSV (--log-file) or a report (-o) per
    // FAKE_NCU_MODE (ok: as ncu would; header: a CSV with no launch; silent: writes nothing).
    Executable(dir_ / "tools" / "ncu", "#!/bin/bash\necho \"$* (host sandbox=${SPARSEDITTO_HOST_SANDBOX:-})\" >> '" +
                                           (dir_ / "ncu_calls.txt").string() + "'\n" +
                                           "mode=${FAKE_NCU_MODE:-ok}\n"
                                           "while [[ $# -gt 0 ]]; do case \"$1\" in\n"
                                           "  --log-file) [[ $mode == ok ]] && cp '" + (dir_ / "light.csv").string() +
                                           "' \"$2\"; [[ $mode == header ]] && head -1 '" + (dir_ / "light.csv").string() +
                                           "' > \"$2\"; shift;;\n"
                                           "  -o) [[ $mode != silent ]] && echo report > \"$2.ncu-rep\"; shift;;\n"
                                           "  --import) echo \"details of $2\"; exit 0;;\n"
                                           "esac; shift; done\nexit 0\n");
    // The fake sparseditto starts its runner the way the evaluator does: through SPARSEDITTO_RUNNER.
    Executable(dir_ / "bin" / "sparseditto", "#!/bin/bash\necho \"eval $*\"\nexec \"$SPARSEDITTO_RUNNER\" --child 3 4\n");
    // The fake runner starts the candidate host from beside itself, as the real one does.
    Executable(dir_ / "bin" / "sparseditto-runner",
               "#!/bin/bash\necho \"runner $*\"\nexec \"$(dirname \"$0\")/sparseditto-candidate-host\"\n");
    Executable(dir_ / "bin" / "sparseditto-candidate-host", "#!/bin/bash\necho host\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  static void Executable(const fs::path& path, const std::string& text) {
    Write(path, text);
    fs::permissions(path, fs::perms::owner_all);
  }

  Outcome Run(const std::string& args, const std::string& mode = "ok") {
    return RunShell("PATH='" + (dir_ / "tools").string() + "':$PATH FAKE_NCU_MODE=" + mode + " bash '" + kScript + "' " + args, dir_);
  }
  std::string Args() const {
    std::ostringstream args;
    args << "'" << (dir_ / "bin" / "sparseditto").string() << "' tasks.yaml t k.cu 'U14Stream' '" << (dir_ / "out").string() << "'";
    return args.str();
  }

  fs::path dir_;
};

TEST_F(NcuProfileScriptTest, ProfilesOnlyTheLaunchWithTheLargestGrid) {
  const Outcome r = Run(Args());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string calls = Slurp(dir_ / "ncu_calls.txt");
  const std::string host = (dir_ / "bin" / "sparseditto-candidate-host").string();
  EXPECT_NE(calls.find("-k regex:U14Stream --launch-count 40 --metrics gpu__time_duration.sum,launch__grid_size"), std::string::npos)
      << calls;
  EXPECT_NE(calls.find("-k regex:U14Stream --launch-skip 1 --launch-count 1 --section SpeedOfLight"), std::string::npos)
      << "launch 1 (8 x 32 blocks, listed twice) is the first of the largest of the four distinct launches:\n" << calls;
  EXPECT_NE(calls.find(host + " (host sandbox=off)"), std::string::npos) << "ncu runs the real candidate host (the runner's copy starts "
                                                          "the wrapper beside it):\n" << calls;
  EXPECT_EQ(calls.find("@PID@"), std::string::npos) << "each host's files are named by its process:\n" << calls;
  EXPECT_EQ(Slurp(dir_ / "out" / "details.txt"), "details of " + (dir_ / "out" / "full.ncu-rep").string() + "\n");
  EXPECT_TRUE(fs::exists(dir_ / "out" / "light.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "lib")) << "no lib folder beside the runner, none linked";
}

// A packaged runner (scripts/package_gpu.sh) finds its libraries through RUNPATH $ORIGIN/../lib: its copy in
// OUT/bin gets OUT/lib linked to them.
TEST_F(NcuProfileScriptTest, ThePackagedRunnersCopyFindsItsLibraries) {
  fs::create_directories(dir_ / "lib");
  Write(dir_ / "lib" / "libsomething.so", "");
  const Outcome r = Run(Args());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "out" / "lib"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "lib" / "libsomething.so"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "bin" / "sparseditto-runner"));
  EXPECT_NE(Slurp(dir_ / "out" / "eval_light.txt").find("eval --task tasks.yaml --name t --kernel k.cu --task-shapes-only"),
            std::string::npos)
      << "both passes skip the smoke shapes";
  EXPECT_NE(Slurp(dir_ / "out" / "eval_full.txt").find("--task-shapes-only"), std::string::npos);
  EXPECT_NE(r.out.find("launch 1 of 'U14Stream'"), std::string::npos) << r.out;
}

// Which launch is profiled: the largest grid, then the longest, then the first.
TEST_F(NcuProfileScriptTest, PicksTheLargestGridThenTheLongestLaunch) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> launches;
    int want;
  };
  const Case cases[] = {
      // session 12's csr_warp_per_row on a dlmc task: one grid at every n, the largest n the longest
      {"same grid at every n", {{"(512, 2, 1)", "4000"}, {"(512, 2, 1)", "9000"}, {"(512, 2, 1)", "6000"}}, 1},
      {"a larger grid beats a longer launch", {{"(64, 1, 1)", "90000"}, {"(128, 1, 1)", "5000"}}, 1},
      {"a full tie takes the first", {{"(8, 8, 1)", "7000"}, {"(64, 1, 1)", "7000"}}, 0},
      {"thousands separators and decimals", {{"(4, 1, 1)", "9,100"}, {"(4, 1, 1)", "12,000.5"}, {"(4, 1, 1)", "999"}}, 1},
      {"no duration row still picks by grid", {{"(2, 1, 1)", ""}, {"(3, 1, 1)", ""}}, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SetUp();
    Write(dir_ / "light.csv", LightCsv(c.launches));
    const Outcome r = Run(Args());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string calls = Slurp(dir_ / "ncu_calls.txt");
    EXPECT_NE(calls.find("--launch-skip " + std::to_string(c.want) + " --launch-count 1"), std::string::npos) << calls;
  }
}

TEST_F(NcuProfileScriptTest, FailuresExitNonZeroAndSayWhichStepFailed) {
  struct Case {
    std::string name, mode;
    bool remove_runner;
    int exit_code;
    std::string message;
  };
  const Case cases[] = {
      {"no launch matched", "header", false, 1, "no launch of regex 'U14Stream'"},
      {"light pass wrote nothing", "silent", false, 1, "light pass wrote nothing"},
      {"no runner beside sparseditto", "ok", true, 1, "no runner beside"},
      {"no candidate host beside sparseditto", "ok", false, 1, "no candidate host beside"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SetUp();
    if (c.remove_runner) fs::remove(dir_ / "bin" / "sparseditto-runner");
    if (c.name == "no candidate host beside sparseditto") fs::remove(dir_ / "bin" / "sparseditto-candidate-host");
    const Outcome r = Run(Args(), c.mode);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out" / "details.txt"));
  }
}

TEST_F(NcuProfileScriptTest, WrongArgumentCountPrintsUsage) {
  const Outcome r = Run("only two");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ncu_profile.sh SPARSEDITTO TASK_FILE TASK_NAME KERNEL_FILE KERNEL_REGEX OUT_DIR"), std::string::npos) << r.err;
}

}  // namespace
