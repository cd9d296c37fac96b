// The search with LLM mutators, end to end: models served by the local protocol server
// (llm_mutator/testing/), scripted answers, the real nvcc compiling what the answers make (the GPU
// stages are the fake evaluator's), the store, the run's files, budgets, disabled models and resume.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "coordinator/search/batch_search.h"
#include "coordinator/search/llm_search_mutator.h"
#include "coordinator/testing/compiling_evaluator.h"
#include "coordinator/testing/llm_search_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "llm_mutator/model_options.h"
#include "llm_mutator/testing/fake_llm_server.h"
#include "llm_mutator/testing/provider_bodies.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace ::sparseditto::testing;        // NOLINT: fixtures
using namespace ::sparseditto::llm::testing;   // NOLINT: the local server's script helpers

std::string TempPath(const std::string& name) {
  const std::string path = ::sparseditto::testing_support::ProcessTempDir() + "/llm_search_test_" + name;
  std::filesystem::remove_all(path);
  return path;
}

std::string UserPrompt(const llm::testing::RecordedRequest& request) {
  const nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
  if (!body.is_object()) return "";
  return body["messages"][1]["content"].get<std::string>();
}

coordinator::LlmSearchState StoredLlmState(const PopulationStore& store, const std::string& run,
                                           const std::string& task) {
  absl::StatusOr<store::RunState> state = store.GetRunState(run, task);
  EXPECT_TRUE(state.ok()) << state.status();
  if (!state.ok()) return {};
  absl::StatusOr<coordinator::LlmSearchState> llm = ParseLlmSearchState(state->mutator_state());
  EXPECT_TRUE(llm.ok()) << llm.status();
  return llm.ok() ? *llm : coordinator::LlmSearchState();
}

coordinator::SearchState StoredSearchState(const PopulationStore& store, const std::string& run,
                                           const std::string& task) {
  absl::StatusOr<store::RunState> state = store.GetRunState(run, task);
  EXPECT_TRUE(state.ok()) << state.status();
  absl::StatusOr<coordinator::SearchState> search = ParseSearchState(state.ok() ? state->search_state() : "");
  return search.ok() ? *search : coordinator::SearchState();
}

BatchSearchOptions BatchWithLlm(std::vector<double>* sleeps, const std::string& run_dir) {
  BatchSearchOptions options;
  options.loop = TestLoopOptions();
  options.max_retries = 0;
  options.run_dir = run_dir;
  options.make_llm = [sleeps](const v1::Task& task) -> absl::StatusOr<std::unique_ptr<LlmMutation>> {
    absl::StatusOr<std::unique_ptr<LlmSearchMutator>> m = LlmSearchMutator::Create(task, TestLlmOptions(sleeps));
    if (!m.ok()) return m.status();
    return std::unique_ptr<LlmMutation>(*std::move(m));
  };
  return options;
}

