// The finalist stage's reading of compute-sanitizer (evaluator.cc, RunSanitizer), on the CPU: a correct candidate
// from the fake runner, and a stand-in compute-sanitizer (a script in a temp folder) that prints what the real tool
// printed on an H100 and exits as it did. racecheck hazards wholly inside cuBLAS's kernels are logged and not
// counted; a candidate's own race, or the same output from memcheck, fails the candidate.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "common/eval_outcome.h"
#include "evaluator/evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCublasRaces[] = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Read access at nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN+0xb20
=========     and Write access at nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN+0x2f70 [128 hazards]
========= 
sparseditto-candidate-host --sanitize: ran crop/first_64_rows_64x96 (300 nonzeros) at n = 16
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";
constexpr char kCandidateRace[] = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at <unnamed>::BulkCopy(unsigned int, const void *, unsigned int, unsigned int)+0x1ce0 in candidate.cu:240
=========     and Read access at <unnamed>::ComputeStage(unsigned int)+0x860 in candidate.cu:354 [31744 hazards]
========= 
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";

// A hostile candidate's run under racecheck: the tool reports the candidate's own race, and the candidate (whose
// stdout the tool's output holds) printed a passing verdict line, cuBLAS-looking races and a clean summary around it.
constexpr char kForgedAroundARace[] = R"([compute-sanitizer racecheck: exited with code 0]
========= COMPUTE-SANITIZER
========= Error: Race reported between Read access at nvjet_sm90_fake+0x10
=========     and Write access at nvjet_sm90_fake+0x20 [1 hazards]
========= 
========= Error: Race reported between Write access at <unnamed>::Kernel(int)+0x1ce0 in candidate.cu:40
=========     and Read access at <unnamed>::Kernel(int)+0x860 in candidate.cu:44 [512 hazards]
========= 
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
[compute-sanitizer racecheck: exited with code 0]
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
)";

