// kill -9 of an LLM search PROCESS while model calls are in flight: llm_kill_child searches one task
// with a model served by this process's local protocol server (three calls at once, each a new child
// after about 0.2 s) and is SIGKILLed inside evaluations and just before a child or an evaluation is
// stored; each time it is started again on the same store, then run to its end. Then:
//   * the task ends at exactly its budget of evaluations;
//   * nothing is evaluated twice except the candidate in flight at a kill that caught it
//     (RunState.in_flight_candidate_id), once more per such kill;
//   * every model child stored has its prompt and answer, and no plan is left asked at the end.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "coordinator/testing/kill_runner.h"
#include "coordinator/search/llm_search_mutator.h"
#include "coordinator/testing/llm_answers.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

std::string RunChild(const fs::path& root, const std::string& url, const std::string& stop) {
  return testing::RunUntilStopped({LLM_KILL_CHILD, (root / "store").string(), (root / "calls.log").string(), url},
                                  stop);
}

TEST(LlmKillTest, KilledWithCallsInFlightAndResumedEvaluatesNothingTwice) {
  const fs::path root = fs::path(::sparseditto::testing_support::ProcessTempDir()) /
                        fmt::format("llm_kill_test.{}", getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  std::unique_ptr<llm::testing::FakeLlmServer> server = llm::testing::FakeLlmServer::Start(/*concurrent=*/true);
  ASSERT_NE(server, nullptr);
  // The server outlives the children, so its request numbers (and so the children) stay unique.
  testing::AnswerWithNewChildren(*server, 0.2, nullptr);

  const std::vector<std::string> stops = {
      "evaluate:3",                // inside a child's evaluation, calls in flight
      "write:CommitCandidates:2",  // an answer arrived, just before it is stored
      "evaluate:4",
      "write:CommitEvaluation:3",  // evaluated, just before the result is committed
  };
  std::map<std::string, int> extra;  // candidate id -> kills that caught it in flight
  int asked_plans_seen = 0;          // plans stored as asked at a kill
  for (const std::string& stop : stops) {
    SCOPED_TRACE(stop);
    const std::string out = RunChild(root, server->url(), stop);
    EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("task "))) << "the search ended before the stop";
    auto store = PopulationStore::OpenReadOnly((root / "store").string());
    if (!store.ok()) continue;  // killed before the store existed
    auto state = (*store)->GetRunState("run", "llm");
    if (!state.ok()) continue;
    if (!state->in_flight_candidate_id().empty()) ++extra[state->in_flight_candidate_id()];
    asked_plans_seen += state->in_flight_plans_size();
  }
  EXPECT_GT(asked_plans_seen, 0) << "no kill caught a model call in flight";
  EXPECT_THAT(RunChild(root, server->url(), ""), ::testing::HasSubstr("task llm ok 14\n"));

  std::map<std::string, int> calls;
  std::ifstream log(root / "calls.log");
  for (std::string id; std::getline(log, id);) ++calls[id];
  for (const auto& [id, n] : calls) {
    // A kill inside an evaluation logs it, and the resumed search evaluates it again.
    EXPECT_LE(n, 1 + extra[id]) << id << " evaluated more often than the kills that caught it in flight";
  }
  auto store = PopulationStore::OpenReadOnly((root / "store").string());
  ASSERT_TRUE(store.ok()) << store.status();
  auto state = (*store)->GetRunState("run", "llm");
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->in_flight_plans_size(), 0);
  EXPECT_TRUE(state->in_flight_candidate_id().empty());
  auto candidates = (*store)->ListCandidates("run", "llm");
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  int children = 0;
  for (const v1::Candidate& c : *candidates) {
    if (!IsLlmOperator(c.operator_())) continue;
    ++children;
    EXPECT_FALSE(c.prompt().empty()) << c.id();
    EXPECT_FALSE(c.response().empty()) << c.id();
    auto result = (*store)->GetEvaluation("run", c.id());
    EXPECT_TRUE(result.ok()) << c.id() << " stored and never evaluated";
  }
  EXPECT_EQ(children, 13) << "one seed and thirteen children make the budget";
  fs::remove_all(root);
}

}  // namespace
}  // namespace sparseditto
