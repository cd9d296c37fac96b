// scripts/seed_finalists.sh against a fake sparseditto (a shell script: `bench --list` prints a fixed pair
// list, `eval` prints a verdict chosen by the kernel's name and records the call): which pairs it runs, the
// rerun alone of a failure, the summary and the exit status. The real run is on the GPU machine
// (docs/results/seed_finalists_h200_2026-11-30.txt; `sparseditto bench --list` itself is tested in cli_test.cc).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "tests/testing/shell_command.h"

namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(SPARSEDITTO_SOURCE_DIR) + "/scripts/seed_finalists.sh";

using Outcome = sparseditto::testing_support::ShellOutcome;
using sparseditto::testing_support::RunShell;
using sparseditto::testing_support::Slurp;

class SeedFinalistsScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / ("sd_seed_finalists_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The fake binary. `list` is what `bench --list` prints (task, seed, file; tabs); eval's verdict by the
  // kernel file's name: good* CORRECT, slow* SLOWER, racy* a racecheck failure every time, flaky* a
  // failure the first time only, sleepy* nothing for a minute (a pair a stop catches unfinished).
  void Fake(const std::string& list, int list_exit = 0) {
    std::ofstream(dir_ / "list.tsv") << list;
    const fs::path fake = dir_ / "sparseditto";
    std::ofstream(fake) << "#!/bin/bash\n"
                           "d='" << dir_.string() << "'\n"
                           "if [[ $1 == bench ]]; then cat \"$d/list.tsv\"; echo 'a note on stderr' >&2; exit " << list_exit << "; fi\n"
                           "while [[ $# -gt 0 ]]; do case $1 in --name) t=$2; shift;; --kernel) k=$(basename \"$2\"); shift;; esac; shift; done\n"
                           "echo \"$k $t gpu=${CUDA_VISIBLE_DEVICES-unset}\" >> \"$d/calls.txt\"\n"
                           "echo \"candidate ${k%.cu} on task $t\"\n"
                           "case $k in\n"
                           "  good*) echo '  verdict: CORRECT  (stage reached: DONE)';;\n"
                           "  slow*) echo '  verdict: SLOWER  (stage reached: DONE)'; echo '  detail: correct, but 0.5x';;\n"
                           "  racy*) echo '  verdict: CRASH  (stage reached: FINALIST)'; echo '  detail: compute-sanitizer racecheck reported errors (exited with code 97)';;\n"
                           "  flaky*) if [[ -e \"$d/flaky.$t\" ]]; then echo '  verdict: CORRECT  (stage reached: DONE)';\n"
                           "          else touch \"$d/flaky.$t\"; echo '  verdict: WRONG  (stage reached: SMOKE)'; echo '  detail: work escaped the given stream'; fi;;\n"
                           "  sleepy*) sleep 60; echo '  verdict: CORRECT  (stage reached: DONE)';;\n"
                           "esac\n";
    fs::permissions(fake, fs::perms::owner_all);
  }
  Outcome Run(const std::string& extra = "", const std::string& env = "") {
    return RunShell(env + " bash '" + kScript + "' '" + (dir_ / "sparseditto").string() + "' suite.yaml '" + (dir_ / "out").string() + "' " + extra, dir_);
  }
  // The summary line of a pair.
  std::string LineOf(const std::string& seed, const std::string& task) {
    const std::string summary = Slurp(dir_ / "out" / "summary.txt");
    size_t at = 0;
    while ((at = summary.find(seed, at)) != std::string::npos) {
      const size_t end = summary.find('\n', at);
      const std::string line = summary.substr(at, end - at);
      if (line.find(" " + task + " ") != std::string::npos) return line;
      at = end;
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(SeedFinalistsScriptTest, EverySeedOnItsFirstTasksAndAFailureIsRunAgainAlone) {
  Fake("t1\tgood\tk/good.cu\nt1\tslow\tk/slow.cu\nt2\tgood\tk/good.cu\nt3\tgood\tk/good.cu\nt2\tflaky\tk/flaky.cu\n");
  const Outcome r = Run("3 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string calls = Slurp(dir_ / "calls.txt");
  EXPECT_NE(calls.find("good.cu t1"), std::string::npos) << calls;
  EXPECT_NE(calls.find("good.cu t2"), std::string::npos) << calls;
  EXPECT_EQ(calls.find("good.cu t3"), std::string::npos) << "MAX_PER_SEED 2 keeps a seed's first two tasks:\n" << calls;
  EXPECT_NE(LineOf("good", "t1").find("CORRECT   DONE"), std::string::npos) << LineOf("good", "t1");
  EXPECT_NE(LineOf("slow", "t1").find("SLOWER    DONE"), std::string::npos) << LineOf("slow", "t1");
  const std::string flaky = LineOf("flaky", "t2");
  EXPECT_NE(flaky.find("CORRECT"), std::string::npos) << flaky;
  EXPECT_NE(flaky.find("run again alone (first: WRONG at SMOKE)"), std::string::npos) << "the first verdict is named: " << flaky;
  EXPECT_EQ(flaky.find("FAILS"), std::string::npos) << flaky;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "flaky__t2.alone.txt"));
  EXPECT_EQ(r.out, Slurp(dir_ / "out" / "summary.txt"));
}

TEST_F(SeedFinalistsScriptTest, APairThatFailsAloneTooFailsTheRunWithItsDetail) {
  Fake("t1\tgood\tk/good.cu\nt1\tracy\tk/racy.cu\n");
  const Outcome r = Run();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string racy = LineOf("racy", "t1");
  EXPECT_NE(racy.find("CRASH     FINALIST"), std::string::npos) << racy;
  EXPECT_NE(racy.find("FAILS (compute-sanitizer racecheck reported errors"), std::string::npos) << racy;
  EXPECT_NE(LineOf("good", "t1").find("CORRECT"), std::string::npos);
}

TEST_F(SeedFinalistsScriptTest, StoppedByTimeoutItStillWritesTheSummaryOfWhatFinished) {
  Fake("t1\tgood\tk/good.cu\nt1\tracy\tk/racy.cu\nt1\tsleepy\tk/sleepy.cu\n");
  const Outcome r = Run("3 1", "timeout 5");  // all three at once; the stop comes while sleepy runs
  EXPECT_EQ(r.exit_code, 124) << "timeout's status for a command it stopped:\n" << r.out << r.err;
  ASSERT_TRUE(fs::exists(dir_ / "out" / "summary.txt")) << r.err;
  EXPECT_NE(LineOf("good", "t1").find("CORRECT   DONE"), std::string::npos) << LineOf("good", "t1");
  EXPECT_NE(LineOf("racy", "t1").find("not run again alone: FAILS (the run was stopped)"), std::string::npos)
      << LineOf("racy", "t1");
  EXPECT_NE(LineOf("sleepy", "t1").find("not finished: FAILS (the run was stopped)"), std::string::npos)
      << LineOf("sleepy", "t1");
  const std::string calls = Slurp(dir_ / "calls.txt");
  EXPECT_EQ(calls.find("racy.cu t1"), calls.rfind("racy.cu t1")) << "no rerun alone after the stop:\n" << calls;
  EXPECT_NE(r.err.find("stopped before every pair finished"), std::string::npos) << r.err;
}

TEST_F(SeedFinalistsScriptTest, PairsGoRoundRobinOverTheVisibleGpusAndARerunStaysOnItsGpu) {
  Fake("t1\tgood\tk/good.cu\nt2\tgood\tk/good.cu\nt1\tslow\tk/slow.cu\nt2\tflaky\tk/flaky.cu\n");
  const Outcome r = Run("2 2", "CUDA_VISIBLE_DEVICES=3,5");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string calls = Slurp(dir_ / "calls.txt");
  for (const char* call : {"good.cu t1 gpu=3\n", "good.cu t2 gpu=5\n", "slow.cu t1 gpu=3\n", "flaky.cu t2 gpu=5\n"}) {
    EXPECT_NE(calls.find(call), std::string::npos) << call << " in:\n" << calls;
  }
  size_t flaky_calls = 0;
  for (size_t at = calls.find("flaky.cu t2 gpu=5"); at != std::string::npos; at = calls.find("flaky.cu t2 gpu=5", at + 1)) {
    ++flaky_calls;
  }
  EXPECT_EQ(flaky_calls, 2u) << "the rerun alone stays on the pair's GPU:\n" << calls;
}

TEST_F(SeedFinalistsScriptTest, BadUsageAndAFailedListExitWithAReason) {
  struct Case {
    std::string name, list, args;
    int list_exit, exit_code;
    std::string message;
  };
  const Case cases[] = {
      {"list fails", "", "", 1, 1, "bench --list failed: a note on stderr"},
      {"nothing applies", "", "", 0, 1, "no seed applies to any task of suite.yaml"},
      {"parallel not a number", "t1\tgood\tk/good.cu\n", "x", 0, 2, "positive integers"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(dir_ / "out");
    Fake(c.list, c.list_exit);
    const Outcome r = Run(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "calls.txt")) << "nothing evaluated";
  }
  const Outcome usage = RunShell("bash '" + kScript + "' only two", dir_);
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("seed_finalists.sh SPARSEDITTO SUITE OUT_DIR [PARALLEL] [MAX_PER_SEED]"), std::string::npos) << usage.err;
}

}  // namespace
