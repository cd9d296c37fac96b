// The command mutator: pipes the prompt to a local program's stdin and takes its stdout as the answer
// (common/subprocess.h: no shell, a clean environment, its own process group, a time limit, an
// output cap). What the program reads: the system part, a line "=====", then the user part. What it
// writes: the answer in the same form an LLM would (a diff or a ```cuda block).
//
// Outcomes: kOk (exit 0 and non-empty stdout); kEmptyAnswer (exit 0, nothing written); kTimeout (the
// time limit killed it); kCommandFailed (could not start, non-zero exit, signal; the message has the
// outcome and the tail of its stderr); kTruncated (stdout passed the cap). Token counts are the
// prompt's and the answer's sizes in bytes / 4 (an estimate; prices usually 0 for a command).
// Thread-safety: Complete may be called from many threads at once (a child per call).
#pragma once

#include <cstdint>

#include "llm_mutator/chat_client.h"
#include "llm_mutator/model_options.h"

namespace sparseditto::llm {

inline constexpr std::string_view kCommandPromptSeparator = "\n=====\n";

class CommandClient : public ChatClient {
 public:
  explicit CommandClient(ModelOptions model, int64_t max_output_bytes = 4 << 20)
      : model_(std::move(model)), max_output_bytes_(max_output_bytes) {}
  ChatResult Complete(const ChatRequest& request) override;

 private:
  const ModelOptions model_;
  const int64_t max_output_bytes_;
};

}  // namespace sparseditto::llm
