// LLM proposals asked asynchronously (proposal_pool.h, SearchLoopOptions::proposals_in_flight), over
// the local protocol server answering several requests at once (each after a delay, as a model
// thinks) and the fake evaluator taking a while per evaluation, as a GPU does. Asserted on what was
// observed (requests in flight at once, evaluations made while a request was in flight, counts,
// tokens), never on timing.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <thread>

#include "coordinator/search/llm_search_mutator.h"
#include "coordinator/search/proposal_pool.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/testing/llm_answers.h"
#include "coordinator/testing/llm_search_fixture.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "llm_mutator/testing/fake_llm_server.h"
#include "llm_mutator/testing/provider_bodies.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using namespace ::sparseditto::testing;       // NOLINT: fixtures
using namespace ::sparseditto::llm::testing;  // NOLINT: the local server's script helpers

std::string TempPath(const std::string& name) {
  const std::string path = ::sparseditto::testing_support::ProcessTempDir() + "/llm_async_test_" + name;
  std::filesystem::remove_all(path);
  return path;
}

struct AsyncRun {
  std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start(/*concurrent=*/true);
  std::unique_ptr<PopulationStore> store;
  std::vector<SeedKernel> seeds = LlmSeeds();
  std::vector<double> sleeps;
  std::unique_ptr<LlmSearchMutator> mutator;
  std::atomic<int> evaluations_beside_a_request{0};
  std::atomic<int> evaluations_a_child_was_stored_in{0};  // the store held more candidates at its end

  // The store in a fresh folder `name`; an error when it or the server did not start.
  absl::Status Open(const std::string& name) {
    if (server == nullptr) return absl::InternalError("the local server did not start");
    absl::Status error;
    store = OpenTestStore(TempPath(name), &error);
    return error;
  }

  // One model (`in_flight` requests at once) and the search's options for it.
  v1::Task Task(int in_flight, int64_t max_evaluations, int64_t max_tokens) {
    v1::MutatorSpec model = OpenAiModel("coder", server->url());
    model.set_concurrency(in_flight);
    model.set_max_tokens(2000);
    return LlmTask({model}, max_evaluations, max_tokens);
  }
  absl::StatusOr<SearchSummary> Search(const v1::Task& task, CountingEvaluator& evaluator, int in_flight,
                                       int64_t stop_after = 0) {
    absl::StatusOr<std::unique_ptr<LlmSearchMutator>> made = LlmSearchMutator::Create(task, TestLlmOptions(&sleeps));
    if (!made.ok()) return made.status();
    mutator = *std::move(made);
    SearchLoopOptions options = TestLoopOptions();
    options.proposals_in_flight = in_flight;
    options.mutators = {mutator.get()};
    options.max_finalists = 0;
    options.plan_stage = false;
    options.stop_after_evaluations = stop_after;
    return RunTaskSearch(*store, "run", task, seeds, evaluator, options);
  }
  // An evaluator that takes `ms` per evaluation and counts those made while the server was answering.
  std::unique_ptr<CountingEvaluator> Evaluator(const v1::Task& task, int ms) {
    auto evaluator = std::make_unique<CountingEvaluator>(Landscape(task, seeds));
    evaluator->on_call = [this, ms, task](const v1::Candidate&) {
      auto stored = [&] {
        absl::StatusOr<std::vector<v1::Candidate>> all = store->ListCandidates("run", task.name());
        return all.ok() ? all->size() : 0;
      };
      const size_t at_start = stored();
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      if (server->in_flight() > 0) ++evaluations_beside_a_request;
      if (stored() > at_start) ++evaluations_a_child_was_stored_in;
    };
    return evaluator;
  }
};

