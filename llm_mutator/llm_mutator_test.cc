// The LLM mutator end to end against the local server: a real seed edited by a scripted SEARCH/REPLACE
// answer that applies and compiles with the real nvcc, and every way a mutation can fail.
#include "llm_mutator/llm_mutator.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "evaluator/compile/nvcc_compiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "llm_mutator/testing/fake_llm_server.h"
#include "llm_mutator/testing/provider_bodies.h"
#include "nlohmann/json.hpp"

namespace sparseditto::llm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;  // NOLINT: the fake server's helpers

constexpr char kSeed[] = SPARSEDITTO_SOURCE_DIR "/kernels/seeds/csr_warp_per_row.cu";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A real edit of the seed: a different unroll default and the FMA loop written as a multiply-add.
const char kGoodDiff[] =
    "Unrolling deeper hides more B-load latency; the plain multiply-add lets nvcc contract it itself.\n\n"
    "<<<<<<< SEARCH\n"
    "#define UNROLL 4                 // sparseditto:tunable values=[1, 2, 4, 8]\n"
    "=======\n"
    "#define UNROLL 8                 // sparseditto:tunable values=[1, 2, 4, 8]\n"
    ">>>>>>> REPLACE\n\n"
    "<<<<<<< SEARCH\n"
    "      for (int v = 0; v < V; ++v) acc[i][v] = fmaf(a[u], bv[u][i][v], acc[i][v]);\n"
    "=======\n"
    "      for (int v = 0; v < V; ++v) acc[i][v] += a[u] * bv[u][i][v];\n"
    ">>>>>>> REPLACE\n";

const char kBadDiff[] =
    "<<<<<<< SEARCH\n#define UNROLL 16\n=======\n#define UNROLL 8\n>>>>>>> REPLACE\n";

MutationRequest Request(v1::MutationOperator op = v1::MUTATION_OPERATOR_LLM_DIFF) {
  MutationRequest r;
  r.op = op;
  r.task.set_name("unstructured_90_fp16");
  r.task.set_dtype(v1::DTYPE_FP16);
  r.task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  r.task.mutable_pattern()->set_sparsity(0.9);
  r.task.mutable_matrix()->mutable_generated()->set_rows(4096);
  r.task.mutable_matrix()->mutable_generated()->set_cols(4096);
  r.task.add_n(128);
  r.task.add_arch("sm_80");
  EvaluatedCandidate parent;
  parent.candidate.set_id("unstructured_90_fp16.000002");
  parent.candidate.set_source(ReadFile(kSeed));
  parent.candidate.set_seed_name("csr_warp_per_row");
  parent.candidate.set_generation(3);
  parent.candidate.set_island(1);
  parent.result.set_stage_reached(v1::EVAL_STAGE_DONE);
  parent.result.set_fitness(1.2);
  r.parents.push_back(parent);
  EvaluatedCandidate inspiration;
  inspiration.candidate.set_source("// INSPIRATION KERNEL\n");
  r.inspirations.push_back(inspiration);
  return r;
}

class LlmMutatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SD_TEST_MUTATOR_KEY", "sk-test-mutator-KEYVALUE-0001", 1);
    server_ = FakeLlmServer::Start();
    ASSERT_NE(server_, nullptr);
  }

  ModelOptions Model(std::string name, Provider provider) {
    ModelOptions m;
    m.name = std::move(name);
    m.provider = provider;
    m.endpoint = provider == Provider::kAnthropic ? server_->url() : server_->url() + "/v1";
    m.model = m.name + "-model";
    m.api_key_env = "SD_TEST_MUTATOR_KEY";
    m.timeout_seconds = 5;
    m.max_retries = 2;
    m.usd_per_million_input_tokens = 3;
    m.usd_per_million_output_tokens = 15;
    return m;
  }

  std::unique_ptr<LlmMutator> Mutator(std::vector<ModelOptions> models, ChooserOptions chooser = {}) {
    absl::StatusOr<PromptLibrary> prompts = PromptLibrary::Load(
        SPARSEDITTO_SOURCE_DIR "/configs/prompts", SPARSEDITTO_SOURCE_DIR "/kernel_abi/sparseditto_kernel.h");
    EXPECT_TRUE(prompts.ok()) << prompts.status();
    LlmMutatorOptions options;
    options.chooser = chooser;
    options.sleep = [this](double s) { sleeps_.push_back(s); };
    absl::StatusOr<std::unique_ptr<LlmMutator>> m = LlmMutator::Create(std::move(models), *prompts, options);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(*m) : nullptr;
  }

  std::string UserPrompt(size_t request, Provider provider) {
    const nlohmann::json body = nlohmann::json::parse(server_->requests().at(request).body);
    return provider == Provider::kAnthropic ? body["messages"][0]["content"].get<std::string>()
                                            : body["messages"][1]["content"].get<std::string>();
  }

  std::unique_ptr<FakeLlmServer> server_;
  std::vector<double> sleeps_;
};

