// The one retry layer: which outcomes are retried, how long it waits, when it gives up.
#include "llm_mutator/retry.h"

#include <deque>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::llm {
namespace {

class ScriptedClient : public ChatClient {
 public:
  explicit ScriptedClient(std::deque<ChatResult> answers) : answers_(std::move(answers)) {}
  ChatResult Complete(const ChatRequest&) override {
    ++calls;
    ChatResult r = answers_.front();
    if (answers_.size() > 1) answers_.pop_front();
    return r;
  }
  int calls = 0;

 private:
  std::deque<ChatResult> answers_;
};

ChatResult Outcome(ChatOutcome o, std::optional<double> retry_after = std::nullopt) {
  ChatResult r;
  r.outcome = o;
  r.retry_after_seconds = retry_after;
  r.prompt_tokens = 10;
  return r;
}

TEST(RetryTest, Table) {
  struct Case {
    std::string label;
    std::deque<ChatResult> answers;
    int max_retries;
    ChatOutcome final_outcome;
    int calls;
    std::vector<double> sleeps;  // exact where Retry-After rules, else checked by range
  };
  const Case cases[] = {
      {"ok_at_once", {Outcome(ChatOutcome::kOk)}, 4, ChatOutcome::kOk, 1, {}},
      {"429_retry_after_then_ok", {Outcome(ChatOutcome::kRateLimited, 7), Outcome(ChatOutcome::kOk)}, 4,
       ChatOutcome::kOk, 2, {7}},
      {"529_twice_then_ok", {Outcome(ChatOutcome::kOverloaded, 1), Outcome(ChatOutcome::kOverloaded, 2.5),
                             Outcome(ChatOutcome::kOk)}, 4, ChatOutcome::kOk, 3, {1, 2.5}},
      {"retry_after_capped", {Outcome(ChatOutcome::kRateLimited, 3600), Outcome(ChatOutcome::kOk)}, 4,
       ChatOutcome::kOk, 2, {60}},
      {"gives_up", {Outcome(ChatOutcome::kRateLimited, 1)}, 2, ChatOutcome::kRateLimited, 3, {1, 1}},
      {"no_retries_configured", {Outcome(ChatOutcome::kOverloaded, 1)}, 0, ChatOutcome::kOverloaded, 1, {}},
      {"server_error_not_retried", {Outcome(ChatOutcome::kServerError)}, 4, ChatOutcome::kServerError, 1, {}},
      {"timeout_not_retried", {Outcome(ChatOutcome::kTimeout)}, 4, ChatOutcome::kTimeout, 1, {}},
      {"truncated_not_retried", {Outcome(ChatOutcome::kTruncated)}, 4, ChatOutcome::kTruncated, 1, {}},
      {"auth_not_retried", {Outcome(ChatOutcome::kAuthFailed)}, 4, ChatOutcome::kAuthFailed, 1, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    ScriptedClient client(c.answers);
    std::vector<double> sleeps;
    Rng rng(1);
    const ChatResult r = CallWithRetries(client, {}, {.max_retries = c.max_retries}, rng,
                                         [&](double s) { sleeps.push_back(s); });
    EXPECT_EQ(r.outcome, c.final_outcome);
    EXPECT_EQ(client.calls, c.calls);
    EXPECT_EQ(r.attempts, c.calls);
    EXPECT_EQ(r.prompt_tokens, 10 * c.calls);
    EXPECT_EQ(sleeps, c.sleeps);
  }
}

TEST(RetryTest, BackoffGrowsWithJitterAndStaysUnderTheCap) {
  const RetryOptions options{.max_retries = 8, .initial_backoff_seconds = 2, .multiplier = 2, .max_backoff_seconds = 30,
                             .jitter = 0.5};
  Rng rng(5);
  const ChatResult no_header = Outcome(ChatOutcome::kOverloaded);
  for (int retry = 1; retry <= 8; ++retry) {
    const double full = std::min(30.0, 2.0 * std::pow(2.0, retry - 1));
    const double s = BackoffSeconds(options, retry, no_header, rng);
    EXPECT_LE(s, full) << retry;
    EXPECT_GE(s, full * 0.5) << retry;
  }
  Rng a(9), b(9);
  EXPECT_EQ(BackoffSeconds(options, 3, no_header, a), BackoffSeconds(options, 3, no_header, b));
}

}  // namespace
}  // namespace sparseditto::llm
