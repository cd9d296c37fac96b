// The two wire protocols without a network: request bodies, answers, errors, secrets.
#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm_mutator/http_clients.h"
#include "llm_mutator/model_options.h"
#include "llm_mutator/provider_errors.h"
#include "nlohmann/json.hpp"

namespace sparseditto::llm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

ModelOptions Model() {
  ModelOptions m;
  m.name = "m";
  m.model = "qwen";
  m.temperature = 0.7;
  m.max_tokens = 1234;
  return m;
}

TEST(ProviderProtocolTest, RequestBodies) {
  const ChatRequest request{.system = "rules \"quoted\"", .user = "task\n\u00e9"};
  const json openai = json::parse(OpenAiRequestBody(Model(), request));
  EXPECT_EQ(openai["model"], "qwen");
  EXPECT_EQ(openai["max_tokens"], 1234);
  EXPECT_DOUBLE_EQ(openai["temperature"].get<double>(), 0.7);
  ASSERT_EQ(openai["messages"].size(), 2u);
  EXPECT_EQ(openai["messages"][0]["role"], "system");
  EXPECT_EQ(openai["messages"][0]["content"], request.system);
  EXPECT_EQ(openai["messages"][1]["role"], "user");
  EXPECT_EQ(openai["messages"][1]["content"], request.user);
  const json anthropic = json::parse(AnthropicRequestBody(Model(), request));
  EXPECT_EQ(anthropic["model"], "qwen");
  EXPECT_EQ(anthropic["max_tokens"], 1234);
  EXPECT_EQ(anthropic["system"], request.system);
  ASSERT_EQ(anthropic["messages"].size(), 1u);
  EXPECT_EQ(anthropic["messages"][0]["role"], "user");
  EXPECT_EQ(anthropic["messages"][0]["content"], request.user);
  // Invalid UTF-8 from a log does not throw; it is replaced.
  EXPECT_NO_THROW(OpenAiRequestBody(Model(), {.user = std::string("bad \xff byte")}));
}

TEST(ProviderProtocolTest, AnswerTable) {
  struct Case {
    std::string label;
    bool anthropic;
    std::string body;
    ChatOutcome outcome;
    std::string text;
    int64_t in, out;
  };
  const Case cases[] = {
      {"openai_ok", false,
       R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],)"
       R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})",
       ChatOutcome::kOk, "hi", 5, 2},
      {"openai_length", false,
       R"({"choices":[{"message":{"content":"par"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":9}})",
       ChatOutcome::kTruncated, "par", 5, 9},
      {"openai_null_content", false, R"({"choices":[{"message":{"content":null},"finish_reason":"stop"}]})",
       ChatOutcome::kEmptyAnswer, "", 0, 0},
      {"openai_no_choices", false, R"({"choices":[]})", ChatOutcome::kMalformedResponse, "", 0, 0},
      {"openai_choice_not_object", false, R"({"choices":[3]})", ChatOutcome::kMalformedResponse, "", 0, 0},
      {"openai_usage_strings", false, R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":"5"}})",
       ChatOutcome::kOk, "x", 0, 0},
      {"not_json", false, "<html>502 Bad Gateway</html>", ChatOutcome::kMalformedResponse, "", 0, 0},
      {"cut_json", false, R"({"choices":[{"message":{"content":"x")", ChatOutcome::kMalformedResponse, "", 0, 0},
      {"json_array", true, "[1,2]", ChatOutcome::kMalformedResponse, "", 0, 0},
      {"anthropic_ok_two_blocks", true,
       R"({"type":"message","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"a"},{"type":"text","text":"b"}],)"
       R"("stop_reason":"end_turn","usage":{"input_tokens":11,"output_tokens":3}})",
       ChatOutcome::kOk, "ab", 11, 3},
      {"anthropic_max_tokens", true,
       R"({"content":[{"type":"text","text":"pa"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":8}})",
       ChatOutcome::kTruncated, "pa", 1, 8},
      {"anthropic_no_text", true, R"({"content":[],"stop_reason":"end_turn"})", ChatOutcome::kEmptyAnswer, "", 0, 0},
      {"anthropic_content_not_list", true, R"({"content":"x"})", ChatOutcome::kMalformedResponse, "", 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    const ChatResult r = c.anthropic ? ParseAnthropicAnswer(c.body) : ParseOpenAiAnswer(c.body);
    EXPECT_EQ(r.outcome, c.outcome) << r.message;
    EXPECT_EQ(r.text, c.text);
    EXPECT_EQ(r.prompt_tokens, c.in);
    EXPECT_EQ(r.completion_tokens, c.out);
    EXPECT_EQ(r.raw, c.body);
  }
}

