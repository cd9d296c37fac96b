// One question to one model, one attempt: the interface the three clients share (OpenAI-compatible
// Chat Completions, Anthropic Messages, a local command) and the typed outcome every answer gets.
//
// Nothing here throws or crashes on a bad answer: a server's error, a time-out, a truncated or
// malformed answer each is a ChatOutcome with a message. Messages never carry the API key
// (model_options.h: RedactSecrets is applied to everything taken from a server's answer).
// Retries are not done by clients; retry.h is the one retry layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparseditto::llm {

enum class ChatOutcome {
  kOk,               // text holds the whole answer
  kRateLimited,      // 429; retryable (retry.h)
  kOverloaded,       // 503 or Anthropic's 529 overloaded_error; retryable
  kServerError,      // another 5xx; not retried
  kTimeout,          // the time limit or the low-speed limit ended the request
  kConnectionFailed, // no connection, reset, or a broken HTTP exchange
  kAuthFailed,       // 401 or 403, or the key's variable is unset: the model is to be disabled
  kContextTooLong,   // 400 saying the prompt is longer than the model's context: shrink and ask again
  kBadRequest,       // another 4xx
  kTruncated,        // finish_reason "length" / stop_reason "max_tokens": text is the partial answer
  kMalformedResponse,// the body is not the JSON the protocol promises
  kEmptyAnswer,      // a well-formed answer without text
  kCommandFailed,    // the command mutator's program failed (exit code, signal, could not start)
};

// "ok", "rate_limited", "overloaded", ... (lower case, stable: they appear in records).
std::string_view ChatOutcomeName(ChatOutcome outcome);

// 429, 503 and 529: the outcomes retry.h retries.
bool IsRetryable(ChatOutcome outcome);

struct ChatRequest {
  std::string system;  // the contract and rules
  std::string user;    // the task, the parents, the operator's instructions
};

struct ChatResult {
  ChatOutcome outcome = ChatOutcome::kOk;
  std::string message;  // why, when not kOk: the server's error type and message, redacted
  std::string text;     // the answer (also the partial answer when kTruncated)
  std::string raw;      // the response body (or the command's stdout) as received, for the record
  long http_status = 0; // 0 for a transport failure or a command
  std::optional<double> retry_after_seconds;  // a Retry-After header in seconds form, when present
  int64_t prompt_tokens = 0;      // from the answer's usage (0 when it has none)
  int64_t completion_tokens = 0;
  std::string finish_reason;      // as the server wrote it ("stop", "length", "end_turn", "max_tokens")
  double seconds = 0;             // wall time of the attempt
  int attempts = 1;               // set by retry.h: attempts made in total
};

class ChatClient {
 public:
  virtual ~ChatClient() = default;
  // One attempt. Thread-safe in every implementation.
  virtual ChatResult Complete(const ChatRequest& request) = 0;
};

}  // namespace sparseditto::llm
