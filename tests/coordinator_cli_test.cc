// `sparseditto coordinator --serve`, `sparseditto client ...` and `sparseditto mutator` as a user runs
// them, over real gRPC on 127.0.0.1: two evaluator nodes of this test (scoring by candidate id: the
// deterministic fake, the one place it is allowed) do the coordinator's evaluations; a client submits a
// task file as a run and watches it to its end, reads its status and exports its kernel; the wrong
// token, a run submitted twice and an unknown run are refused with what was wrong; a submitted task's
// command mutator is never run by the coordinator. The coordinator is then SIGKILLed and started
// again: the finished run is still there; stopped by SIGTERM mid-run, it exits 143 and the same command
// resumes the run for its waiting watcher. A second search asks its model through a mutator service
// (a command model of the service's own models file; the coordinator holds no model).
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/subprocess.h"
#include "coordinator/server/test_cluster.h"
#include "population_store/population_store.h"
#include "rpc/testing/test_pki.h"
#include "rpc/tls.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
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
                                          "budget: {max_evaluations: 8}\nmutators:\n  - {kind: builtin, weight: 1}\n"
                                          "  - {kind: command, name: evil, weight: 4, command: [/bin/sh, -c, 'touch "
                                       << (dir() / "pwned").string() << "']}\n";
    // A model that answers every prompt with a new kernel source (the fake evaluator scores by id).
    std::ofstream(dir() / "model.sh") << "#!/bin/sh\ncat > /dev/null\nn=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')\n"
                                         "printf '```cuda\\n// a child of the local model %s\\n"
                                         "#include \"sparseditto_kernel.h\"\\n```\\n' \"$n\"\n";
    ::chmod((dir() / "model.sh").c_str(), 0755);
    std::ofstream(dir() / "models.yaml") << "mutators:\n  - {kind: command, name: local, command: [/bin/sh, "
                                         << (dir() / "model.sh").string() << "]}\n";
    std::ofstream(dir() / "long.yaml") << "name: long\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
                                          "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_90]\n"
                                          "budget: {max_evaluations: 120}\nseed: 7\n";
    std::ofstream(dir() / "llm.yaml") << "name: llm\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
                                         "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_90]\n"
                                         "budget: {max_evaluations: 40}\nseed: 9\nmutators:\n"
                                         "  - {kind: builtin, weight: 1}\n"
                                         "  - {kind: command, name: local, weight: 3, command: [/bin/false]}\n";
  }
  const fs::path& dir() const { return folder_.path(); }

  // Starts the coordinator on `listen`; its address once it listens (empty when it did not).
  std::string StartCoordinator(const std::string& listen = "127.0.0.1:0", const std::vector<std::string>& extra = {}) {
    fs::remove(dir() / "address");
    SpawnOptions spawn;
    spawn.argv = {SPARSEDITTO_BINARY, "coordinator", "--serve", "--listen", listen, "--address-file",
                  (dir() / "address").string(), "--tokens", (dir() / "tokens").string(), "--runs-dir",
                  (dir() / "runs").string(), "--cache", (dir() / "cache").string(), "--finalists", "0",
                  "--confirm-rounds", "0", "--wait-for-evaluators", "60"};
    spawn.argv.insert(spawn.argv.end(), extra.begin(), extra.end());
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
  // The coordinator writes the run's events as `search` does (search_events.h): one evaluation event
  // per evaluation, the last line the task's stop.
  const std::string events = testing_support::Slurp(dir() / "runs" / "r1" / "events.jsonl");
  int evaluation_events = 0;
  for (size_t at = events.find("\"type\":\"evaluation\""); at != std::string::npos;
       at = events.find("\"type\":\"evaluation\"", at + 1)) {
    ++evaluation_events;
  }
  EXPECT_EQ(evaluation_events, 12) << events;
  EXPECT_THAT(events.substr(events.rfind('\n', events.size() - 2) + 1), HasSubstr("\"type\":\"stop\""));

  testing_support::ShellOutcome status = Client("status r1", address);
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("run r1: done"));
  EXPECT_THAT(status.out, HasSubstr("evaluations 12/12"));
  EXPECT_THAT(status.out, HasSubstr("evaluators: 2"));

  testing_support::ShellOutcome exported = Client("export r1 --out kernels", address);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(fs::exists(dir() / "kernels" / "tiny.cu")) << exported.out << exported.err;
  EXPECT_THAT(testing_support::Slurp(dir() / "kernels" / "tiny.cu"), HasSubstr("tiny_prepare("));
  EXPECT_THAT(testing_support::Slurp(dir() / "kernels" / "tiny.h"), HasSubstr("int tiny_run("));
  EXPECT_THAT(testing_support::Slurp(dir() / "kernels" / "build.sh"), HasSubstr("'tiny.cu') \"$NVCC\""));
  for (const char* header : {"sparseditto_kernel.h", "sparseditto_weight_check.h"}) {
    EXPECT_TRUE(fs::exists(dir() / "kernels" / header)) << header;
  }
  EXPECT_NE(fs::status(dir() / "kernels" / "build.sh").permissions() & fs::perms::owner_exec, fs::perms::none);

  struct Refusal {
    const char* args;
    const char* token;
    const char* says;
  };
  const Refusal refusals[] = {
      {"submit tiny.yaml --run r2", "evaluator.token", "SubmitRun"},
      {"status r1", "evaluator.token", "GetRunStatus"},
      {"submit tiny.yaml --run r1", "client.token", "submitted already"},
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

  // The command line's budget overrides the task file's, as for `search`.
  testing_support::ShellOutcome budgeted = Client("submit tiny.yaml --run r5 --max-evaluations 5 --watch", address);
  EXPECT_EQ(budgeted.exit_code, 0) << budgeted.out << budgeted.err;
  EXPECT_THAT(budgeted.out, HasSubstr("tiny: 5 evaluations"));
  EXPECT_THAT(Client("status r5", address).out, HasSubstr("evaluations 5/5"));

  // A client's command mutator is a name to the coordinator: with no mutator service for it, its
  // mutations fail and the search goes on; its program never runs on the coordinator.
  testing_support::ShellOutcome evil = Client("submit evil.yaml --run r3 --watch", address);
  EXPECT_EQ(evil.exit_code, 0) << evil.out << evil.err;
  EXPECT_FALSE(fs::exists(dir() / "pwned")) << "the coordinator ran a client's command";

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

// A task of two archs submitted to a coordinator with an sm_80 and an sm_90 evaluator: one population
// per arch, each evaluated on its own worker, and both `client status` and `sparseditto status` (the
// run's store) show each population's arch, GPU model, evaluations and best.
TEST_F(CoordinatorCliTest, ATaskOfTwoArchsIsAPopulationPerArchAndStatusShowsEach) {
  std::ofstream(dir() / "two.yaml") << "name: two\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
                                       "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_80, sm_90a]\n"
                                       "budget: {max_evaluations: 8}\nseed: 5\n";
  const std::string address = StartCoordinator();
  ASSERT_FALSE(address.empty());
  auto channel = [&] { return rpc::MakeChannel(address, grpc::InsecureChannelCredentials(), {}); };
  GrpcCoordinatorLink link_a(channel(), {.token = kEvaluatorToken}), link_h(channel(), {.token = kEvaluatorToken});
  IdEvaluator ampere("fake A100", "sm_80"), hopper("fake H100", "sm_90");
  {
    RunningNode node_a(&link_a, &ampere, NodeOptions("ampere", "sm_80", "fake A100"));
    RunningNode node_h(&link_h, &hopper, NodeOptions("hopper", "sm_90", "fake H100"));
    testing_support::ShellOutcome submitted = Client("submit two.yaml --run mixed --watch", address);
    EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << coordinator_->captured_stderr().bytes;
    testing_support::ShellOutcome status = Client("status mixed", address);
    EXPECT_EQ(status.exit_code, 0) << status.err;
    const std::pair<const std::string*, const char*> expected[] = {
        {&submitted.out, "two@sm_80: 8 evaluations"},
        {&submitted.out, "two@sm_90a: 8 evaluations"},
        {&status.out, "task two@sm_80: "},
        {&status.out, "arch sm_80, evaluated on fake A100 (sm_80): 8"},
        {&status.out, "task two@sm_90a: "},
        {&status.out, "arch sm_90a, evaluated on fake H100 (sm_90): 8"}};
    for (const auto& [out, words] : expected) EXPECT_THAT(*out, HasSubstr(words));
    std::cerr << status.out;
  }
  EXPECT_THAT(ampere.tasks, ::testing::ElementsAre(::testing::Key("two@sm_80")));
  EXPECT_THAT(hopper.tasks, ::testing::ElementsAre(::testing::Key("two@sm_90a")));

  const testing_support::ShellOutcome local = testing_support::RunShell(
      fmt::format("'{}' status mixed --runs-dir '{}'", SPARSEDITTO_BINARY, (dir() / "runs").string()), dir());
  EXPECT_EQ(local.exit_code, 0) << local.err;
  for (const char* words : {"task two@sm_80 (the sm_80 population of two): done", "arch sm_80, evaluated on fake A100 (sm_80)",
                            "task two@sm_90a (the sm_90a population of two): done",
                            "arch sm_90a, evaluated on fake H100 (sm_90)", "evaluations 8/8", "best: two@sm_80.",
                            "best: two@sm_90a."}) {
    EXPECT_THAT(local.out, HasSubstr(words)) << local.out;
  }
  std::cerr << local.out;
  coordinator_->Kill();
  (void)coordinator_->WaitFor(DeadlineAfter(10));  // its log read to the end
  EXPECT_THAT(coordinator_->captured_stderr().bytes, HasSubstr("task two@sm_80: evaluated on fake A100 (sm_80) only"));
  EXPECT_THAT(coordinator_->captured_stderr().bytes, HasSubstr("task two@sm_90a: evaluated on fake H100 (sm_90) only"));
}

TEST_F(CoordinatorCliTest, ASearchAsksItsModelThroughAMutatorServiceThatHoldsIt) {
  WriteOwnerOnly(dir() / "tokens", fmt::format("evaluator {}\nclient {}\nmutator {}\n", kEvaluatorToken, kClientToken,
                                               kMutatorToken));
  WriteOwnerOnly(dir() / "mutator.token", kMutatorToken);
  const std::string address = StartCoordinator();
  ASSERT_FALSE(address.empty());
  auto channel = [&] { return rpc::MakeChannel(address, grpc::InsecureChannelCredentials(), {}); };
  GrpcCoordinatorLink link_a(channel(), {.token = kEvaluatorToken}), link_b(channel(), {.token = kEvaluatorToken});
  IdEvaluator evaluator_a, evaluator_b;
  RunningNode node_a(&link_a, &evaluator_a, "a"), node_b(&link_b, &evaluator_b, "b");
  SpawnOptions spawn;
  spawn.argv = {SPARSEDITTO_BINARY, "mutator", "--coordinator", address, "--models", (dir() / "models.yaml").string(),
                "--token-file", (dir() / "mutator.token").string(), "--name", "test-mutator"};
  spawn.inherit_variables = {"PATH", "HOME"};
  auto mutator = Spawn(spawn);
  ASSERT_TRUE(mutator.ok()) << mutator.status();
  // The wrong token is refused for good (exit 1, saying which call).
  testing_support::ShellOutcome refused = testing_support::RunShell(
      fmt::format("'{}' mutator --coordinator {} --models '{}' --token-file '{}'", SPARSEDITTO_BINARY, address,
                  (dir() / "models.yaml").string(), (dir() / "client.token").string()),
      dir());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("RegisterMutator")) << refused.err;

  testing_support::ShellOutcome submitted = Client("submit llm.yaml --run with_model --watch", address);
  EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << coordinator_->captured_stderr().bytes;
  testing_support::ShellOutcome status = Client("status with_model", address);
  EXPECT_THAT(status.out, HasSubstr("mutator services: 1"));
  EXPECT_THAT(status.out, HasSubstr("test-mutator (model local, 1 at once)"));
  std::cerr << status.out << submitted.out;

  ::kill((*mutator)->pid(), SIGTERM);
  auto ended = (*mutator)->WaitFor(DeadlineAfter(30));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->exit_code, 128 + SIGTERM) << ended->ToString() << (*mutator)->captured_stderr().bytes;
  EXPECT_THAT((*mutator)->captured_stderr().bytes, ::testing::ContainsRegex("answers: [1-9][0-9]* accepted"));
  std::cerr << (*mutator)->captured_stderr().bytes;

  // The children the model made are in the run's store, with the model's name.
  auto store = PopulationStore::OpenReadOnly((dir() / "runs" / "with_model" / "store").string());
  ASSERT_TRUE(store.ok()) << store.status();
  auto candidates = (*store)->ListCandidates("with_model", "llm");
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  int from_model = 0;
  for (const v1::Candidate& c : *candidates) from_model += c.model() == "local" ? 1 : 0;
  coordinator_->Kill();
  (void)coordinator_->WaitFor(DeadlineAfter(10));
  std::string operators;
  for (const v1::Candidate& c : *candidates) operators += fmt::format("{}:{}/{} ", c.id(), static_cast<int>(c.operator_()), c.model());
  EXPECT_GE(from_model, 1) << "no child of the mutator service's model: " << operators << "\n"
                           << coordinator_->captured_stderr().bytes;
}

