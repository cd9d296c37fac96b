// Prompts from the editable templates in configs/prompts/ (prompt_template.h syntax):
//   system.txt  the ABI contract ({{abi_header}}: kernel_abi/sparseditto_kernel.h) and the rules;
//   user.txt    the task, the GPU, the parent(s) with their evaluations, the inspirations, the
//               previous failure and the operator's instructions (sections op_diff, op_rewrite,
//               op_crossover).
// Every variable the templates may use is listed in configs/prompts/README.md.
//
// Shrinking (a model answered "context too long"): level 0 is the full prompt; 1 drops the
// inspirations; 2 also trims the parents' logs to kTrimmedLogBytes; 3 drops the logs altogether.
// Privacy (ModelOptions.privacy): the prompt carries only the kernels and the matrix statistics. Left
// out: the task name, the matrix file's path, candidate ids, GPU names, the task's source file;
// logs and failure messages pass through ScrubPrivate (absolute paths, the host name and the user
// name replaced). Kernel sources are sent as they are (a SEARCH/REPLACE diff must match them).
// Thread-safety: a PromptLibrary is immutable after Load; BuildPrompt is thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "llm_mutator/chat_client.h"
#include "llm_mutator/mutation_request.h"

namespace sparseditto::llm {

inline constexpr int kMaxShrinkLevel = 3;
inline constexpr size_t kFullLogBytes = 6000;
inline constexpr size_t kTrimmedLogBytes = 1500;

class PromptLibrary {
 public:
  // Reads system.txt and user.txt from `prompts_dir` and the ABI header from `abi_header_path`.
  // NotFound / Unavailable for a file that is missing or unreadable.
  static absl::StatusOr<PromptLibrary> Load(const std::string& prompts_dir, const std::string& abi_header_path);
  // From text held in memory (tests).
  PromptLibrary(std::string system_template, std::string user_template, std::string abi_header)
      : system_(std::move(system_template)), user_(std::move(user_template)), abi_header_(std::move(abi_header)) {}

  // InvalidArgument for a template fault (unknown placeholder, unclosed section) or a request the
  // templates cannot serve (no parent; crossover without a mate; an operator other than LLM_DIFF,
  // LLM_REWRITE, LLM_CROSSOVER).
  absl::StatusOr<ChatRequest> BuildPrompt(const MutationRequest& request, int shrink_level, bool privacy) const;

 private:
  std::string system_;
  std::string user_;
  std::string abi_header_;
};

// `text` with absolute paths (/a/b, ~/a), the host name and the user name (from the system) and every
// word of `extra` replaced by "<path>", "<host>", "<user>", "<redacted>".
std::string ScrubPrivate(std::string_view text, const std::vector<std::string>& extra = {});

// The prompt as markdown: "# system\n\n...\n\n# user\n\n..." (prompt.md).
std::string PromptMarkdown(const ChatRequest& request);

}  // namespace sparseditto::llm
