#include "llm_mutator/command_client.h"

#include "common/status_format.h"
#include "common/subprocess.h"
#include "common/text_tail.h"
#include "fmt/format.h"

namespace sparseditto::llm {

ChatResult CommandClient::Complete(const ChatRequest& request) {
  ChatResult r;
  SpawnOptions spawn;
  spawn.argv = model_.command;
  spawn.max_captured_bytes = max_output_bytes_;
  const std::string input = request.system + std::string(kCommandPromptSeparator) + request.user;
  absl::StatusOr<CommandResult> run = RunCommand(spawn, model_.timeout_seconds, input);
  if (!run.ok()) {
    r.outcome = ChatOutcome::kCommandFailed;
    r.message = fmt::format("could not run {}: {}", model_.command.front(), run.status().message());
    return r;
  }
  r.seconds = run->seconds;
  r.raw = run->stdout_output.bytes;
  r.prompt_tokens = static_cast<int64_t>(input.size() / 4);
  r.completion_tokens = static_cast<int64_t>(r.raw.size() / 4);
  const std::string stderr_tail = TextTail(run->stderr_output.bytes, 2000);
  if (run->outcome.kind == ExitOutcome::Kind::kTimedOut) {
    r.outcome = ChatOutcome::kTimeout;
    r.message = fmt::format("{} did not answer within {} s", model_.command.front(), model_.timeout_seconds);
    return r;
  }
  if (!run->outcome.success()) {
    r.outcome = ChatOutcome::kCommandFailed;
    r.message = fmt::format("{} {}{}{}", model_.command.front(), run->outcome.ToString(),
                            stderr_tail.empty() ? "" : ": ", stderr_tail);
    return r;
  }
  if (run->stdout_output.truncated) {
    r.outcome = ChatOutcome::kTruncated;
    r.message = fmt::format("{} wrote more than {} bytes", model_.command.front(), max_output_bytes_);
    return r;
  }
  r.text = r.raw;
  if (r.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    r.outcome = ChatOutcome::kEmptyAnswer;
    r.message = fmt::format("{} wrote nothing on stdout", model_.command.front());
  }
  return r;
}

}  // namespace sparseditto::llm
