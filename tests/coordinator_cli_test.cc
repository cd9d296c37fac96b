// `sparseditto coordinator --serve` and `sparseditto client ...` as a user runs them, over real gRPC on
// 127.0.0.1: two evaluator nodes of this test (scoring by candidate id: the deterministic fake, the one
// place it is allowed) do the coordinator's evaluations; a client submits a task file as a run and
// watches it to its end, reads its status and exports its kernel; the wrong token, a run submitted
// twice, a client's command mutator and an unknown run are refused with what was wrong. The
// coordinator is then SIGKILLed and started again: the finished run is still there.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/subprocess.h"
#include "coordinator/server/test_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using namespace cluster_test;  // NOLINT: the distributed tests' fixture
namespace fs = std::filesystem;

void WriteOwnerOnly(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0600);
}

class CoordinatorCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    WriteOwnerOnly(dir() / "tokens", fmt::format("evaluator {}\nclient {}\n", kEvaluatorToken, kClientToken));
    WriteOwnerOnly(dir() / "client.token", kClientToken);
    WriteOwnerOnly(dir() / "evaluator.token", kEvaluatorToken);
    std::ofstream(dir() / "tiny.yaml") << "name: tiny\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
                                          "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_90]\n"
                                          "budget: {max_evaluations: 12}\nseed: 5\n";
    std::ofstream(dir() / "evil.yaml") << "name: evil\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
                                          "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_90]\n"
                                          "mutators:\n  - {kind: command, command: [/bin/sh, -c, 'id']}\n";
  }
  const fs::path& dir() const { return folder_.path(); }

  // Starts the coordinator; its address once it listens (empty when it did not).
  std::string StartCoordinator() {
    fs::remove(dir() / "address");
    SpawnOptions spawn;
    spawn.argv = {SPARSEDITTO_BINARY, "coordinator", "--serve", "--listen", "127.0.0.1:0", "--address-file",
                  (dir() / "address").string(), "--tokens", (dir() / "tokens").string(), "--runs-dir",
                  (dir() / "runs").string(), "--cache", (dir() / "cache").string(), "--finalists", "0",
                  "--confirm-rounds", "0", "--wait-for-evaluators", "60"};
    spawn.inherit_variables = {"PATH", "HOME"};
    auto spawned = Spawn(spawn);
    EXPECT_TRUE(spawned.ok()) << spawned.status();
    if (!spawned.ok()) return "";
    coordinator_ = *std::move(spawned);
    const Deadline by = DeadlineAfter(30);
    while (Clock::now() < by && !fs::exists(dir() / "address")) (void)coordinator_->Pump(DeadlineAfter(0.05));
    std::string address;
    std::ifstream(dir() / "address") >> address;
    EXPECT_FALSE(address.empty()) << coordinator_->captured_stderr().bytes;
    return address;
  }
  testing_support::ShellOutcome Client(const std::string& args, const std::string& address,
                                       const std::string& token = "client.token") {
    return testing_support::RunShell(fmt::format("cd '{}' && '{}' client {} --coordinator {} --token-file {}",
                                                 dir().string(), SPARSEDITTO_BINARY, args, address, token),
                                     dir());
  }

  testing_support::TempFolder folder_{"coordinator_cli_test"};
  std::unique_ptr<ChildProcess> coordinator_;
};

TEST_F(CoordinatorCliTest, AClientSubmitsWatchesReadsAndExportsARunThatTwoEvaluatorNodesSearch) {
  const std::string address = StartCoordinator();
  ASSERT_FALSE(address.empty());
  auto channel = [&] { return rpc::MakeChannel(address, grpc::InsecureChannelCredentials(), {}); };
  GrpcCoordinatorLink link_a(channel(), {.token = kEvaluatorToken}), link_b(channel(), {.token = kEvaluatorToken});
  IdEvaluator evaluator_a, evaluator_b;
  auto node_a = std::make_unique<RunningNode>(&link_a, &evaluator_a, "a");
  auto node_b = std::make_unique<RunningNode>(&link_b, &evaluator_b, "b");

  // Submitted and watched to its end.
  testing_support::ShellOutcome submitted = Client("submit tiny.yaml --run r1 --watch", address);
  EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << coordinator_->captured_stderr().bytes;
  EXPECT_THAT(submitted.out, HasSubstr("run r1 queued (0 run(s) ahead of it)"));
  EXPECT_THAT(submitted.out, HasSubstr("tiny: 12 evaluations"));
  EXPECT_THAT(submitted.out, HasSubstr("run r1 done"));

  testing_support::ShellOutcome status = Client("status r1", address);
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("run r1: done"));
  EXPECT_THAT(status.out, HasSubstr("evaluations 12/12"));
  EXPECT_THAT(status.out, HasSubstr("evaluators: 2"));

  testing_support::ShellOutcome exported = Client("export r1 --out kernels", address);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(fs::exists(dir() / "kernels" / "tiny.cu")) << exported.out << exported.err;
  EXPECT_THAT(testing_support::Slurp(dir() / "kernels" / "tiny.cu"), HasSubstr("tiny"));

  struct Refusal {
    const char* args;
    const char* token;
    const char* says;
  };
  const Refusal refusals[] = {
      {"submit tiny.yaml --run r2", "evaluator.token", "SubmitRun"},
      {"status r1", "evaluator.token", "GetRunStatus"},
      {"submit tiny.yaml --run r1", "client.token", "submitted already"},
      {"submit evil.yaml --run r3", "client.token", "tasks[0].mutators[0]: this coordinator takes only the built-in"},
      {"status nope", "client.token", "no run nope"},
      {"watch nope", "client.token", "no run nope"},
      {"submit tiny.yaml --run ../r4", "client.token", "run name"},
  };
  for (const Refusal& r : refusals) {
    testing_support::ShellOutcome refused = Client(r.args, address, r.token);
    EXPECT_EQ(refused.exit_code, 1) << r.args << ": " << refused.out << refused.err;
    EXPECT_THAT(refused.err, HasSubstr(r.says)) << r.args;
  }
  std::cerr << "what the client printed:\n" << submitted.out << status.out << exported.out;
  int64_t jobs = node_a->node.counts().jobs_run + node_b->node.counts().jobs_run;
  EXPECT_GE(jobs, 12) << "the evaluations were done by the nodes";

  // Killed and started again: the finished run is still known, with its records.
  coordinator_->Kill();
  ASSERT_TRUE(coordinator_->WaitFor(DeadlineAfter(10)).ok());
  node_a->Stop();
  node_b->Stop();
  const std::string again = StartCoordinator();
  ASSERT_FALSE(again.empty());
  testing_support::ShellOutcome after = Client("status r1", again);
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_THAT(after.out, HasSubstr("run r1: done"));
  EXPECT_THAT(after.out, HasSubstr("evaluations 12/12"));
  coordinator_->Kill();
}

}  // namespace
}  // namespace sparseditto