// An IdEvaluator that takes 40 ms an evaluation, so that a run is still going when it is stopped.
class SlowIdEvaluator : public IdEvaluator {
 public:
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    return IdEvaluator::Evaluate(task, candidate, seed);
  }
};

// SIGTERM in the middle of a run: the coordinator exits 143 at once, its watcher hears it is stopping
// and waits; started again on the same address, it resumes the run, the evaluator node (never told to
// drain) reports to it, the watcher sees the run done, and no candidate was evaluated twice.
TEST_F(CoordinatorCliTest, SigtermStopsTheCoordinatorAndTheSameCommandResumesTheRun) {
  const std::string address = StartCoordinator();
  ASSERT_FALSE(address.empty());
  GrpcCoordinatorLink link(rpc::MakeChannel(address, grpc::InsecureChannelCredentials(), {}), {.token = kEvaluatorToken});
  SlowIdEvaluator evaluator;
  auto node = std::make_unique<RunningNode>(&link, &evaluator, "slow");

  SpawnOptions spawn;
  spawn.argv = {SPARSEDITTO_BINARY, "client", "submit", (dir() / "long.yaml").string(), "--run", "long", "--watch",
                "--coordinator", address, "--token-file", (dir() / "client.token").string()};
  spawn.inherit_variables = {"PATH", "HOME"};
  auto watcher = Spawn(spawn);
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  const Deadline by = DeadlineAfter(60);
  while (Clock::now() < by && (*watcher)->captured_stdout().bytes.find("long: 10/") == std::string::npos) {
    (void)(*watcher)->Pump(DeadlineAfter(0.05));
    (void)coordinator_->Pump(DeadlineAfter(0));
  }
  ASSERT_THAT((*watcher)->captured_stdout().bytes, HasSubstr("long: 10/")) << coordinator_->captured_stderr().bytes;

  ASSERT_EQ(::kill(coordinator_->pid(), SIGTERM), 0);
  absl::StatusOr<ExitOutcome> stopped = coordinator_->WaitFor(DeadlineAfter(10));
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->kind, ExitOutcome::Kind::kExited) << stopped->ToString();
  EXPECT_EQ(stopped->exit_code, 143) << stopped->ToString();
  EXPECT_THAT(coordinator_->captured_stderr().bytes, HasSubstr("SIGTERM: stopping"));

  const std::string again = StartCoordinator(address);
  ASSERT_EQ(again, address) << coordinator_->captured_stderr().bytes;
  absl::StatusOr<ExitOutcome> watched = (*watcher)->WaitFor(DeadlineAfter(120));
  ASSERT_TRUE(watched.ok()) << watched.status();
  EXPECT_TRUE(watched->success()) << watched->ToString() << (*watcher)->captured_stdout().bytes
                                  << (*watcher)->captured_stderr().bytes << coordinator_->captured_stderr().bytes;
  EXPECT_THAT((*watcher)->captured_stderr().bytes, HasSubstr("the coordinator is stopping"));
  EXPECT_THAT((*watcher)->captured_stdout().bytes, HasSubstr("run long done"));
  node->Stop();
  int evaluated = 0;
  for (const auto& [id, calls] : evaluator.calls) {
    EXPECT_EQ(calls, 1) << id << " was evaluated " << calls << " times";
    evaluated += calls;
  }
  EXPECT_GE(evaluated, 120);
  testing_support::ShellOutcome status = Client("status long", address);
  EXPECT_THAT(status.out, HasSubstr("evaluations 120/120")) << status.err;
  coordinator_->Kill();
}

