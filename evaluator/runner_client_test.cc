// The evaluator's supervision of its runner child, against a CPU-only fake runner that speaks the real
// protocol and misbehaves on request (evaluator/testing/fake_runner.cc): every way a child can end
// becomes the right category at the right stage, and a child that faulted never serves again.
#include "evaluator/runner_client.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

RunnerClientOptions FakeOptions() {
  RunnerClientOptions options;
  options.runner_path = SPARSEDITTO_FAKE_RUNNER;
  options.stage_timeout_seconds = 2;
  options.max_resident_bytes = int64_t{512} << 20;
  options.max_log_bytes = 1 << 20;
  return options;
}

v1::EvaluateRequest Request(const std::string& id) {
  v1::EvaluateRequest request;
  request.set_candidate_id(id);
  request.mutable_task()->set_name("t");
  request.mutable_task()->add_n(16);
  request.mutable_options()->set_max_timing_seconds(0.1);
  return request;
}

TEST(RunnerClientTest, EveryWayAChildEndsBecomesTheRightCategoryAtTheRightStage) {
  struct Case {
    std::string id;
    v1::FailureCategory failure;
    v1::EvalStage stage;
    std::string detail;  // words the detail must contain
  };
  const Case cases[] = {
      {"ok-1", v1::FAILURE_CATEGORY_NONE, v1::EVAL_STAGE_DONE, "pid="},
      {"abort", v1::FAILURE_CATEGORY_CRASH, v1::EVAL_STAGE_SMOKE, "SIGABRT"},
      {"exit", v1::FAILURE_CATEGORY_CRASH, v1::EVAL_STAGE_SMOKE, "exited with code 0"},
      {"segv", v1::FAILURE_CATEGORY_CRASH, v1::EVAL_STAGE_TIMING, "SIGSEGV"},
      {"hang", v1::FAILURE_CATEGORY_TIMEOUT, v1::EVAL_STAGE_FULL_CORRECTNESS, "did not finish"},
      {"garbage", v1::FAILURE_CATEGORY_CRASH, v1::EVAL_STAGE_TIMING, "does not parse"},
      {"ok-2", v1::FAILURE_CATEGORY_NONE, v1::EVAL_STAGE_DONE, "pid="},
  };
  RunnerClient client(FakeOptions());
  for (const Case& c : cases) {
    const v1::EvalResult result = client.Evaluate(Request(c.id));
    EXPECT_EQ(result.failure(), c.failure) << c.id << ": " << result.failure_detail();
    EXPECT_EQ(result.stage_reached(), c.stage) << c.id;
    EXPECT_NE(result.failure_detail().find(c.detail), std::string::npos) << c.id << ": " << result.failure_detail();
    EXPECT_EQ(result.candidate_id(), c.id);
  }
}

// Apart from the table: touching 512 MiB can take the fake runner more than the table's 2 s stage timeout on
// a loaded machine (ctest -j), which then reads as a timeout. The limit, not the clock, must end this one.
TEST(RunnerClientTest, AChildOverItsMemoryLimitIsACrashAtItsStageAndTheNextChildServes) {
  RunnerClientOptions options = FakeOptions();
  options.stage_timeout_seconds = 60;
  RunnerClient client(options);
  const v1::EvalResult result = client.Evaluate(Request("memory"));
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_CRASH) << result.failure_detail();
  EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_FULL_CORRECTNESS);
  EXPECT_NE(result.failure_detail().find("host memory"), std::string::npos) << result.failure_detail();
  EXPECT_EQ(client.Evaluate(Request("ok-after-memory")).failure(), v1::FAILURE_CATEGORY_NONE);
}

TEST(RunnerClientTest, AHealthyChildIsReusedAndAFaultedOneIsReplaced) {
  RunnerClient client(FakeOptions());
  const std::string first = client.Evaluate(Request("ok-a")).failure_detail();
  const std::string second = client.Evaluate(Request("ok-b")).failure_detail();
  EXPECT_EQ(first, second) << "one child serves consecutive healthy candidates";
  EXPECT_EQ(client.Evaluate(Request("lost")).failure(), v1::FAILURE_CATEGORY_NONE);
  const std::string after_lost = client.Evaluate(Request("ok-c")).failure_detail();
  EXPECT_NE(after_lost, second) << "a child whose CUDA context was lost is replaced";
  EXPECT_EQ(client.Evaluate(Request("abort")).failure(), v1::FAILURE_CATEGORY_CRASH);
  const std::string after_crash = client.Evaluate(Request("ok-d")).failure_detail();
  EXPECT_NE(after_crash, after_lost) << "a crashed child is replaced";
}

TEST(RunnerClientTest, AHealthyChildIsAskedToLeaveBeforeItIsKilled) {
  const std::string marker = ::testing::TempDir() + "runner_clean_exit_" + std::to_string(getpid());
  std::remove(marker.c_str());
  {
    RunnerClient client(FakeOptions());
    EXPECT_EQ(client.Evaluate(Request("mark=" + marker)).failure(), v1::FAILURE_CATEGORY_NONE);
    EXPECT_FALSE(std::ifstream(marker).good()) << "the child is still serving";
  }
  EXPECT_TRUE(std::ifstream(marker).good()) << "the child saw end of input and exited by itself, not by SIGKILL";
  std::remove(marker.c_str());
}

TEST(RunnerClientTest, CandidateOutputIsCapturedAndCapped) {
  RunnerClient client(FakeOptions());
  const v1::EvalResult result = client.Evaluate(Request("flood"));
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE) << result.failure_detail();
  EXPECT_NE(result.run_log().find("xxxx"), std::string::npos);
  EXPECT_NE(result.run_log().find("[output truncated]"), std::string::npos);
  EXPECT_LT(result.run_log().size(), 64u << 10);
}

TEST(RunnerClientTest, SetupAndAMissingRunnerAreReported) {
  RunnerClient client(FakeOptions());
  v1::SetupTaskRequest setup;
  auto reply = client.SetupTask(setup);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->gpu_name(), "fake");

  RunnerClientOptions missing = FakeOptions();
  missing.runner_path = "/nonexistent/sparseditto-runner";
  RunnerClient broken(missing);
  const v1::EvalResult result = broken.Evaluate(Request("ok"));
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_INTERNAL) << result.failure_detail();
  EXPECT_FALSE(broken.SetupTask(setup).ok());
}

}  // namespace
}  // namespace sparseditto
