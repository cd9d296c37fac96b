// `sparseditto coordinator --serve --http-listen 127.0.0.1:0` as a user scripting over HTTP meets it:
// real HTTP (cpp-httplib's client) to the binary, two evaluator nodes of this test over gRPC doing the
// evaluations (scoring by candidate id: the deterministic fake, the one place it is allowed). A JSON
// task is submitted, its events streamed to the run's end, its status polled to done and its kernel
// exported; the gRPC client sees the same run. Stopped by SIGTERM, the coordinator ends an open event
// stream with "the coordinator is stopping".
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "common/subprocess.h"
#include "coordinator/server/test_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using namespace cluster_test;  // NOLINT: the distributed tests' fixture
using nlohmann::json;
namespace fs = std::filesystem;

std::string JsonTask(const std::string& run, int evaluations) {
  return json{{"run", run},
              {"task", {{"name", "tiny"}, {"dtype", "fp16"}, {"pattern", {{"family", "unstructured"}, {"sparsity", 0.9}}},
                        {"matrix", {{"generated", {{"rows", 256}, {"cols", 256}}}}}, {"n", {16}},
                        {"arch", {"sm_90"}}, {"budget", {{"max_evaluations", evaluations}}}, {"seed", 5}}}}
      .dump(2);
}

// IdEvaluator taking 10 ms an evaluation, so that a run of 200 lasts while the test stops its coordinator.
class SlowEvaluator : public IdEvaluator {
 public:
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return IdEvaluator::Evaluate(task, candidate, seed);
  }
};

class CoordinatorHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    std::ofstream(dir() / "tokens") << fmt::format("evaluator {}\nclient {}\n", kEvaluatorToken, kClientToken);
    ::chmod((dir() / "tokens").c_str(), 0600);
    std::ofstream(dir() / "client.token") << kClientToken;
    ::chmod((dir() / "client.token").c_str(), 0600);
    SpawnOptions spawn;
    spawn.argv = {SPARSEDITTO_BINARY, "coordinator", "--serve", "--listen", "127.0.0.1:0", "--address-file",
                  (dir() / "address").string(), "--http-listen", "127.0.0.1:0", "--http-address-file",
                  (dir() / "http_address").string(), "--tokens", (dir() / "tokens").string(), "--runs-dir",
                  (dir() / "runs").string(), "--cache", (dir() / "cache").string(), "--finalists", "0",
                  "--confirm-rounds", "0", "--wait-for-evaluators", "60"};
    spawn.inherit_variables = {"PATH", "HOME"};
    auto spawned = Spawn(spawn);
    ASSERT_TRUE(spawned.ok()) << spawned.status();
    coordinator_ = *std::move(spawned);
    const Deadline by = DeadlineAfter(30);
    while (Clock::now() < by && !fs::exists(dir() / "address")) (void)coordinator_->Pump(DeadlineAfter(0.05));
    std::ifstream(dir() / "address") >> address_;
    std::string http;
    std::ifstream(dir() / "http_address") >> http;  // written before the gRPC address
    ASSERT_FALSE(address_.empty() || http.empty()) << coordinator_->captured_stderr().bytes;
    EXPECT_THAT(http, ::testing::StartsWith("127.0.0.1:"));
    http_port_ = std::stoi(http.substr(http.rfind(':') + 1));
  }
  void TearDown() override {
    if (coordinator_) coordinator_->Kill();
  }
  const fs::path& dir() const { return folder_.path(); }
  httplib::Client Http() const {
    httplib::Client client("127.0.0.1", http_port_);
    client.set_bearer_token_auth(kClientToken);
    client.set_read_timeout(std::chrono::seconds(120));
    return client;
  }
  std::unique_ptr<GrpcCoordinatorLink> Link() const {
    return std::make_unique<GrpcCoordinatorLink>(rpc::MakeChannel(address_, grpc::InsecureChannelCredentials(), {}),
                                                 GrpcCoordinatorLinkOptions{.token = kEvaluatorToken});
  }
  // The event stream's body; `first` is set at its first chunk.
  std::string Stream(const std::string& run, std::promise<void>* first = nullptr) const {
    std::string body;
    auto result = Http().Get(("/v1/runs/" + run + "/events").c_str(), [&](const char* data, size_t size) {
      if (first != nullptr && body.empty()) first->set_value();
      body.append(data, size);
      return true;
    });
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    return body;
  }

  testing_support::TempFolder folder_{"coordinator_http_test"};
  std::unique_ptr<ChildProcess> coordinator_;
  std::string address_;
  int http_port_ = 0;
};