// One model, every kind of answer, the real nvcc: a bad diff (its reason is in the next prompt), a 429
// with Retry-After then a real edit that compiles and is evaluated, a 529 after its retry, a truncated
// answer at the model's max_tokens; then the next request's worst case (its prompt and max_tokens of
// answer) does not fit the token budget left: it is not sent, and the run ends with "tokens" having
// never overrun max_tokens.
TEST(LlmSearchTest, SearchThroughTheLocalServerWithRealCompiles) {
  std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start();
  ASSERT_NE(server, nullptr);
  v1::MutatorSpec spec = OpenAiModel("coder", server->url());
  constexpr int kMaxAnswerTokens = 60000;
  spec.set_max_tokens(kMaxAnswerTokens);
  absl::StatusOr<llm::ModelOptions> model = llm::ModelOptionsFromSpec(spec);
  ASSERT_TRUE(model.ok()) << model.status();
  struct Answered {
    int64_t prompt, completion;
  };
  const std::vector<Answered> answered = {{1000, 100}, {2000, 200}, {1500, kMaxAnswerTokens}};
  int64_t tokens = 0;
  double cost = 0;
  for (const Answered& a : answered) {
    tokens += a.prompt + a.completion;
    cost += llm::CostUsd(*model, a.prompt, a.completion);
  }
  server->Enqueue(OpenAiAnswer(kBadDiff, "stop", answered[0].prompt, answered[0].completion));
  server->Enqueue(WithRetryAfter(OpenAiError(429, "requests", "rate_limit_exceeded", "Rate limit reached"), "1"));
  server->Enqueue(OpenAiAnswer(kUnrollDiff, "stop", answered[1].prompt, answered[1].completion));
  server->Enqueue(OpenAiError(529, "server_error", "overloaded", "Overloaded"));
  server->Enqueue(OpenAiError(529, "server_error", "overloaded", "Overloaded"));
  server->Enqueue(OpenAiAnswer(kBlockDiff, "length", answered[2].prompt, answered[2].completion));

  // Room for the third request (3,300 spent, its prompt under 80,000 bytes, about 41,000 here, and
  // 60,000 of answer) but not for a fourth after it (64,800 spent).
  const int64_t max_tokens = answered[0].prompt + answered[0].completion + answered[1].prompt +
                             answered[1].completion + kMaxAnswerTokens + 64 + 80000;
  const v1::Task task = LlmTask({spec}, /*max_evaluations=*/50, max_tokens);
  const std::vector<SeedKernel> seeds = LlmSeeds();
  ASSERT_EQ(seeds.size(), 1u);
  absl::StatusOr<std::unique_ptr<NvccCompiler>> nvcc =
      NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = TempPath("nvcc_cache")});
  ASSERT_TRUE(nvcc.ok()) << nvcc.status();
  CompileOptions compile;
  compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  compile.archs = {"sm_80"};
  CompilingEvaluator evaluator(*std::move(nvcc), compile, Landscape(task, seeds));

  const std::string run_dir = TempPath("run");
  auto store = PopulationStore::Create(run_dir + "/store");
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<double> sleeps;
  absl::StatusOr<BatchOutcome> outcome =
      RunBatchSearch(**store, "r", {task}, seeds, evaluator, BatchWithLlm(&sleeps, run_dir));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  const TaskOutcome& t = outcome->tasks.at(0);
  ASSERT_TRUE(t.ok) << ::testing::PrintToString(t.errors);
  EXPECT_EQ(t.summary.stop_reason, "tokens");
  EXPECT_EQ(t.summary.evaluations, 2);  // the seed and the one child
  EXPECT_THAT(t.artifact_error, IsEmpty());

  // Every scripted answer was asked for, and nothing more.
  const std::vector<llm::testing::RecordedRequest> requests = server->requests();
  EXPECT_EQ(requests.size(), 6u);
  EXPECT_EQ(server->pending(), 0u);
  ASSERT_FALSE(sleeps.empty());
  EXPECT_EQ(sleeps[0], 1.0);  // Retry-After: 1

  // The failed mutations, with their reasons; the bad diff's reason went into the next prompt.
  const coordinator::LlmSearchState llm_state = StoredLlmState(**store, "r", task.name());
  ASSERT_EQ(llm_state.failed_size(), 4);
  EXPECT_EQ(llm_state.failed(0).outcome(), llm::MutationOutcomeName(llm::MutationOutcome::kDiffDidNotApply));
  EXPECT_EQ(llm_state.failed(0).tokens(), answered[0].prompt + answered[0].completion);
  EXPECT_THAT(llm_state.failed(0).message(), HasSubstr("#define UNROLL 16"));
  EXPECT_EQ(llm_state.failed(1).outcome(), llm::MutationOutcomeName(llm::MutationOutcome::kModelFailed));
  EXPECT_EQ(llm_state.failed(1).chat_outcome(), llm::ChatOutcomeName(llm::ChatOutcome::kOverloaded));
  EXPECT_EQ(llm_state.failed(2).chat_outcome(), llm::ChatOutcomeName(llm::ChatOutcome::kTruncated));
  EXPECT_THAT(UserPrompt(requests.at(0)), Not(HasSubstr(llm_state.failed(0).message())));
  EXPECT_THAT(UserPrompt(requests.at(1)), HasSubstr(llm_state.failed(0).message()));
  EXPECT_THAT(UserPrompt(requests.at(2)), HasSubstr(llm_state.failed(0).message()));
  EXPECT_EQ(llm_state.failed(3).outcome(), llm::MutationOutcomeName(llm::MutationOutcome::kOverBudget));
  EXPECT_THAT(llm_state.failed(3).message(), HasSubstr("was not sent"));
  EXPECT_EQ(llm_state.failed(3).tokens(), 0);
  for (const coordinator::FailedMutation& f : llm_state.failed()) EXPECT_EQ(f.model(), "coder");

  // Tokens and money charged to the run's budget.
  const coordinator::SearchState search = StoredSearchState(**store, "r", task.name());
  EXPECT_EQ(search.spent().tokens(), tokens);
  EXPECT_LT(search.spent().tokens(), max_tokens);  // reserved before each request: never overrun
  EXPECT_EQ(search.spent().over_budget(), "tokens");
  EXPECT_NEAR(search.spent().money_usd(), cost, 1e-12);

  // The child: the real edit, compiled by nvcc, evaluated, with its prompt and answer.
  absl::StatusOr<std::vector<v1::Candidate>> candidates = (*store)->ListCandidates("r", task.name());
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  ASSERT_EQ(candidates->size(), 2u);
  const v1::Candidate& seed = (*candidates)[0];
  const v1::Candidate& child = (*candidates)[1];
  EXPECT_EQ(child.operator_(), v1::MUTATION_OPERATOR_LLM_DIFF);
  EXPECT_EQ(child.mutator(), "coder");
  EXPECT_EQ(child.model(), spec.model());
  EXPECT_THAT(child.parent_ids(), ElementsAre(seed.id()));
  EXPECT_THAT(child.source(), HasSubstr("acc[i][v] = __fmaf_rn(a[u], bv[u][i][v], acc[i][v]);"));
  EXPECT_THAT(child.prompt(), HasSubstr("# system"));
  EXPECT_THAT(child.prompt(), HasSubstr("\"density\""));  // the analyzer's features of the task's matrix
  EXPECT_THAT(child.response(), HasSubstr("chat.completion"));
  EXPECT_THAT(seed.prompt(), IsEmpty());
  EXPECT_EQ(evaluator.compiled_sources.size(), 2u);
  absl::StatusOr<v1::EvalResult> child_result = (*store)->GetEvaluation("r", child.id());
  absl::StatusOr<v1::EvalResult> seed_result = (*store)->GetEvaluation("r", seed.id());
  ASSERT_TRUE(child_result.ok() && seed_result.ok());
  EXPECT_THAT(child_result->compile_log(), HasSubstr("ptxas info"));
  EXPECT_GT(child_result->fitness(), seed_result->fitness());
  EXPECT_THAT(llm_state.pending(), IsEmpty());  // the child's model was rewarded
  EXPECT_THAT(llm_state.chooser_state(), HasSubstr("coder"));

  // The run's files: prompt.md and response.md for the LLM's child only.
  const std::filesystem::path candidates_dir = std::filesystem::path(run_dir) / task.name() / "candidates";
  EXPECT_TRUE(std::filesystem::exists(candidates_dir / child.id() / "prompt.md"));
  EXPECT_TRUE(std::filesystem::exists(candidates_dir / child.id() / "response.md"));
  EXPECT_TRUE(std::filesystem::exists(candidates_dir / seed.id() / "kernel.cu"));
  EXPECT_FALSE(std::filesystem::exists(candidates_dir / seed.id() / "prompt.md"));
}

