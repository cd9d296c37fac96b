#include "llm_mutator/chat_wire.h"

#include <array>

#include "fmt/format.h"

namespace sparseditto::llm {
namespace {

constexpr std::array kOutcomes = {
    ChatOutcome::kOk,         ChatOutcome::kRateLimited,     ChatOutcome::kOverloaded,       ChatOutcome::kServerError,
    ChatOutcome::kTimeout,    ChatOutcome::kConnectionFailed, ChatOutcome::kAuthFailed,      ChatOutcome::kContextTooLong,
    ChatOutcome::kBadRequest, ChatOutcome::kTruncated,       ChatOutcome::kMalformedResponse, ChatOutcome::kEmptyAnswer,
    ChatOutcome::kCommandFailed};

}  // namespace

v1::ChatAnswer ChatAnswerOf(const ChatResult& result) {
  v1::ChatAnswer answer;
  answer.set_outcome(std::string(ChatOutcomeName(result.outcome)));
  answer.set_message(result.message);
  answer.set_text(result.text);
  answer.set_raw(result.raw);
  answer.set_http_status(result.http_status);
  answer.set_retry_after_seconds(result.retry_after_seconds.value_or(-1));
  answer.set_prompt_tokens(result.prompt_tokens);
  answer.set_completion_tokens(result.completion_tokens);
  answer.set_finish_reason(result.finish_reason);
  answer.set_seconds(result.seconds);
  return answer;
}

ChatResult ChatResultOf(const v1::ChatAnswer& answer) {
  ChatResult result;
  result.outcome = ChatOutcome::kMalformedResponse;
  result.message = fmt::format("the mutator service answered with an unknown outcome '{}'", answer.outcome());
  for (ChatOutcome outcome : kOutcomes) {
    if (ChatOutcomeName(outcome) == answer.outcome()) {
      result.outcome = outcome;
      result.message = answer.message();
      break;
    }
  }
  result.text = answer.text();
  result.raw = answer.raw();
  result.http_status = answer.http_status();
  if (answer.retry_after_seconds() >= 0) result.retry_after_seconds = answer.retry_after_seconds();
  result.prompt_tokens = answer.prompt_tokens();
  result.completion_tokens = answer.completion_tokens();
  result.finish_reason = answer.finish_reason();
  result.seconds = answer.seconds();
  return result;
}

}  // namespace sparseditto::llm
