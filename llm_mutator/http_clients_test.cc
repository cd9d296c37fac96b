// Both wire protocols against a local server that answers exactly as the real ones do: the request
// each client sends (path, headers with the key, JSON body) and every scripted answer's outcome,
// through the real libcurl transport and the one retry layer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm_mutator/http_clients.h"
#include "llm_mutator/retry.h"
#include "llm_mutator/testing/fake_llm_server.h"
#include "llm_mutator/testing/provider_bodies.h"
#include "nlohmann/json.hpp"

namespace sparseditto::llm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::AnthropicAnswer;
using testing::AnthropicError;
using testing::FakeLlmServer;
using testing::OpenAiAnswer;
using testing::OpenAiError;
using testing::RecordedRequest;
using testing::ScriptedResponse;
using testing::WithRetryAfter;

constexpr char kKeyVar[] = "SD_TEST_LLM_API_KEY";
constexpr char kKey[] = "sk-test-0123456789abcdefSECRET";

ModelOptions Model(Provider provider, const std::string& url) {
  ModelOptions m;
  m.name = provider == Provider::kAnthropic ? "claude" : "gpt";
  m.provider = provider;
  m.endpoint = provider == Provider::kAnthropic ? url : url + "/v1";
  m.model = provider == Provider::kAnthropic ? "claude-sonnet-4-5" : "gpt-4.1";
  m.api_key_env = kKeyVar;
  m.temperature = 0.5;
  m.max_tokens = 2048;
  m.timeout_seconds = 10;
  return m;
}

// The request as the real server would parse it.
void CheckRequest(const RecordedRequest& r, Provider provider) {
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  const nlohmann::json body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["max_tokens"], 2048);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.5);
  if (provider == Provider::kAnthropic) {
    EXPECT_EQ(r.path, "/v1/messages");
    EXPECT_EQ(r.headers.at("x-api-key"), kKey);
    EXPECT_EQ(r.headers.at("anthropic-version"), "2023-06-01");
    EXPECT_FALSE(r.headers.contains("authorization"));
    EXPECT_EQ(body["model"], "claude-sonnet-4-5");
    EXPECT_EQ(body["system"], "the rules");
    EXPECT_EQ(body["messages"][0]["role"], "user");
    EXPECT_EQ(body["messages"][0]["content"], "the task");
  } else {
    EXPECT_EQ(r.path, "/v1/chat/completions");
    EXPECT_EQ(r.headers.at("authorization"), std::string("Bearer ") + kKey);
    EXPECT_FALSE(r.headers.contains("x-api-key"));
    EXPECT_EQ(body["model"], "gpt-4.1");
    EXPECT_EQ(body["messages"][0]["role"], "system");
    EXPECT_EQ(body["messages"][0]["content"], "the rules");
    EXPECT_EQ(body["messages"][1]["content"], "the task");
  }
}

struct Case {
  std::string label;
  Provider provider;
  std::vector<ScriptedResponse> script;
  ChatOutcome outcome;
  std::string text_or_words;  // the answer when kOk, else words of the message
  std::vector<double> sleeps;
  int64_t prompt_tokens = 0;
};

std::vector<Case> Cases() {
  const Provider O = Provider::kOpenAiCompatible, A = Provider::kAnthropic;
  ScriptedResponse hang = OpenAiAnswer("late");
  hang.delay_seconds = 30;
  ScriptedResponse anthropic_hang = AnthropicAnswer("late");
  anthropic_hang.delay_seconds = 30;
  ScriptedResponse closed = OpenAiAnswer("never");
  closed.close_without_answer = true;
  ScriptedResponse html = OpenAiAnswer("");
  html.body = "<html><body>502 Bad Gateway</body></html>";
  html.headers = {{"Content-Type", "text/html"}};
  return {
      {"openai_ok", O, {OpenAiAnswer("the answer", "stop", 1200, 300)}, ChatOutcome::kOk, "the answer", {}, 1200},
      {"anthropic_ok", A, {AnthropicAnswer("the answer", "end_turn", 1500, 400)}, ChatOutcome::kOk, "the answer", {}, 1500},
      {"openai_429_retry_after_then_ok", O,
       {WithRetryAfter(OpenAiError(429, "tokens", "rate_limit_exceeded",
                                   "Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM): Limit "
                                   "30000, Used 29000, Requested 2000. Please try again in 2s."), "2"),
        OpenAiAnswer("after the wait")},
       ChatOutcome::kOk, "after the wait", {2}, 1200},
      {"anthropic_429_retry_after_then_ok", A,
       {WithRetryAfter(AnthropicError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), "5"),
        AnthropicAnswer("ok now")},
       ChatOutcome::kOk, "ok now", {5}, 1500},
      {"anthropic_529_overloaded_then_ok", A,
       {AnthropicError(529, "overloaded_error", "Overloaded"), AnthropicAnswer("ok now")}, ChatOutcome::kOk, "ok now", {}, 1500},
      {"anthropic_529_gives_up", A,
       {AnthropicError(529, "overloaded_error", "Overloaded"), AnthropicError(529, "overloaded_error", "Overloaded"),
        AnthropicError(529, "overloaded_error", "Overloaded")},
       ChatOutcome::kOverloaded, "HTTP 529 overloaded_error: Overloaded (gave up after 3 attempts)", {}},
      {"openai_hang_times_out", O, {hang}, ChatOutcome::kTimeout, "timed out", {}},
      {"anthropic_hang_times_out", A, {anthropic_hang}, ChatOutcome::kTimeout, "timed out", {}},
      {"openai_truncated", O, {OpenAiAnswer("<<<<<<< SEARCH\nhalf", "length", 900, 2048)}, ChatOutcome::kTruncated,
       "cut at max_tokens", {}, 900},
      {"anthropic_truncated", A, {AnthropicAnswer("```cuda\nhalf", "max_tokens", 900, 2048)}, ChatOutcome::kTruncated,
       "cut at max_tokens", {}, 900},
      {"openai_malformed_json", O, {html}, ChatOutcome::kMalformedResponse, "not a JSON object", {}},
      {"openai_401", O,
       {OpenAiError(401, "invalid_request_error", "invalid_api_key",
                    std::string("Incorrect API key provided: ") + kKey + ". You can find your API key at "
                    "https://platform.openai.com/account/api-keys.")},
       ChatOutcome::kAuthFailed, "HTTP 401 invalid_request_error: Incorrect API key provided: [redacted]", {}},
      {"anthropic_401", A, {AnthropicError(401, "authentication_error", "invalid x-api-key")}, ChatOutcome::kAuthFailed,
       "authentication_error: invalid x-api-key", {}},
      {"openai_500_not_retried", O, {OpenAiError(500, "server_error", "", "The server had an error")},
       ChatOutcome::kServerError, "HTTP 500", {}},
      {"openai_context_too_long", O,
       {OpenAiError(400, "invalid_request_error", "context_length_exceeded",
                    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 "
                    "tokens. Please reduce the length of the messages.")},
       ChatOutcome::kContextTooLong, "maximum context length", {}},
      {"connection_closed", O, {closed}, ChatOutcome::kConnectionFailed, "", {}},
  };
}