// Table: one call at a time against three; the model takes about 300 ms, an evaluation 100 ms.
TEST(LlmAsyncTest, CallsOverlapEachOtherAndTheEvaluations) {
  for (int in_flight : {1, 3}) {
    SCOPED_TRACE(in_flight);
    AsyncRun run;
    ASSERT_TRUE(run.Open(fmt::format("overlap{}", in_flight)).ok());
    AnswerWithNewChildren(*run.server, 0.3, nullptr);
    const v1::Task task = run.Task(in_flight, 10, 0);
    std::unique_ptr<CountingEvaluator> evaluator = run.Evaluator(task, 100);
    absl::StatusOr<SearchSummary> summary = run.Search(task, *evaluator, in_flight);
    ASSERT_TRUE(summary.ok()) << summary.status();
    std::printf("%d in flight: %.2f s for the search (not asserted)\n", in_flight, summary->throughput.wall_seconds);
    EXPECT_EQ(summary->evaluations, 10) << "exactly the budget";
    for (const auto& [id, n] : evaluator->calls_by_id) EXPECT_EQ(n, 1) << id << " evaluated more than once";
    EXPECT_EQ(run.server->most_in_flight(), in_flight) << "the model answered that many calls at once";
    EXPECT_GT(run.evaluations_beside_a_request.load(), 0) << "no evaluation overlapped a model call";
    if (in_flight > 1) {
      EXPECT_GT(run.evaluations_a_child_was_stored_in.load(), 0) << "answers wait for the evaluation to be stored";
    }
    absl::StatusOr<store::RunState> state = run.store->GetRunState("run", task.name());
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->in_flight_plans_size(), 0) << "every call taken in by the end";
    absl::StatusOr<coordinator::LlmSearchState> llm = ParseLlmSearchState(state->mutator_state());
    ASSERT_TRUE(llm.ok()) << llm.status();
    auto stored = run.store->ListCandidates("run", task.name());
    ASSERT_TRUE(stored.ok());
    int64_t children = 0;
    for (const v1::Candidate& c : *stored) {
      if (!IsLlmOperator(c.operator_())) continue;
      ++children;
      EXPECT_FALSE(c.prompt().empty()) << c.id();
      EXPECT_FALSE(c.response().empty()) << c.id();
    }
    EXPECT_EQ(children, 9) << "the seed and nine children: no child asked beyond what the budget evaluates";
    // Every answer accounted for: a child stored, a failed mutation recorded (a rewrite plan, which
    // this diff does not answer) or a duplicate.
    EXPECT_EQ(static_cast<int64_t>(run.server->requests().size()), children + llm->failed_size() + summary->duplicates);
  }
}

// Four calls at once share the budget: together they never spend more than it holds, and the search
// ends at it. Table: the token limit, the money limit (the server bills at the model's prices: 3 and
// 15 USD per million prompt and answer tokens).
TEST(LlmAsyncTest, ConcurrentCallsNeverOverrunTheBudget) {
  struct Case {
    std::string name;
    int64_t max_tokens;
    double max_usd;
  };
  for (const Case& c : {Case{"tokens", 200000, 0}, Case{"money", 0, 1.0}}) {
    SCOPED_TRACE(c.name);
    AsyncRun run;
    ASSERT_TRUE(run.Open(c.name).ok());
    std::atomic<int64_t> billed{0};
    AnswerWithNewChildren(*run.server, 0.2, &billed);
    v1::Task task = run.Task(4, 200, c.max_tokens);
    task.mutable_budget()->set_max_money_usd(c.max_usd);
    std::unique_ptr<CountingEvaluator> evaluator = run.Evaluator(task, 20);
    absl::StatusOr<SearchSummary> summary = run.Search(task, *evaluator, 4);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->stop_reason, c.name) << summary->stop_detail;
    EXPECT_GE(run.server->most_in_flight(), 2) << "the calls did overlap";
    // Every request sent was answered with kCompletionTokens answer tokens, the rest prompt tokens.
    const int64_t answer_tokens = kCompletionTokens * static_cast<int64_t>(run.server->requests().size());
    const double billed_usd = (3.0 * static_cast<double>(billed.load() - answer_tokens) +
                               15.0 * static_cast<double>(answer_tokens)) / 1e6;
    if (c.max_tokens > 0) EXPECT_LE(billed.load(), c.max_tokens) << "the server billed more tokens than the budget";
    if (c.max_usd > 0) EXPECT_LE(billed_usd, c.max_usd) << "the server billed more money than the budget";
    absl::StatusOr<store::RunState> state = run.store->GetRunState("run", task.name());
    ASSERT_TRUE(state.ok()) << state.status();
    absl::StatusOr<coordinator::SearchState> search = ParseSearchState(state->search_state());
    ASSERT_TRUE(search.ok()) << search.status();
    EXPECT_EQ(search->spent().tokens(), billed.load()) << "every billed token charged";
    EXPECT_NEAR(search->spent().money_usd(), billed_usd, 1e-9);
  }
}