TEST(ProviderProtocolTest, FailureTable) {
  struct Case {
    std::string label;
    HttpResponse response;
    ChatOutcome outcome;
    std::string words;
    std::optional<double> retry_after;
  };
  const Case cases[] = {
      {"openai_429", {.status = 429, .headers = {{"retry-after", "3"}},
                      .body = R"({"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}})"},
       ChatOutcome::kRateLimited, "HTTP 429 requests: Rate limit reached (rate_limit_exceeded)", 3.0},
      {"anthropic_529", {.status = 529, .body = R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"},
       ChatOutcome::kOverloaded, "HTTP 529 overloaded_error: Overloaded", std::nullopt},
      {"503_date_retry_after", {.status = 503, .headers = {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}}, .body = "busy"},
       ChatOutcome::kOverloaded, "HTTP 503 busy", std::nullopt},
      {"openai_context", {.status = 400, .body = R"({"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}})"},
       ChatOutcome::kContextTooLong, "maximum context length", std::nullopt},
      {"anthropic_context", {.status = 400, .body = R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}})"},
       ChatOutcome::kContextTooLong, "prompt is too long", std::nullopt},
      {"bad_request", {.status = 400, .body = R"({"error":{"message":"temperature must be <= 2","type":"invalid_request_error"}})"},
       ChatOutcome::kBadRequest, "temperature", std::nullopt},
      {"vllm_404_model", {.status = 404, .body = R"({"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404})"},
       ChatOutcome::kBadRequest, "HTTP 404", std::nullopt},
      {"401_echoes_key", {.status = 401, .body = R"({"error":{"message":"Incorrect API key provided: sk-live-SECRETKEY123. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}})"},
       ChatOutcome::kAuthFailed, "Incorrect API key provided: [redacted]", std::nullopt},
      {"403", {.status = 403, .body = R"({"type":"error","error":{"type":"permission_error","message":"no access"}})"},
       ChatOutcome::kAuthFailed, "permission_error", std::nullopt},
      {"500", {.status = 500, .body = R"({"error":{"message":"boom","type":"server_error"}})"}, ChatOutcome::kServerError,
       "HTTP 500 server_error: boom", std::nullopt},
      {"timeout", {.transport = TransportError::kTimeout, .error = "Operation timed out after 1000 milliseconds"},
       ChatOutcome::kTimeout, "timed out", std::nullopt},
      {"refused", {.transport = TransportError::kConnect, .error = "Failed to connect"}, ChatOutcome::kConnectionFailed,
       "Failed to connect", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    const ChatResult r = ClassifyFailure(c.response, "sk-live-SECRETKEY123");
    EXPECT_EQ(r.outcome, c.outcome) << ChatOutcomeName(r.outcome);
    EXPECT_THAT(r.message, HasSubstr(c.words));
    EXPECT_EQ(r.retry_after_seconds, c.retry_after);
    EXPECT_THAT(r.message, Not(HasSubstr("SECRETKEY")));
    EXPECT_THAT(r.raw, Not(HasSubstr("SECRETKEY")));
  }
}

TEST(ProviderProtocolTest, SecretsAndOptions) {
  EXPECT_EQ(RedactSecrets("key abc123xyz here", "abc123xyz"), "key [redacted] here");
  EXPECT_EQ(RedactSecrets("use sk-ant-api03-AAAA now", ""), "use [redacted] now");
  EXPECT_EQ(RedactSecrets("Authorization: Bearer tok_12345", ""), "Authorization: Bearer [redacted]");
  EXPECT_EQ(RedactSecrets("task-sk-1 and risk-free", ""), "task-sk-1 and risk-free");

  v1::MutatorSpec spec;
  spec.set_name("claude");
  spec.set_kind(v1::MUTATOR_KIND_ANTHROPIC);
  spec.set_model("claude-sonnet-4-5");
  spec.set_api_key_env("SD_TEST_UNSET_KEY_VARIABLE");
  spec.set_concurrency(2);
  spec.set_timeout_seconds(30);
  spec.set_usd_per_million_input_tokens(3);
  spec.set_usd_per_million_output_tokens(15);
  absl::StatusOr<ModelOptions> m = ModelOptionsFromSpec(spec);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->endpoint, kAnthropicDefaultEndpoint);
  EXPECT_EQ(m->max_retries, kDefaultMaxRetries);
  EXPECT_EQ(m->max_tokens, kDefaultMaxOutputTokens);
  EXPECT_DOUBLE_EQ(CostUsd(*m, 1'000'000, 100'000), 3 + 1.5);
  unsetenv("SD_TEST_UNSET_KEY_VARIABLE");
  absl::Status unset = ReadApiKey(*m).status();
  EXPECT_EQ(unset.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(unset.message()), HasSubstr("SD_TEST_UNSET_KEY_VARIABLE is not set"));
  spec.set_kind(v1::MUTATOR_KIND_OPENAI_COMPATIBLE);
  spec.set_endpoint("http://localhost:8000/v1/");
  spec.set_max_retries(0);
  m = ModelOptionsFromSpec(spec);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->endpoint, "http://localhost:8000/v1");
  EXPECT_EQ(m->max_retries, 0);
  spec.set_kind(v1::MUTATOR_KIND_BUILTIN);
  EXPECT_FALSE(ModelOptionsFromSpec(spec).ok());
}

}  // namespace
}  // namespace sparseditto::llm