TEST(HttpClientsTest, EveryScriptedAnswer) {
  setenv(kKeyVar, kKey, 1);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start();
    ASSERT_NE(server, nullptr);
    for (const ScriptedResponse& r : c.script) server->Enqueue(r);
    ModelOptions model = Model(c.provider, server->url());
    if (c.label.find("hang") != std::string::npos) model.timeout_seconds = 0.5;
    CurlTransport transport;
    HttpChatClient client(model, &transport);
    std::vector<double> sleeps;
    Rng rng(1);
    const auto start = std::chrono::steady_clock::now();
    const ChatResult r = CallWithRetries(client, {.system = "the rules", .user = "the task"},
                                         {.max_retries = 2, .initial_backoff_seconds = 0.01}, rng,
                                         [&](double s) { sleeps.push_back(s); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.outcome, c.outcome) << ChatOutcomeName(r.outcome) << ": " << r.message;
    if (c.outcome == ChatOutcome::kOk) {
      EXPECT_EQ(r.text, c.text_or_words);
      EXPECT_EQ(r.http_status, 200);
    } else {
      EXPECT_THAT(r.message, HasSubstr(c.text_or_words));
    }
    EXPECT_EQ(r.prompt_tokens, c.prompt_tokens);
    EXPECT_THAT(r.message, Not(HasSubstr("SECRET")));
    EXPECT_THAT(r.raw, Not(HasSubstr("SECRET")));
    // Retry-After is honoured exactly; pauses without it are the (tiny) backoff.
    if (!c.sleeps.empty()) {
      EXPECT_EQ(sleeps, c.sleeps);
    }
    EXPECT_EQ(static_cast<size_t>(r.attempts), c.script.size());
    EXPECT_LT(seconds, 5.0);  // a hang ends at the client's time limit, not the server's 30 s
    const std::vector<RecordedRequest> requests = server->requests();
    ASSERT_EQ(requests.size(), c.script.size());
    for (const RecordedRequest& req : requests) CheckRequest(req, c.provider);
    EXPECT_EQ(server->pending(), 0u);
  }
}

TEST(HttpClientsTest, UnsetKeyIsAnAuthFailureWithoutARequest) {
  std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start();
  ASSERT_NE(server, nullptr);
  ModelOptions model = Model(Provider::kOpenAiCompatible, server->url());
  model.api_key_env = "SD_TEST_SURELY_UNSET_VARIABLE";
  unsetenv(model.api_key_env.c_str());
  CurlTransport transport;
  const ChatResult r = HttpChatClient(model, &transport).Complete({.user = "x"});
  EXPECT_EQ(r.outcome, ChatOutcome::kAuthFailed);
  EXPECT_THAT(r.message, HasSubstr("SD_TEST_SURELY_UNSET_VARIABLE is not set"));
  EXPECT_TRUE(server->requests().empty());
}

TEST(HttpClientsTest, NoKeyConfiguredSendsNoAuthHeader) {  // a local vLLM or Ollama
  std::unique_ptr<FakeLlmServer> server = FakeLlmServer::Start();
  ASSERT_NE(server, nullptr);
  server->Enqueue(OpenAiAnswer("hi"));
  ModelOptions model = Model(Provider::kOpenAiCompatible, server->url());
  model.api_key_env.clear();
  CurlTransport transport;
  EXPECT_EQ(HttpChatClient(model, &transport).Complete({.user = "x"}).outcome, ChatOutcome::kOk);
  ASSERT_EQ(server->requests().size(), 1u);
  EXPECT_FALSE(server->requests()[0].headers.contains("authorization"));
}

TEST(HttpClientsTest, NothingListeningIsAConnectionFailure) {
  // A port bound but not listening (held for the whole test, so no other process takes it): refused.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  setenv(kKeyVar, kKey, 1);
  ModelOptions model = Model(Provider::kAnthropic, "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  CurlTransport transport;
  const ChatResult r = HttpChatClient(model, &transport).Complete({.user = "x"});
  close(fd);
  EXPECT_EQ(r.outcome, ChatOutcome::kConnectionFailed) << ChatOutcomeName(r.outcome) << ": " << r.message;
  EXPECT_THAT(r.message, Not(HasSubstr("SECRET")));
}

}  // namespace
}  // namespace sparseditto::llm
