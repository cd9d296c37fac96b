// A hostile candidate against the worker's spool (result_spool.h): the spool holds the worker's session
// id (a secret that lets its holder report for the worker) and the results waiting to be
// acknowledged. A candidate's host process runs under the candidate host's Landlock rules; even with
// the spool's files opened to every user, it can neither read the session nor a result, nor plant a
// forged report for the worker to send, and the spool reopens with exactly what it held.
#include <filesystem>
#include <fstream>

#include "common/subprocess.h"
#include "evaluator/node/result_spool.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/sandbox_probe.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

bool LandlockOn() {
  for (const SandboxLayerStatus& layer : ProbeSandboxLayers({})) {
    if (layer.name == "landlock") return layer.on;
  }
  return false;
}

// `argv` run as a candidate's host would be (its binary argv[0], its candidate folder `candidate`).
CommandResult AsCandidateHost(const std::vector<std::string>& argv, const std::string& candidate) {
  SpawnOptions options;
  options.argv = argv;
  SandboxPolicy policy;
  policy.landlock = CandidateHostLandlockRules(argv[0], candidate);
  options.sandbox = policy;
  absl::StatusOr<CommandResult> result = RunCommand(options, 10);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : CommandResult{};
}

TEST(ResultSpoolSandboxTest, ACandidateCanNeitherReadTheSessionNorForgeAReportInTheSpool) {
  if (!LandlockOn()) GTEST_SKIP() << "Landlock is not available here";
  testing_support::TempFolder spool_folder("spool_sandbox_test"), candidate_folder("spool_sandbox_candidate");
  ASSERT_TRUE(spool_folder.ok() && candidate_folder.ok());
  const std::string spool_dir = (spool_folder.path() / "spool").string(), candidate = candidate_folder.path().string();
  const std::string session = "0123456789abcdef0123456789abcdef";
  {
    auto spool = ResultSpool::Open(spool_dir);
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE((*spool)->SaveSession(session).ok());
    v1::ReportEvaluationRequest held;
    held.set_job_id("held-job");
    held.set_attempt(1);
    held.mutable_result()->set_fitness(0.5);
    ASSERT_TRUE((*spool)->Put(held).ok());
  }
  // Unix permissions out of the way: only the sandbox stands between the candidate and the spool.
  std::ofstream(candidate + "/forged.report") << "forged";
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(spool_folder.path())) {
    fs::permissions(e.path(), fs::perms::all);
  }
  fs::permissions(spool_dir, fs::perms::all);
  std::vector<std::string> spooled;
  for (const fs::directory_entry& e : fs::directory_iterator(spool_dir)) spooled.push_back(e.path().string());
  ASSERT_FALSE(spooled.empty());

  for (const std::string& file : spooled) {
    const CommandResult read = AsCandidateHost({"/bin/cat", file}, candidate);
    EXPECT_FALSE(read.outcome.success()) << file;
    EXPECT_EQ(read.stdout_output.bytes.find(session), std::string::npos) << file << " leaked the session";
    EXPECT_EQ(read.stdout_output.bytes, "") << file;
    EXPECT_NE(read.stderr_output.bytes.find("Permission denied"), std::string::npos) << read.stderr_output.bytes;
  }
  const CommandResult forged = AsCandidateHost({"/bin/cp", candidate + "/forged.report", spool_dir + "/x.report"}, candidate);
  EXPECT_FALSE(forged.outcome.success());
  EXPECT_NE(forged.stderr_output.bytes.find("Permission denied"), std::string::npos) << forged.stderr_output.bytes;
  EXPECT_FALSE(fs::exists(spool_dir + "/x.report")) << "a candidate planted a report";

  auto reopened = ResultSpool::Open(spool_dir);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->Session(), session);
  ASSERT_EQ((*reopened)->Pending().size(), 1u);
  EXPECT_EQ((*reopened)->Pending()[0].job_id(), "held-job");
}

}  // namespace
}  // namespace sparseditto