TEST_F(LlmMutatorTest, DiffOnARealSeedAppliesAndCompilesWithNvcc) {
  server_->Enqueue(OpenAiAnswer(kGoodDiff, "stop", 9000, 250));
  std::unique_ptr<LlmMutator> mutator = Mutator({Model("gpt", Provider::kOpenAiCompatible)});
  const MutationRequest request = Request();
  const MutationResult r = mutator->Mutate(request);
  ASSERT_EQ(r.outcome, MutationOutcome::kOk) << r.message;
  const v1::Candidate& child = r.child;
  EXPECT_THAT(child.source(), HasSubstr("#define UNROLL 8 "));
  EXPECT_THAT(child.source(), HasSubstr("acc[i][v] += a[u] * bv[u][i][v];"));
  EXPECT_THAT(child.source(), Not(HasSubstr("fmaf(a[u]")));
  EXPECT_EQ(child.parent_ids(0), "unstructured_90_fp16.000002");
  EXPECT_EQ(child.operator_(), v1::MUTATION_OPERATOR_LLM_DIFF);
  EXPECT_EQ(child.mutator(), "gpt");
  EXPECT_EQ(child.model(), "gpt-model");
  EXPECT_EQ(child.generation(), 4);
  EXPECT_EQ(child.island(), 1);
  EXPECT_EQ(child.seed_name(), "csr_warp_per_row");
  EXPECT_EQ(child.source_hash().size(), 64u);
  bool unroll_found = false;
  for (const v1::Tunable& t : child.tunables()) {
    if (t.name() == "UNROLL") {
      unroll_found = true;
      EXPECT_EQ(t.value(), "8");
    }
  }
  EXPECT_TRUE(unroll_found);
  EXPECT_EQ(r.model, "gpt");
  EXPECT_EQ(r.prompt_tokens, 9000);
  EXPECT_EQ(r.completion_tokens, 250);
  EXPECT_DOUBLE_EQ(r.cost_usd, (9000 * 3.0 + 250 * 15.0) / 1e6);
  EXPECT_THAT(r.prompt, HasSubstr("# system"));
  EXPECT_THAT(r.prompt, HasSubstr("INSPIRATION KERNEL"));
  EXPECT_THAT(r.response, HasSubstr("chat.completion"));

  const std::string scratch = ::sparseditto::testing_support::ProcessTempDir() + "/llm_mutator_test_nvcc";
  absl::StatusOr<std::unique_ptr<NvccCompiler>> nvcc =
      NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch});
  ASSERT_TRUE(nvcc.ok()) << nvcc.status();
  CompileOptions options;
  options.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.archs = {"sm_80"};
  options.use_cache = false;
  absl::StatusOr<CompileResult> compiled = (*nvcc)->Compile(child.source(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(compiled->ok) << compiled->failure << "\n" << compiled->log;
  EXPECT_FALSE(compiled->from_cache);
  EXPECT_GT(compiled->seconds, 0);
  EXPECT_THAT(compiled->log, HasSubstr("ptxas info"));
}

struct FailCase {
  std::string label;
  Provider provider;
  v1::MutationOperator op;
  std::vector<ScriptedResponse> script;
  MutationOutcome outcome;
  ChatOutcome chat;
  std::string words;
};

TEST_F(LlmMutatorTest, EveryFailureIsTyped) {
  const Provider O = Provider::kOpenAiCompatible, A = Provider::kAnthropic;
  const v1::MutationOperator D = v1::MUTATION_OPERATOR_LLM_DIFF, W = v1::MUTATION_OPERATOR_LLM_REWRITE;
  ScriptedResponse hang = AnthropicAnswer("late");
  hang.delay_seconds = 30;
  ScriptedResponse garbage = OpenAiAnswer("");
  garbage.body = "{\"choices\": [";
  const FailCase cases[] = {
      {"bad_diff", O, D, {OpenAiAnswer(kBadDiff)}, MutationOutcome::kDiffDidNotApply, ChatOutcome::kOk,
       "SEARCH block 1 not found in the parent (first line: '#define UNROLL 16')"},
      {"prose_only", O, D, {OpenAiAnswer("I think the kernel is already optimal.")}, MutationOutcome::kNoUsableCode,
       ChatOutcome::kOk, "no '<<<<<<< SEARCH'"},
      {"rewrite_two_blocks", A, W, {AnthropicAnswer("```cuda\nint a;\n```\n```cuda\nint b;\n```\n")},
       MutationOutcome::kNoUsableCode, ChatOutcome::kOk, "2 ```cuda blocks"},
      {"unchanged_child", A, W, {AnthropicAnswer("```cuda\n" + ReadFile(kSeed) + "// a comment only\n```\n")},
       MutationOutcome::kNoUsableCode, ChatOutcome::kOk, "a parent unchanged"},
      {"bad_tunables", A, W, {AnthropicAnswer("```cuda\n#define X 3  // sparseditto:tunable values=[1, 2]\n```\n")},
       MutationOutcome::kBadChild, ChatOutcome::kOk, "tunable declarations do not parse"},
      {"truncated", A, W, {AnthropicAnswer("```cuda\n#include", "max_tokens", 100, 8192)}, MutationOutcome::kModelFailed,
       ChatOutcome::kTruncated, "claude: truncated"},
      {"malformed_json", O, D, {garbage}, MutationOutcome::kModelFailed, ChatOutcome::kMalformedResponse, "not a JSON"},
      {"hang", A, D, {hang}, MutationOutcome::kModelFailed, ChatOutcome::kTimeout, "claude: timeout"},
      {"overloaded_thrice", A, D,
       {AnthropicError(529, "overloaded_error", "Overloaded"), AnthropicError(529, "overloaded_error", "Overloaded"),
        AnthropicError(529, "overloaded_error", "Overloaded")},
       MutationOutcome::kModelFailed, ChatOutcome::kOverloaded, "gave up after 3 attempts"},
      {"server_error", O, D, {OpenAiError(502, "server_error", "", "Bad gateway")}, MutationOutcome::kModelFailed,
       ChatOutcome::kServerError, "HTTP 502"},
      {"unauthorized", A, D, {AnthropicError(401, "authentication_error", "invalid x-api-key")},
       MutationOutcome::kModelDisabled, ChatOutcome::kAuthFailed, "model claude disabled: HTTP 401 authentication_error"},
  };
  for (const FailCase& c : cases) {
    SCOPED_TRACE(c.label);
    server_ = FakeLlmServer::Start();
    ASSERT_NE(server_, nullptr);
    for (const ScriptedResponse& s : c.script) server_->Enqueue(s);
    ModelOptions model = Model(c.provider == A ? "claude" : "gpt", c.provider);
    if (c.label == "hang") model.timeout_seconds = 0.5;
    std::unique_ptr<LlmMutator> mutator = Mutator({model});
    const MutationResult r = mutator->Mutate(Request(c.op));
    EXPECT_EQ(r.outcome, c.outcome) << MutationOutcomeName(r.outcome) << ": " << r.message;
    EXPECT_EQ(r.chat_outcome, c.chat) << ChatOutcomeName(r.chat_outcome);
    EXPECT_THAT(r.message, HasSubstr(c.words));
    EXPECT_THAT(r.message, Not(HasSubstr("KEYVALUE")));
    EXPECT_FALSE(r.prompt.empty());
    EXPECT_EQ(server_->requests().size(), c.script.size());
    EXPECT_TRUE(r.child.source().empty());
  }
}

TEST_F(LlmMutatorTest, FailureReasonIsFedBackInTheNextPrompt) {
  server_->Enqueue(OpenAiAnswer(kBadDiff));
  server_->Enqueue(OpenAiAnswer(kGoodDiff));
  std::unique_ptr<LlmMutator> mutator = Mutator({Model("gpt", Provider::kOpenAiCompatible)});
  MutationRequest request = Request();
  const MutationResult first = mutator->Mutate(request);
  ASSERT_EQ(first.outcome, MutationOutcome::kDiffDidNotApply);
  request.previous_failure = first.message;
  const MutationResult second = mutator->Mutate(request);
  EXPECT_EQ(second.outcome, MutationOutcome::kOk) << second.message;
  EXPECT_THAT(UserPrompt(1, Provider::kOpenAiCompatible), HasSubstr("Your previous attempt on this parent failed"));
  EXPECT_THAT(UserPrompt(1, Provider::kOpenAiCompatible), HasSubstr("'#define UNROLL 16'"));
  EXPECT_THAT(UserPrompt(0, Provider::kOpenAiCompatible), Not(HasSubstr("previous attempt")));
}

TEST_F(LlmMutatorTest, ContextTooLongShrinksThePromptAndChargesEveryAttempt) {
  server_->Enqueue(AnthropicError(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum"));
  server_->Enqueue(WithRetryAfter(AnthropicError(429, "rate_limit_error", "Number of request tokens has exceeded your "
                                                 "per-minute rate limit"), "3"));
  server_->Enqueue(AnthropicAnswer(kGoodDiff, "end_turn", 1000, 100));
  std::unique_ptr<LlmMutator> mutator = Mutator({Model("claude", Provider::kAnthropic)});
  const MutationResult r = mutator->Mutate(Request());
  ASSERT_EQ(r.outcome, MutationOutcome::kOk) << r.message;
  EXPECT_EQ(r.shrink_level, 1);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(sleeps_, std::vector<double>{3});
  EXPECT_EQ(r.prompt_tokens, 1000);
  EXPECT_DOUBLE_EQ(r.cost_usd, (1000 * 3.0 + 100 * 15.0) / 1e6);
  EXPECT_THAT(UserPrompt(0, Provider::kAnthropic), HasSubstr("INSPIRATION KERNEL"));
  EXPECT_THAT(UserPrompt(1, Provider::kAnthropic), Not(HasSubstr("INSPIRATION KERNEL")));
  EXPECT_THAT(r.prompt, Not(HasSubstr("INSPIRATION KERNEL")));
}

// Each request is reserved before it is sent: its worst case (the prompt's bytes + max_tokens of
// answer, at the model's prices) must fit what the task's budget has left, or nothing is sent.
TEST_F(LlmMutatorTest, ARequestWhoseWorstCaseDoesNotFitTheBudgetIsNotSent) {
  struct Case {
    std::string name;
    std::optional<int64_t> tokens_left;
    std::optional<double> usd_left;
    bool sent;
    std::string why;  // in the message when not sent
  };
  // The prompt of Request() is some 10-20 kB; max_tokens 4096 at $3 / $15 per million.
  const std::vector<Case> cases = {
      {"no limits", std::nullopt, std::nullopt, true, ""},
      {"ample tokens and money", 1'000'000, 10.0, true, ""},
      {"tokens for the answer but not the prompt too", 4096 + 100, std::nullopt, false, "tokens left"},
      {"no tokens left", 0, std::nullopt, false, "tokens left"},
      {"a limit already overrun", -5, std::nullopt, false, "tokens left"},
      {"money for the prompt but not the whole answer", std::nullopt, 0.06, false, "left in the task's budget"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.sent) server_->Enqueue(OpenAiAnswer(kGoodDiff));
    ModelOptions model = Model("gpt", Provider::kOpenAiCompatible);
    model.max_tokens = 4096;
    std::unique_ptr<LlmMutator> mutator = Mutator({model});
    MutationRequest request = Request();
    request.tokens_left = c.tokens_left;
    request.usd_left = c.usd_left;
    const size_t before = server_->requests().size();
    const MutationResult r = mutator->Mutate(request);
    EXPECT_EQ(server_->requests().size(), before + (c.sent ? 1 : 0));
    if (c.sent) {
      EXPECT_EQ(r.outcome, MutationOutcome::kOk) << r.message;
      continue;
    }
    EXPECT_EQ(r.outcome, MutationOutcome::kOverBudget);
    EXPECT_THAT(r.message, HasSubstr(c.why));
    EXPECT_THAT(r.message, HasSubstr("was not sent"));
    EXPECT_EQ(r.prompt_tokens + r.completion_tokens, 0);
    EXPECT_EQ(r.cost_usd, 0);
    EXPECT_EQ(r.model, "gpt");
  }
}

TEST_F(LlmMutatorTest, UnauthorizedModelIsDisabledAndTheOtherTakesOver) {
  server_->Enqueue(OpenAiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-test-mutator-KEYVALUE-0001."));
  server_->Enqueue(AnthropicAnswer(kGoodDiff));
  server_->Enqueue(AnthropicAnswer(kGoodDiff));
  std::unique_ptr<LlmMutator> mutator =
      Mutator({Model("gpt", Provider::kOpenAiCompatible), Model("claude", Provider::kAnthropic)},
              {.policy = ChoicePolicy::kCostAwareUcb});
  const MutationResult first = mutator->Mutate(Request());  // UCB tries gpt first
  EXPECT_EQ(first.model, "gpt");
  EXPECT_EQ(first.outcome, MutationOutcome::kModelDisabled);
  EXPECT_THAT(first.message, HasSubstr("[redacted]"));
  EXPECT_THAT(first.message, Not(HasSubstr("KEYVALUE")));
  EXPECT_TRUE(mutator->IsDisabled("gpt"));
  MutationRequest named = Request();
  named.model = "gpt";
  EXPECT_EQ(mutator->Mutate(named).outcome, MutationOutcome::kModelDisabled);
  EXPECT_EQ(server_->requests().size(), 1u);  // no request for a disabled model
  for (int i = 0; i < 2; ++i) {
    const MutationResult r = mutator->Mutate(Request());
    EXPECT_EQ(r.model, "claude");
    EXPECT_EQ(r.outcome, MutationOutcome::kOk) << r.message;
  }
  named.model = "nobody";
  EXPECT_EQ(mutator->Mutate(named).outcome, MutationOutcome::kInvalidRequest);
  ASSERT_TRUE(mutator->RecordReward("claude", 0.5, 0.01).ok());
  EXPECT_THAT(mutator->SaveChooserState(), HasSubstr("\"claude\""));
}

TEST_F(LlmMutatorTest, CommandMutatorRewrites) {
  const std::string script = ::sparseditto::testing_support::ProcessTempDir() + "/sd_rewrite.sh";
  std::ofstream(script) << "#!/bin/sh\ncat >/dev/null\nprintf 'New kernel:\\n```cuda\\n#include \"sparseditto_kernel.h\"\\n"
                           "// REWRITTEN\\n```\\n'\n";
  ModelOptions m;
  m.name = "script";
  m.provider = Provider::kCommand;
  m.command = {"/bin/sh", script};
  m.timeout_seconds = 10;
  std::unique_ptr<LlmMutator> mutator = Mutator({m});
  const MutationResult r = mutator->Mutate(Request(v1::MUTATION_OPERATOR_LLM_REWRITE));
  ASSERT_EQ(r.outcome, MutationOutcome::kOk) << r.message;
  EXPECT_EQ(r.child.source(), "#include \"sparseditto_kernel.h\"\n// REWRITTEN\n");
  EXPECT_EQ(r.child.model(), "script");
  EXPECT_DOUBLE_EQ(r.cost_usd, 0);
}

}  // namespace
}  // namespace sparseditto::llm
