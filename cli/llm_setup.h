// The LLM mutators of the command line's searches (`search`, `bench-mutators`): prompts from
// PromptsDir(), the kernel ABI header from AbiIncludeDir(), the real clients over libcurl (or the
// command kind's program), the task's first arch shown to the model. Thread-safe (pure functions).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/search/llm_search_mutator.h"
#include "task.pb.h"

namespace sparseditto {

using LlmFactory = std::function<absl::StatusOr<std::unique_ptr<LlmMutation>>(const v1::Task&)>;

// Makes a task's LlmSearchMutator with `choice` (--model-choice), asking its models through
// `model_clients` (null: the real clients, from this process).
LlmFactory CliLlmFactory(ModelChoice choice, llm::ClientFactory model_clients = nullptr);

// "plan" -> kPlan, "bandit" -> kBandit; InvalidArgument otherwise.
absl::StatusOr<ModelChoice> ParseModelChoice(const std::string& name);

// Every task's mutators replaced by those of the mutator file at `path` (task/mutator_file.h); `tasks`
// unchanged when `path` is empty. The file's errors (naming file, line and field).
absl::Status ReplaceMutators(const std::string& path, std::vector<v1::Task>* tasks);

}  // namespace sparseditto