// Mutual TLS from PEM files through the binaries: a coordinator given its certificate, key and the
// client CA serves an evaluator node and a client that present certificates of that CA; a client
// without TLS, one trusting another CA and one presenting a stranger's certificate are refused.
TEST_F(CoordinatorCliTest, MutualTlsFromPemFilesEndToEnd) {
  const fs::path pki_dir = dir() / "pki";
  fs::create_directories(pki_dir);
  absl::StatusOr<rpc::testing_support::TestPki> pki = rpc::testing_support::MakeTestPki(pki_dir);
  ASSERT_TRUE(pki.ok()) << pki.status();
  const std::string address =
      StartCoordinator("127.0.0.1:0", {"--tls-cert", pki->server_cert.string(), "--tls-key", pki->server_key.string(),
                                       "--tls-client-ca", pki->client_ca.string()});
  ASSERT_FALSE(address.empty());
  // Its "serving on" line follows the address file: wait for it.
  const Deadline said_by = DeadlineAfter(10);
  while (Clock::now() < said_by && coordinator_->captured_stderr().bytes.find("serving") == std::string::npos) {
    (void)coordinator_->Pump(DeadlineAfter(0.05));
  }
  EXPECT_THAT(coordinator_->captured_stderr().bytes, HasSubstr("(TLS)"));
  auto credentials = rpc::MakeChannelCredentials(rpc::ClientTls{.ca_path = pki->server_ca.string(),
                                                                .cert_chain_path = pki->client_cert.string(),
                                                                .private_key_path = pki->client_key.string()});
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  GrpcCoordinatorLink link(rpc::MakeChannel(address, *credentials, {}), {.token = kEvaluatorToken});
  IdEvaluator evaluator;
  auto node = std::make_unique<RunningNode>(&link, &evaluator, "tls");

  const std::string mutual = fmt::format("--tls-ca {} --tls-cert {} --tls-key {}", pki->server_ca.string(),
                                         pki->client_cert.string(), pki->client_key.string());
  testing_support::ShellOutcome submitted = Client("submit tiny.yaml --run r1 --watch " + mutual, address);
  EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << coordinator_->captured_stderr().bytes;
  EXPECT_THAT(submitted.out, HasSubstr("run r1 done"));
  EXPECT_GE(evaluator.calls.size(), 12u) << "the node evaluated over TLS";

  struct Refusal {
    std::string name, tls;
  };
  const Refusal refusals[] = {
      {"no TLS", ""},
      {"no client certificate", "--tls-ca " + pki->server_ca.string()},
      {"another CA trusted", fmt::format("--tls-ca {} --tls-cert {} --tls-key {}", pki->other_ca.string(),
                                         pki->client_cert.string(), pki->client_key.string())},
      {"a stranger's certificate", fmt::format("--tls-ca {} --tls-cert {} --tls-key {}", pki->server_ca.string(),
                                               pki->other_client_cert.string(), pki->other_client_key.string())},
  };
  for (const Refusal& r : refusals) {
    testing_support::ShellOutcome refused = Client("status r1 --timeout 5 " + r.tls, address);
    EXPECT_EQ(refused.exit_code, 1) << r.name << ": " << refused.out << refused.err;
    EXPECT_THAT(refused.out, Not(HasSubstr("run r1"))) << r.name;
  }
  node->Stop();
  coordinator_->Kill();
}