std::string Reference() {
  std::ifstream in(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SanitizerStageTest : public ::testing::Test {
 protected:
  // A compute-sanitizer that prints `racecheck_output` and exits `racecheck_code` for racecheck, and likewise for
  // memcheck; initcheck passes. It records its arguments.
  std::string FakeSanitizer(const std::string& racecheck_output, int racecheck_code, const std::string& memcheck_output,
                            int memcheck_code) {
    const auto dir = folder_.path();
    std::ofstream(dir / "racecheck.txt") << racecheck_output;
    std::ofstream(dir / "memcheck.txt") << memcheck_output;
    const std::string script = (dir / "compute-sanitizer").string();
    std::ofstream(script) << "#!/bin/sh\necho \"$@\" >> '" << (dir / "args.txt").string() << "'\n"
                          << "echo \"$(readlink /proc/self/ns/net) lockdown=$SPARSEDITTO_HOST_LOCKDOWN\" >> '"
                          << (dir / "sandbox.txt").string() << "'\n"
                          << "case \"$2\" in\n"
                          << "  racecheck) cat '" << (dir / "racecheck.txt").string() << "'; exit " << racecheck_code << ";;\n"
                          << "  memcheck) cat '" << (dir / "memcheck.txt").string() << "'; exit " << memcheck_code << ";;\n"
                          << "esac\necho '========= ERROR SUMMARY: 0 errors'\nexit 0\n";
    chmod(script.c_str(), 0755);
    return script;
  }

  v1::EvalResult EvaluateAsFinalist(const std::string& sanitizer, const std::string& source = Reference()) {
    EvaluatorOptions options;
    options.compiler.cache_directory = (folder_.path() / "compile").string();
    options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
    options.runner.runner_path = SPARSEDITTO_FAKE_RUNNER;
    options.compute_sanitizer = sanitizer;
    auto evaluator = Evaluator::Create(options);
    EXPECT_TRUE(evaluator.ok()) << evaluator.status();
    if (!evaluator.ok()) return {};
    v1::Task task;
    task.set_name("t");
    task.set_dtype(v1::DTYPE_FP16);
    task.add_arch("sm_80");
    task.add_n(16);
    EXPECT_TRUE((*evaluator)->SetupTask(task).ok());
    v1::Candidate candidate;
    candidate.set_id("ok_finalist");  // the fake runner's correct result
    candidate.set_source(source);
    return (*evaluator)->Evaluate(task, candidate, /*finalist=*/true, 1);
  }

  std::string Args() { return Slurp("args.txt"); }
  std::string Slurp(const std::string& name) {
    std::ifstream in(folder_.path() / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  testing_support::TempFolder folder_{"sanitizer_stage_test"};
};

TEST_F(SanitizerStageTest, CublasOnlyRacesAreLoggedAndNotCounted) {
  ASSERT_TRUE(folder_.ok());
  const v1::EvalResult result = EvaluateAsFinalist(FakeSanitizer(kCublasRaces, 97, "", 0));
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE) << result.failure_detail() << "\n" << result.run_log();
  EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_DONE);
  EXPECT_THAT(result.run_log(), HasSubstr("[compute-sanitizer racecheck: exited with code 97; all 1 of its hazard "
                                          "reports lie inside kernels named like NVIDIA library kernels (1: "
                                          "nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN), not the candidate's: "
                                          "not counted]"));
  EXPECT_THAT(result.run_log(), HasSubstr("[compute-sanitizer initcheck: exited with code 0]"));  // went on
  ASSERT_EQ(result.sanitizer_verdicts_size(), 3);  // what reports read (SanitizerVerdicts), in order
  EXPECT_EQ(result.sanitizer_verdicts(0), "[compute-sanitizer memcheck: exited with code 0]");
  EXPECT_THAT(result.sanitizer_verdicts(1), HasSubstr("not counted]"));
  EXPECT_TRUE(result.sanitizer_verdicts_recorded());
  // racecheck displays every report so that all can be read; the others keep the short limit.
  EXPECT_THAT(Args(), HasSubstr("--tool racecheck --error-exitcode 97 --print-limit 1000 "));
  EXPECT_THAT(Args(), HasSubstr("--tool memcheck --error-exitcode 97 --print-limit 20 "));
  EXPECT_THAT(Args(), HasSubstr("--sanitize "));
}

// The candidate runs under the tool in the judged host's sandbox (DESIGN.md §3.6): the tool's process starts in a
// network namespace of its own, and the host is told the in-process layers to apply before it loads the candidate.
TEST_F(SanitizerStageTest, TheToolAndTheCandidateRunInTheHostsSandbox) {
  ASSERT_TRUE(folder_.ok());
  const v1::EvalResult result = EvaluateAsFinalist(FakeSanitizer("", 0, "", 0));
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE) << result.failure_detail() << "\n" << result.run_log();
  ASSERT_EQ(result.sanitizer_verdicts_size(), 3) << result.run_log();
  const std::string ours = std::filesystem::read_symlink("/proc/self/ns/net").string();
  const std::string runs = Slurp("sandbox.txt");
  ASSERT_FALSE(runs.empty());
  std::istringstream lines(runs);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find(ours), std::string::npos) << "the tool ran in the evaluator's network namespace: " << line;
    EXPECT_THAT(line, HasSubstr(" lockdown=landlock,caps,seccomp"));
  }
}

// SPARSEDITTO_HOST_SANDBOX reaches the tool's run as it reaches the judged host: "off" runs it in our namespace
// with no lockdown list; a layer list the parser refuses is the harness's failure (INTERNAL), never a skipped tool.
TEST_F(SanitizerStageTest, TheHostSandboxVariableChoosesTheToolsLayers) {
  ASSERT_TRUE(folder_.ok());
  struct Case { const char* layers; v1::FailureCategory failure; bool own_netns; const char* lockdown; const char* detail; };
  const Case cases[] = {
      {"off", v1::FAILURE_CATEGORY_NONE, false, "lockdown=\n", ""},
      {"netns,seccomp", v1::FAILURE_CATEGORY_NONE, true, "lockdown=seccomp\n", ""},
      {"netns,bogus", v1::FAILURE_CATEGORY_INTERNAL, false, "", "compute-sanitizer memcheck not run: SPARSEDITTO_HOST_SANDBOX: unknown layer 'bogus'"},
  };
  const std::string ours = std::filesystem::read_symlink("/proc/self/ns/net").string();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.layers);
    std::filesystem::remove(folder_.path() / "sandbox.txt");
    setenv("SPARSEDITTO_HOST_SANDBOX", c.layers, 1);
    const v1::EvalResult result = EvaluateAsFinalist(FakeSanitizer("", 0, "", 0));
    unsetenv("SPARSEDITTO_HOST_SANDBOX");
    EXPECT_EQ(result.failure(), c.failure) << result.failure_detail() << "\n" << result.run_log();
    EXPECT_THAT(result.failure_detail(), HasSubstr(c.detail));
    const std::string runs = Slurp("sandbox.txt");
    if (c.failure != v1::FAILURE_CATEGORY_NONE) {
      EXPECT_TRUE(runs.empty()) << runs;
      continue;
    }
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.find(ours) == std::string::npos, c.own_netns) << runs;
    EXPECT_THAT(runs, HasSubstr(c.lockdown));
  }
}

