// kill -9 of the coordinator (issue 25): a coordinator process (coordinator_kill_child) serves a search
// over gRPC on 127.0.0.1 to two evaluator nodes of this test (the deterministic fake evaluator); it is
// SIGKILLed mid-search and started again on the same store and job journal. The workers reconnect as
// their sessions, report what they finished while it was down, and the search ends as an
// uninterrupted embedded one: the same records, and no candidate evaluated twice (every result
// acknowledged before the kill was kept).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/status_format.h"
#include "common/subprocess.h"
#include "coordinator/server/coordinator_kill_setup.h"
#include "evaluator/node/evaluator_node.h"
#include "evaluator/node/grpc_coordinator_link.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "rpc/connection_options.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

struct Node {
  Node(const std::string& target, const testing::FakeLandscape& landscape, const std::string& name)
      : evaluator(landscape),
        link(rpc::MakeChannel(target, grpc::InsecureChannelCredentials(), {.max_reconnect_backoff = absl::Milliseconds(200)}),
             GrpcCoordinatorLinkOptions{.token = kill_test::kToken, .call_timeout = absl::Seconds(2)}),
        spool(*ResultSpool::Open("")),
        node(&link, &evaluator, spool.get(), Options(name)) {
    thread = std::thread([this] { ended = node.Run(); });
  }
  ~Node() { Stop(); }
  void Stop() {
    node.Drain();
    if (thread.joinable()) thread.join();
  }
  static EvaluatorNodeOptions Options(const std::string& name) {
    EvaluatorNodeOptions o;
    o.worker.set_name(name);
    o.worker.set_arch("sm_90");
    o.pull_wait = absl::Milliseconds(300);
    o.initial_backoff = absl::Milliseconds(20);
    o.max_backoff = absl::Milliseconds(200);
    o.jitter_seed = 3;
    return o;
  }
  testing::CountingEvaluator evaluator;  // used by the node's thread only, read after Stop
  GrpcCoordinatorLink link;
  std::unique_ptr<ResultSpool> spool;
  EvaluatorNode node;
  absl::Status ended;
  std::thread thread;
};

std::map<std::string, std::string> Records(const std::string& store_dir, const std::string& task) {
  std::map<std::string, std::string> out;
  auto store = PopulationStore::OpenReadOnly(store_dir);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return out;
  auto candidates = (*store)->ListCandidates("run", task);
  if (!candidates.ok()) return out;
  for (const v1::Candidate& c : *candidates) {
    if (auto e = (*store)->GetEvaluation("run", c.id()); e.ok()) {
      out[c.id()] = fmt::format("{} {}", e->fitness(), static_cast<int>(e->failure()));
    }
  }
  return out;
}

TEST(CoordinatorKillTest, AKilledCoordinatorRestartedOnItsJournalEndsTheSearchLikeAnUninterruptedOne) {
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  ASSERT_TRUE(seeds.ok());
  const v1::Task task = kill_test::Task();
  const testing::FakeLandscape landscape = testing::Landscape(task, *seeds);
  testing_support::TempFolder folder("coordinator_kill_test");
  ASSERT_TRUE(folder.ok());

  // The uninterrupted embedded search, for comparison.
  testing::CountingEvaluator alone(landscape);
  absl::Status error;
  auto embedded_store = testing::OpenTestStore(folder.path() / "embedded", &error);
  ASSERT_NE(embedded_store, nullptr) << error;
  auto expected = RunTaskSearch(*embedded_store, "run", task, *seeds, alone, kill_test::LoopOptions());
  ASSERT_TRUE(expected.ok()) << expected.status();
  embedded_store.reset();

  const std::string store_dir = (folder.path() / "store").string(), journal_dir = (folder.path() / "jobs").string();
  auto start = [&](int port) {
    SpawnOptions spawn;
    spawn.argv = {COORDINATOR_KILL_CHILD, store_dir, journal_dir, std::to_string(port)};
    return Spawn(spawn);
  };
  // The first coordinator takes a port the OS picks; the second listens on the same one, so the
  // workers' address stays the same across the restart (no SO_REUSEPORT: a port taken meanwhile would
  // fail the bind loudly, not be shared).
  auto first = start(0);
  ASSERT_TRUE(first.ok()) << first.status();
  const Deadline listening_by = DeadlineAfter(30);
  while (Clock::now() < listening_by && (*first)->captured_stdout().bytes.find('\n') == std::string::npos) {
    ASSERT_TRUE((*first)->Pump(DeadlineAfter(0.05)).ok());
  }
  int port = 0;
  ASSERT_EQ(std::sscanf((*first)->captured_stdout().bytes.c_str(), "listening %d", &port), 1)
      << (*first)->captured_stderr().bytes;
  Node a(fmt::format("127.0.0.1:{}", port), landscape, "a"), b(fmt::format("127.0.0.1:{}", port), landscape, "b");
  auto accepted = [&] { return a.node.counts().accepted + b.node.counts().accepted; };
  const Deadline kill_by = DeadlineAfter(60);
  while (accepted() < 14 && Clock::now() < kill_by) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_GE(accepted(), 14) << (*first)->captured_stderr().bytes;
  (*first)->Kill();  // SIGKILL, mid-search: jobs in flight, results acknowledged and not yet committed
  ASSERT_TRUE((*first)->WaitFor(DeadlineAfter(10)).ok());
  const int64_t before_restart = accepted();

  auto second = start(port);
  ASSERT_TRUE(second.ok()) << second.status();
  auto outcome = (*second)->WaitFor(DeadlineAfter(120));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->success()) << outcome->ToString() << "\n" << (*second)->captured_stderr().bytes;
  a.Stop();
  b.Stop();
  EXPECT_THAT((*second)->captured_stdout().bytes,
              ::testing::HasSubstr(fmt::format("done {} {} ", expected->evaluations, expected->best_candidate_id)));
  EXPECT_EQ(Records(store_dir, task.name()), Records((folder.path() / "embedded").string(), task.name()))
      << "the same candidates with the same results";
  std::map<std::string, int> calls = a.evaluator.calls_by_id;
  for (const auto& [id, n] : b.evaluator.calls_by_id) calls[id] += n;
  EXPECT_EQ(calls, alone.calls_by_id) << "no candidate evaluated twice, none left out\nfirst coordinator:\n"
                                      << (*first)->captured_stderr().bytes << "second:\n"
                                      << (*second)->captured_stderr().bytes;
  const EvaluatorNodeCounts ca = a.node.counts(), cb = b.node.counts();
  std::cerr << fmt::format("accepted {} before the kill, {} in all; registrations {} + {}; duplicate {} stale {} "
                           "not held {}\n",
                           before_restart, accepted(), ca.registrations, cb.registrations, ca.duplicate + cb.duplicate,
                           ca.stale + cb.stale, ca.not_held + cb.not_held);
  EXPECT_GT(accepted(), before_restart) << "the workers came back to the restarted coordinator";
}

}  // namespace
}  // namespace sparseditto
