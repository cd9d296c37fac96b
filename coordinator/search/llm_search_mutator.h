// The LLM mutators as the search loop's Mutator (mutator.h) over llm::LlmMutator: the task's LLM models
// (its `mutators:` of kinds openai, anthropic, command) asked with the prompts of configs/prompts. It
// serves the LLM kinds while a model is enabled (Available), made the children of the LLM operators, is
// not replayable (a model's answer is not drawn again) and keeps its state (below).
//
// Which model: with ModelChoice::kPlan (the default) the plan's mutator names it (the coordinator drew
// it by the mutators' weights); a disabled model's plans go to the mutator's weighted choice among the
// models still enabled. With ModelChoice::kBandit the cost-aware UCB bandit (llm_mutator/model_chooser.h)
// picks among the LLM models for every LLM plan; the coordinator still decides LLM or built-in.
//
// What it keeps (coordinator.proto LlmSearchState, saved into every RunState the loop writes):
//   - the chooser's state, rewarded with ImprovementReward(parent, child) and the mutation's cost once
//     the child is evaluated (0 for a failed mutation or a duplicate);
//   - the disabled models (401/403, or no key): they stay disabled for the run, resumed or not;
//   - per parent, why its last LLM child failed (the answer did not apply or parse, or the child did
//     not compile or was wrong), sent as MutationRequest.previous_failure with its next LLM mutation
//     and forgotten when a child of that parent is correct;
//   - every failed mutation (FailedMutation: step, parent, model, outcome, message, tokens, cost).
// The prompt and answer of a failed mutation are not kept (only its message).
//
// Errors: Create: InvalidArgument (no LLM model in the task, a bad model spec), NotFound / Unavailable
// (prompt files).
// Thread-safety: Propose may be called from several threads at once (the loop asks it asynchronously:
// proposal_pool.h), concurrently with the other methods: the model calls go through llm::LlmMutator,
// which is thread-safe (a model's ModelOptions.concurrency bounds its requests in flight), and `mu_`
// guards this object's state. Propose records nothing in the state: it stages what it learned by the
// plan's step, and Settle (the loop's thread, when it takes the answer in) records it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator.pb.h"
#include "coordinator/search/llm_mutation.h"
#include "llm_mutator/llm_mutator.h"

namespace sparseditto {

enum class ModelChoice { kPlan, kBandit };

struct LlmSearchMutatorOptions {
  std::string prompts_dir;  // system.txt and user.txt (configs/prompts); required
  std::string abi_header;   // kernel_abi/sparseditto_kernel.h, shown to the model; required
  ModelChoice model_choice = ModelChoice::kPlan;
  // Retry backoff, the pause between retries (a test seam) and the jitter seed. The chooser's policy
  // and seed are set from model_choice and the task's seed.
  llm::LlmMutatorOptions mutator;
  // Clients of the models; null: the real ones over libcurl (llm::DefaultClientFactory).
  llm::ClientFactory client_factory;
  llm::GpuInfo gpu;                  // shown in the prompt; empty fields are left out
  // The analyzer's features of the task's matrix. Empty and analyze_task_matrix: Create materialises
  // the task's matrix and measures them (analyzer/pattern_analyzer.h); a matrix that cannot be
  // materialised leaves them out of the prompt (the evaluator reports that error).
  std::string matrix_features_json;
  bool analyze_task_matrix = true;
};

class LlmSearchMutator : public Mutator {
 public:
  static absl::StatusOr<std::unique_ptr<LlmSearchMutator>> Create(const v1::Task& task,
                                                                  LlmSearchMutatorOptions options);

  bool Serves(v1::MutatorKind kind) const override { return IsLlmKind(kind); }
  bool Available() const override;
  bool Replayable() const override { return false; }
  bool Made(const v1::Candidate& child) const override { return IsLlmOperator(child.operator_()); }
  // Never an error: a failed mutation is a proposal without a child (outcome, message in `why`).
  absl::StatusOr<Proposal> Propose(const MutationPlan& plan, const MutationContext& context) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Records the proposal staged for `plan`: a failed mutation (and its parent's failure, the model's
  // zero reward) or the child's pending reward.
  void Settle(const MutationPlan& plan, const Proposal& proposal) override ABSL_LOCKS_EXCLUDED(mu_);
  // Rewards the child's model with ImprovementReward(its first parent's stored result, `result`).
  absl::Status RecordEvaluation(const v1::Candidate& child, const v1::EvalResult& result,
                                const MutationContext& context) override;
  void RecordDuplicate(const v1::Candidate& child, const std::string& earlier_id) override;
  bool KeepsState() const override { return true; }
  std::string SaveState() const override;
  absl::Status RestoreState(const std::string& state) override;

  // The state as SaveState() writes it.
  coordinator::LlmSearchState State() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  LlmSearchMutator(std::unique_ptr<llm::LlmMutator> mutator, std::vector<std::string> models,
                   LlmSearchMutatorOptions options)
      : mutator_(std::move(mutator)), models_(std::move(models)), options_(std::move(options)) {}

  // What Propose learned that Settle records.
  struct Staged {
    llm::MutationOutcome outcome = llm::MutationOutcome::kOk;
    std::string chat_outcome;
  };

  void SetParentFailure(const std::string& parent_id, const std::string& message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string ParentFailure(const std::string& parent_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the pending reward's cost of `source_hash` (0 when none is pending).
  double TakePendingCost(const std::string& source_hash) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<llm::LlmMutator> mutator_;
  std::vector<std::string> models_;  // the LLM models' names, in the task's order
  LlmSearchMutatorOptions options_;
  mutable absl::Mutex mu_;
  // All but chooser_state and disabled_models (kept by mutator_, which is thread-safe itself).
  coordinator::LlmSearchState state_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Staged> staged_ ABSL_GUARDED_BY(mu_);  // by plan step: Propose's, until Settle
};

// InvalidArgument when `bytes` is not a serialised LlmSearchState.
absl::StatusOr<coordinator::LlmSearchState> ParseLlmSearchState(const std::string& bytes);

}  // namespace sparseditto
