#include "cli/llm_setup.h"

#include "cli/install_paths.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "task/mutator_file.h"

namespace sparseditto {

LlmFactory CliLlmFactory(ModelChoice choice, llm::ClientFactory model_clients) {
  return [choice, model_clients](const v1::Task& task) -> absl::StatusOr<std::unique_ptr<LlmMutation>> {
    LlmSearchMutatorOptions options;
    options.prompts_dir = PromptsDir();
    options.abi_header = AbiIncludeDir() + "/sparseditto_kernel.h";
    options.model_choice = choice;
    options.client_factory = model_clients;
    if (!task.arch().empty()) options.gpu.arch = task.arch(0);
    absl::StatusOr<std::unique_ptr<LlmSearchMutator>> made = LlmSearchMutator::Create(task, std::move(options));
    if (!made.ok()) return made.status();
    return std::unique_ptr<LlmMutation>(*std::move(made));
  };
}

absl::StatusOr<ModelChoice> ParseModelChoice(const std::string& name) {
  if (name == "plan") return ModelChoice::kPlan;
  if (name == "bandit") return ModelChoice::kBandit;
  return absl::InvalidArgumentError(fmt::format("--model-choice {}: expected plan or bandit", name));
}

absl::Status ReplaceMutators(const std::string& path, std::vector<v1::Task>* tasks) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<v1::MutatorSpec>> mutators = LoadMutatorsFile(path);
  if (!mutators.ok()) return mutators.status();
  for (v1::Task& task : *tasks) {
    task.clear_mutators();
    for (const v1::MutatorSpec& m : *mutators) *task.add_mutators() = m;
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