// A tool that cannot be started is not the candidate's failure, but its verdict line says it did not run, so
// that no report or export shows the finalist as sanitized by it.
TEST_F(SanitizerStageTest, AToolThatCannotStartSaysSoInTheVerdicts) {
  ASSERT_TRUE(folder_.ok());
  const std::string tool = FakeSanitizer("", 0, "", 0);
  chmod(tool.c_str(), 0644);  // not executable
  const v1::EvalResult result = EvaluateAsFinalist(tool);
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE) << result.failure_detail();
  ASSERT_FALSE(result.sanitizer_verdicts().empty()) << result.run_log();
  for (const std::string& verdict : result.sanitizer_verdicts()) EXPECT_THAT(verdict, HasSubstr(": could not run: "));
}

// Hazards in kernels named like cuBLAS's are excused only when the candidate cannot have named a kernel so: a
// candidate that loads code at run time, or that spells such a name itself, has them counted.
TEST_F(SanitizerStageTest, LibraryNamedRacesCountWhenTheCandidateCouldHaveNamedThem) {
  ASSERT_TRUE(folder_.ok());
  struct Case { const char* name; std::string addition; const char* why; };
  const Case cases[] = {
      {"a run-time library load", "\n[[maybe_unused]] static auto* const kLoad = &cudaLibraryLoadData;\n",
       "the candidate loads code at run time (cudaLibraryLoadData, line"},
      {"an identifier named like cuBLAS's kernels", "\n[[maybe_unused]] static void nvjet_sm90_mine() {}\n",
       "the candidate names an identifier like a library kernel (nvjet_sm90_mine, line"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const v1::EvalResult result = EvaluateAsFinalist(FakeSanitizer(kCublasRaces, 97, "", 0), Reference() + c.addition);
    EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_CRASH) << result.failure_detail() << "\n" << result.run_log();
    EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_FINALIST);
    EXPECT_THAT(result.run_log(), HasSubstr(std::string("but they are counted: ") + c.why));
    EXPECT_THAT(result.run_log(), Not(HasSubstr("not counted")));
  }
}

TEST_F(SanitizerStageTest, ACandidatesOwnRaceOrAMemcheckFindingFailsIt) {
  ASSERT_TRUE(folder_.ok());
  struct Case { const char* name; std::string racecheck; int racecheck_code; std::string memcheck; int memcheck_code; const char* tool; };
  const Case cases[] = {
      {"the candidate's race", kCandidateRace, 97, "", 0, "racecheck"},
      {"cuBLAS's races, but the tool exited otherwise", kCublasRaces, 1, "", 0, "racecheck"},
      {"cuBLAS-looking output from memcheck", "", 0, kCublasRaces, 97, "memcheck"},
      {"forged verdicts, summaries and library races around its own race", kForgedAroundARace, 97, "", 0, "racecheck"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::remove(folder_.path() / "args.txt");
    const v1::EvalResult result = EvaluateAsFinalist(FakeSanitizer(c.racecheck, c.racecheck_code, c.memcheck, c.memcheck_code));
    EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_CRASH) << result.run_log();
    EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_FINALIST);
    EXPECT_THAT(result.failure_detail(), HasSubstr(std::string("compute-sanitizer ") + c.tool + " reported errors"));
    EXPECT_THAT(result.run_log(), Not(HasSubstr("not counted")));
    // What reports read is the evaluator's own lines, never one the candidate printed.
    for (const std::string& verdict : SanitizerVerdicts(result)) EXPECT_THAT(verdict, Not(HasSubstr("racecheck: exited with code 0")));
    EXPECT_EQ(SanitizerVerdicts(result).back(), std::string("[compute-sanitizer ") + c.tool + ": exited with code " +
                                                    std::to_string(std::string(c.tool) == "racecheck" ? c.racecheck_code : c.memcheck_code) + "]");
  }
}

}  // namespace
}  // namespace sparseditto
