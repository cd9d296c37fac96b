// bench-mutators' engine: two scripted models on the local server, one answering edits that apply and
// improve, one answering diffs that never apply; the table must tell them apart. (Fake evaluator only;
// the real compiles of LLM children are llm_search_test's.)
#include "coordinator/search/mutator_bench.h"

#include <filesystem>
#include <fstream>
#include <iterator>

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

using ::testing::HasSubstr;
using namespace ::sparseditto::testing;       // NOLINT: fixtures
using namespace ::sparseditto::llm::testing;  // NOLINT: the local server's script helpers

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(MutatorBenchTest, TheTableTellsAGoodModelFromABadOne) {
  std::unique_ptr<FakeLlmServer> good_server = FakeLlmServer::Start();
  std::unique_ptr<FakeLlmServer> bad_server = FakeLlmServer::Start();
  ASSERT_TRUE(good_server && bad_server);
  // Every answer's usage, large beside a prompt (about 40 kB here) so that each request's reservation
  // (its prompt's bytes and the model's 8192 tokens of answer) fits the budget below until the sixth
  // answer's usage spends it.
  const int64_t prompt_tokens = 50000, completion_tokens = 50000;
  const int64_t bad_answers = 6;
  good_server->Enqueue(OpenAiAnswer(kUnrollDiff, "stop", prompt_tokens, completion_tokens));
  for (int i = 0; i < 4; ++i) good_server->Enqueue(OpenAiAnswer(kBlockDiff, "stop", prompt_tokens, completion_tokens));
  for (int i = 0; i < bad_answers + 4; ++i) {
    bad_server->Enqueue(OpenAiAnswer(kBadDiff, "stop", prompt_tokens, completion_tokens));
  }
  const v1::MutatorSpec good = OpenAiModel("good", good_server->url());
  const v1::MutatorSpec bad = OpenAiModel("bad", bad_server->url());
  // The token budget ends the bad model's run after `bad_answers`; the good one's ends at 3 evaluations.
  const int64_t max_tokens = (bad_answers - 1) * (prompt_tokens + completion_tokens) + 8192 + 64 + 60000;
  const v1::Task task = LlmTask({}, /*max_evaluations=*/50, max_tokens);
  const std::vector<SeedKernel> seeds = LlmSeeds();
  ASSERT_EQ(seeds.size(), 1u);
  CountingEvaluator evaluator(Landscape(task, seeds));

  const std::string out = ::sparseditto::testing_support::ProcessTempDir() + "/mutator_bench_test";
  std::filesystem::remove_all(out);
  std::vector<double> sleeps;
  MutatorBenchOptions options;
  options.out_dir = out;
  options.budget_evaluations = 3;
  options.loop = TestLoopOptions();
  options.make_llm = [&sleeps](const v1::Task& t) -> absl::StatusOr<std::unique_ptr<LlmMutation>> {
    absl::StatusOr<std::unique_ptr<LlmSearchMutator>> m = LlmSearchMutator::Create(t, TestLlmOptions(&sleeps));
    if (!m.ok()) return m.status();
    return std::unique_ptr<LlmMutation>(*std::move(m));
  };
  absl::StatusOr<std::vector<MutatorBenchRow>> rows = RunMutatorBench(task, {good, bad}, seeds, evaluator, options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  const MutatorBenchRow& g = (*rows)[0];
  const MutatorBenchRow& b = (*rows)[1];
  ASSERT_TRUE(g.ok) << g.error;
  ASSERT_TRUE(b.ok) << b.error;
  absl::StatusOr<llm::ModelOptions> prices = llm::ModelOptionsFromSpec(good);
  ASSERT_TRUE(prices.ok());

  EXPECT_EQ(g.model, "good");
  EXPECT_EQ(g.kind, "openai");
  EXPECT_EQ(g.evaluations, 3);
  EXPECT_EQ(g.proposals, 2);
  EXPECT_EQ(g.children, 2);
  EXPECT_EQ(g.failed_mutations, 0);
  EXPECT_EQ(g.compile_rate, 1.0);
  EXPECT_EQ(g.correct_rate, 1.0);
  EXPECT_EQ(g.improvement_rate, 1.0);
  EXPECT_EQ(g.tokens, 2 * (prompt_tokens + completion_tokens));
  EXPECT_NEAR(g.cost_usd, 2 * llm::CostUsd(*prices, prompt_tokens, completion_tokens), 1e-12);
  EXPECT_EQ(good_server->requests().size(), 2u);

  EXPECT_EQ(b.evaluations, 1);  // the seed
  EXPECT_EQ(b.proposals, bad_answers);
  EXPECT_EQ(b.children, 0);
  EXPECT_EQ(b.failed_mutations, bad_answers);
  EXPECT_EQ(b.compile_rate, 0.0);
  EXPECT_EQ(b.correct_rate, 0.0);
  EXPECT_EQ(b.improvement_rate, 0.0);
  EXPECT_EQ(b.tokens, bad_answers * (prompt_tokens + completion_tokens));
  EXPECT_THAT(b.stop, HasSubstr("max_tokens"));
  EXPECT_EQ(bad_server->requests().size(), static_cast<size_t>(bad_answers));

  EXPECT_GT(g.best_fitness, b.best_fitness);
  EXPECT_GE(g.wall_seconds, 0);
  EXPECT_TRUE(evaluator.finalist_ids.empty()) << "a mutator bench compares searches: no finalist stage";

  // Each model's run in its own folder; the table in three forms.
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "good" / "store"));
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "bad" / "store"));
  ASSERT_TRUE(WriteMutatorBench(*rows, out).ok());
  const nlohmann::json json = nlohmann::json::parse(ReadFile(std::filesystem::path(out) / "bench-mutators.json"));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["model"], "good");
  EXPECT_EQ(json[0]["improvement_rate"], 1.0);
  EXPECT_EQ(json[1]["compile_rate"], 0.0);
  const std::string csv = ReadFile(std::filesystem::path(out) / "bench-mutators.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_THAT(csv, HasSubstr("model,kind,ok,"));
  EXPECT_THAT(ReadFile(std::filesystem::path(out) / "bench-mutators.txt"), HasSubstr("good"));
}

TEST(MutatorBenchTest, RefusesTwoModelsOfOneName) {
  v1::MutatorSpec a = OpenAiModel("same", "http://127.0.0.1:1");
  CountingEvaluator evaluator({});
  MutatorBenchOptions options;
  options.out_dir = ::sparseditto::testing_support::ProcessTempDir() + "/mutator_bench_test_refused";
  absl::StatusOr<std::vector<MutatorBenchRow>> rows = RunMutatorBench(LlmTask({}, 3, 0), {a, a}, {}, evaluator, options);
  EXPECT_TRUE(absl::IsInvalidArgument(rows.status())) << rows.status();
}

}  // namespace
}  // namespace sparseditto