TEST_F(CoordinatorHttpTest, AJsonTaskSubmittedStreamedPolledToDoneAndExported) {
  auto link_a = Link(), link_b = Link();
  IdEvaluator evaluator_a, evaluator_b;
  RunningNode node_a(link_a.get(), &evaluator_a, "a"), node_b(link_b.get(), &evaluator_b, "b");
  httplib::Client http = Http();
  auto submitted = http.Post("/v1/runs", JsonTask("r1", 12), "application/json");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 201) << submitted->body << coordinator_->captured_stderr().bytes;

  // The stream from the first event the coordinator holds to the run's end, one JSON object a line.
  std::vector<json> events;
  std::istringstream lines(Stream("r1"));
  for (std::string line; std::getline(lines, line);) events.push_back(json::parse(line));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["ended"]["state"], "RUN_STATE_DONE") << events.back().dump();
  int progress = 0;
  for (const json& e : events) progress += e.contains("progress") ? 1 : 0;
  EXPECT_GT(progress, 0) << "the search's progress reached the stream";

  json status = json::object();
  for (int poll = 0; poll < 600 && status.value("state", "") != "RUN_STATE_DONE"; ++poll) {
    auto answer = http.Get("/v1/runs/r1");
    ASSERT_TRUE(answer);
    ASSERT_EQ(answer->status, 200) << answer->body;
    status = json::parse(answer->body);
    if (status.value("state", "") != "RUN_STATE_DONE") std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(status["state"], "RUN_STATE_DONE") << status.dump();
  EXPECT_EQ(status["tasks"][0]["state"], "budget_exhausted") << "its 12 evaluations spent";
  EXPECT_EQ(status["tasks"][0]["evaluations"], "12");
  EXPECT_EQ(status["workers"].size(), 2u) << "the two evaluator nodes";

  auto exported = http.Get("/v1/runs/r1/export");
  ASSERT_TRUE(exported);
  ASSERT_EQ(exported->status, 200) << exported->body;
  const json files = json::parse(exported->body)["files"];
  // What `export` writes for a task (coordinator/search/export_wrapper.h): the kernel with its per-task
  // entries, their declarations and the build script; the client adds the ABI headers of its own install.
  ASSERT_EQ(files.size(), 3u) << exported->body;
  EXPECT_EQ(files[0]["name"], "tiny.cu");
  EXPECT_THAT(files[0]["content"].get<std::string>(), HasSubstr("SPARSEDITTO_EXPORT int tiny_prepare("));
  EXPECT_EQ(files[1]["name"], "tiny.h");
  EXPECT_EQ(files[2]["name"], "build.sh");

  // One run, whichever door: the gRPC client reads it, and a second submission of its name is 409.
  testing_support::ShellOutcome grpc_status = testing_support::RunShell(
      fmt::format("'{}' client status r1 --coordinator {} --token-file '{}'", SPARSEDITTO_BINARY, address_,
                  (dir() / "client.token").string()),
      dir());
  EXPECT_THAT(grpc_status.out, HasSubstr("run r1: done")) << grpc_status.err;
  auto again = http.Post("/v1/runs", JsonTask("r1", 12), "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_GE(node_a.node.counts().jobs_run + node_b.node.counts().jobs_run, 12);
}

TEST_F(CoordinatorHttpTest, SigtermEndsAnOpenEventStreamWithTheCoordinatorsStop) {
  auto link = Link();
  SlowEvaluator evaluator;
  RunningNode node(link.get(), &evaluator, "slow");
  auto submitted = Http().Post("/v1/runs", JsonTask("long", 200), "application/json");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 201) << submitted->body;
  std::promise<void> first;
  std::future<std::string> stream = std::async(std::launch::async, [&] { return Stream("long", &first); });
  first.get_future().wait();
  ASSERT_EQ(::kill(coordinator_->pid(), SIGTERM), 0);
  absl::StatusOr<ExitOutcome> stopped = coordinator_->WaitFor(DeadlineAfter(30));
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->exit_code, 143) << stopped->ToString();
  const std::string body = stream.get();
  const std::string last = body.substr(body.rfind('\n', body.size() - 2) + 1);
  EXPECT_THAT(last, HasSubstr("the coordinator is stopping")) << body;
  EXPECT_THAT(last, HasSubstr("UNAVAILABLE"));
  node.Stop();
  coordinator_.reset();
}

}  // namespace
}  // namespace sparseditto