// A model answered 401: it is disabled for the run, resumed or not; its plans go to the built-in
// mutator and the search reaches its evaluation budget. (Fake evaluator only: no compile here.)
TEST(LlmSearchTest, ADisabledModelStaysDisabledAcrossAResume) {
  std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start();
  ASSERT_NE(server, nullptr);
  server->Enqueue(OpenAiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"));
  v1::MutatorSpec builtin;
  builtin.set_kind(v1::MUTATOR_KIND_BUILTIN);
  builtin.set_weight(1);
  const v1::Task task = LlmTask({OpenAiModel("locked", server->url(), 2), builtin}, /*max_evaluations=*/14, 0);
  const std::vector<SeedKernel> seeds = LlmSeeds();
  CountingEvaluator evaluator(Landscape(task, seeds));
  const std::string run_dir = TempPath("disabled");
  auto store = PopulationStore::Create(run_dir + "/store");
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<double> sleeps;
  BatchSearchOptions options = BatchWithLlm(&sleeps, run_dir);
  options.loop.stop_after_evaluations = 6;
  absl::StatusOr<BatchOutcome> first = RunBatchSearch(**store, "r", {task}, seeds, evaluator, options);
  ASSERT_TRUE(first.ok() && first->tasks.at(0).ok) << first.status();
  EXPECT_EQ(first->tasks.at(0).summary.stop_reason, "interrupted");
  EXPECT_EQ(server->requests().size(), 1u);
  coordinator::LlmSearchState state = StoredLlmState(**store, "r", task.name());
  EXPECT_THAT(state.disabled_models(), ElementsAre("locked"));
  ASSERT_EQ(state.failed_size(), 1);
  EXPECT_EQ(state.failed(0).outcome(), llm::MutationOutcomeName(llm::MutationOutcome::kModelDisabled));

  options.loop.stop_after_evaluations = 0;
  absl::StatusOr<BatchOutcome> second = RunBatchSearch(**store, "r", {task}, seeds, evaluator, options);
  ASSERT_TRUE(second.ok() && second->tasks.at(0).ok) << second.status();
  EXPECT_EQ(second->tasks.at(0).summary.stop_reason, "evaluations");
  EXPECT_EQ(second->tasks.at(0).summary.evaluations, 14);
  EXPECT_EQ(server->requests().size(), 1u);  // never asked again
  state = StoredLlmState(**store, "r", task.name());
  EXPECT_THAT(state.disabled_models(), ElementsAre("locked"));
  EXPECT_EQ(state.failed_size(), 1);
}

// The same script answered to an uninterrupted search and to one interrupted and resumed: the same
// candidates, prompts and LLM state (chooser, failures fed back, failed mutations).
TEST(LlmSearchTest, AResumedSearchEndsAsTheUninterruptedOne) {
  auto script = [](FakeLlmServer& server) {
    server.Enqueue(OpenAiAnswer(kBadDiff));
    server.Enqueue(OpenAiAnswer(kUnrollDiff));
    server.Enqueue(OpenAiAnswer(kBadDiff));
    server.Enqueue(OpenAiAnswer(kBlockDiff));
    server.Enqueue(OpenAiAnswer(kBlockDiff));
    server.Enqueue(OpenAiAnswer("no code here"));
  };
  v1::MutatorSpec builtin;
  builtin.set_kind(v1::MUTATOR_KIND_BUILTIN);
  builtin.set_weight(1);
  struct Run {
    std::vector<v1::Candidate> candidates;
    std::string llm_state;
    std::vector<std::string> prompts;
    int64_t evaluations = 0;
    int most_calls_of_one = 0;  // the evaluator's calls of one candidate, at most
  };
  auto search = [&](const std::string& name, std::vector<int64_t> stops) {
    std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start();
    script(*server);
    const v1::Task task = LlmTask({OpenAiModel("coder", server->url()), builtin}, 12, 0);
    const std::vector<SeedKernel> seeds = LlmSeeds();
    CountingEvaluator evaluator(Landscape(task, seeds));
    auto store = PopulationStore::Create(TempPath(name) + "/store");
    EXPECT_TRUE(store.ok()) << store.status();
    std::vector<double> sleeps;
    BatchSearchOptions options = BatchWithLlm(&sleeps, "");
    stops.push_back(0);
    for (int64_t stop : stops) {
      options.loop.stop_after_evaluations = stop;
      absl::StatusOr<BatchOutcome> outcome = RunBatchSearch(**store, "r", {task}, seeds, evaluator, options);
      EXPECT_TRUE(outcome.ok() && outcome->tasks.at(0).ok) << outcome.status();
    }
    Run run;
    run.evaluations = StoredSearchState(**store, "r", task.name()).spent().evaluations();
    for (const auto& [id, n] : evaluator.calls_by_id) run.most_calls_of_one = std::max(run.most_calls_of_one, n);
    run.candidates = *(*store)->ListCandidates("r", task.name());
    run.llm_state = (*store)->GetRunState("r", task.name())->mutator_state();
    for (const auto& r : server->requests()) run.prompts.push_back(UserPrompt(r));
    return run;
  };
  const Run whole = search("whole", {});
  const Run resumed = search("resumed", {3, 4});
  // The model is asked asynchronously (SearchLoopOptions::proposals_in_flight): which answer a plan
  // gets depends on when it was asked, and an answer in flight at a stop is lost and asked again, so
  // the two runs may differ in their children; they end alike as far as the store goes: the budget
  // exact, nothing evaluated twice, every model child stored with its prompt and answer.
  EXPECT_EQ(whole.evaluations, 12);
  EXPECT_EQ(resumed.evaluations, 12);
  EXPECT_EQ(whole.most_calls_of_one, 1);
  EXPECT_EQ(resumed.most_calls_of_one, 1) << "a candidate evaluated twice across the stops";
  EXPECT_GE(whole.prompts.size(), 3u);
  EXPECT_GE(resumed.prompts.size(), 3u);
  for (const Run* run : {&whole, &resumed}) {
    for (const v1::Candidate& c : run->candidates) {
      if (!IsLlmOperator(c.operator_())) continue;
      EXPECT_FALSE(c.prompt().empty()) << c.id();
      EXPECT_FALSE(c.response().empty()) << c.id();
    }
  }
  const auto llm_children = std::count_if(whole.candidates.begin(), whole.candidates.end(),
                                          [](const v1::Candidate& c) { return IsLlmOperator(c.operator_()); });
  EXPECT_GE(llm_children, 1);
  absl::StatusOr<coordinator::LlmSearchState> state = ParseLlmSearchState(whole.llm_state);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_GE(state->failed_size(), 1);
}

}  // namespace
}  // namespace sparseditto