// The evaluator process (the real binary, no GPU here: --arch given) on SIGTERM drains and exits 143
// itself: every thread blocks the signal, so the default action never ends it with a job unreported.
TEST_F(CoordinatorCliTest, AnEvaluatorProcessDrainsOnSigterm) {
  const std::string address = StartCoordinator();
  ASSERT_FALSE(address.empty());
  SpawnOptions spawn;
  spawn.argv = {SPARSEDITTO_BINARY, "evaluator", "--coordinator", address, "--token-file",
                (dir() / "evaluator.token").string(), "--arch", "sm_90", "--name", "cli-evaluator", "--cache",
                (dir() / "evaluator-cache").string()};
  spawn.inherit_variables = {"PATH", "HOME"};
  spawn.environment["SPARSEDITTO_ALLOW_MISSING_LAYERS"] = "1";  // only registration is asked of it here
  auto evaluator = Spawn(spawn);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  const Deadline by = DeadlineAfter(60);
  while (Clock::now() < by && coordinator_->captured_stderr().bytes.find("cli-evaluator") == std::string::npos) {
    (void)coordinator_->Pump(DeadlineAfter(0.05));
    (void)(*evaluator)->Pump(DeadlineAfter(0));
  }
  ASSERT_THAT(coordinator_->captured_stderr().bytes, HasSubstr("cli-evaluator")) << (*evaluator)->captured_stderr().bytes;
  ASSERT_EQ(::kill((*evaluator)->pid(), SIGTERM), 0);
  absl::StatusOr<ExitOutcome> ended = (*evaluator)->WaitFor(DeadlineAfter(30));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->kind, ExitOutcome::Kind::kExited) << ended->ToString() << (*evaluator)->captured_stderr().bytes;
  EXPECT_EQ(ended->exit_code, 128 + SIGTERM) << ended->ToString();
  EXPECT_THAT((*evaluator)->captured_stderr().bytes, HasSubstr("SIGTERM: finishing the job in hand"));
  EXPECT_THAT((*evaluator)->captured_stderr().bytes, HasSubstr("jobs run; reports:"));
  coordinator_->Kill();
}

}  // namespace
}  // namespace sparseditto