// A call that times out, one answered 500 and one closed without a word are failed mutations; the
// others' answers go on meanwhile and the search ends at its budget.
TEST(LlmAsyncTest, FailedAndTimedOutCallsAreFailedMutationsNotStalls) {
  AsyncRun run;
  ASSERT_TRUE(run.Open("failures").ok());
  ScriptedResponse hang = OpenAiAnswer(UniqueDiff(1000));
  hang.delay_seconds = 30;  // past the model's 1 s time-out
  run.server->Enqueue(hang);
  run.server->Enqueue(OpenAiError(500, "server_error", "internal", "boom"));
  ScriptedResponse closed;
  closed.close_without_answer = true;
  run.server->Enqueue(closed);
  AnswerWithNewChildren(*run.server, 0.05, nullptr);
  v1::Task task = run.Task(3, 8, 0);
  task.mutable_mutators(0)->set_timeout_seconds(1);
  task.mutable_mutators(0)->set_max_retries(0);
  std::unique_ptr<CountingEvaluator> evaluator = run.Evaluator(task, 10);
  absl::StatusOr<SearchSummary> summary = run.Search(task, *evaluator, 3);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->evaluations, 8);
  EXPECT_GE(run.server->most_in_flight(), 2) << "the others went on beside the hung call";
  absl::StatusOr<store::RunState> state = run.store->GetRunState("run", task.name());
  ASSERT_TRUE(state.ok()) << state.status();
  absl::StatusOr<coordinator::LlmSearchState> llm = ParseLlmSearchState(state->mutator_state());
  ASSERT_TRUE(llm.ok()) << llm.status();
  ASSERT_GE(llm->failed_size(), 3);
  // The three calls the server failed (a rewrite plan's answer may fail too: no whole source in it).
  EXPECT_EQ(std::count_if(llm->failed().begin(), llm->failed().end(),
                          [](const coordinator::FailedMutation& f) { return f.outcome() == "model_failed"; }),
            3);
  for (const auto& [id, n] : evaluator->calls_by_id) EXPECT_EQ(n, 1) << id;
}

// Stopped while a call is in flight (its answer is lost, as at a kill), then resumed: the plan in
// flight was stored with the state and is asked again first (the same prompt), nothing is evaluated
// twice and the budget ends exact. The second request hangs 1.5 s, so the child of the first is
// stored and evaluated while it is in flight.
TEST(LlmAsyncTest, AResumeAsksTheLostCallAgainAndEvaluatesNothingTwice) {
  AsyncRun run;
  ASSERT_TRUE(run.Open("resume").ok());
  run.server->SetResponder([](const RecordedRequest& request, size_t number) {
    ScriptedResponse r = OpenAiAnswer(UniqueDiff(number), "stop", static_cast<int64_t>(request.body.size() / 4));
    r.delay_seconds = number == 1 ? 1.5 : 0.05;
    return r;
  });
  const v1::Task task = run.Task(2, 12, 0);
  std::unique_ptr<CountingEvaluator> evaluator = run.Evaluator(task, 10);
  absl::StatusOr<SearchSummary> first = run.Search(task, *evaluator, 2, /*stop_after=*/2);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->stop_reason, "interrupted");
  absl::StatusOr<store::RunState> stopped = run.store->GetRunState("run", task.name());
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_GE(stopped->in_flight_plans_size(), 1) << "the hung call's plan is stored";
  absl::StatusOr<MutationPlan> lost = PlanFromRecord(stopped->in_flight_plans(0));
  ASSERT_TRUE(lost.ok()) << lost.status();
  const std::vector<RecordedRequest> before = run.server->requests();
  ASSERT_GE(before.size(), 2u);

  absl::StatusOr<SearchSummary> resumed = run.Search(task, *evaluator, 2);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->evaluations, 12);
  int64_t calls = 0;
  for (const auto& [id, n] : evaluator->calls_by_id) {
    EXPECT_EQ(n, 1) << id << " evaluated twice";
    calls += n;
  }
  EXPECT_EQ(calls, 12);
  const std::vector<RecordedRequest> after = run.server->requests();
  ASSERT_GT(after.size(), before.size());
  // The lost plan is asked again first; the other slot's call may reach the server before it.
  auto asks_the_lost_plan = [&](const RecordedRequest& request) {
    const bool parent = request.body.find(fmt::format("# The parent ({})", lost->parent_id)) != std::string::npos;
    const bool mate = lost->mate_id.empty() ||
                      request.body.find(fmt::format("# The second parent ({})", lost->mate_id)) != std::string::npos;
    return parent && mate;  // the rest of the prompt may have changed (a parent's failure fed back)
  };
  EXPECT_TRUE(asks_the_lost_plan(before[1])) << "the stored plan is the hung call's";
  const size_t resumed_first = std::min(after.size(), before.size() + 2);
  EXPECT_TRUE(std::any_of(after.begin() + static_cast<std::ptrdiff_t>(before.size()),
                          after.begin() + static_cast<std::ptrdiff_t>(resumed_first), asks_the_lost_plan))
      << "the resumed search did not ask the lost plan first";
  absl::StatusOr<store::RunState> end = run.store->GetRunState("run", task.name());
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->in_flight_plans_size(), 0);
}

}  // namespace
}  // namespace sparseditto
