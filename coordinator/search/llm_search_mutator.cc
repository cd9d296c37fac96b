#include "coordinator/search/llm_search_mutator.h"

#include <algorithm>
#include <cctype>

#include "analyzer/pattern_analyzer.h"
#include "common/eval_outcome.h"
#include "common/status_format.h"
#include "common/text_tail.h"
#include "common/untrusted_text.h"
#include "fmt/format.h"
#include "task/task_matrix.h"

namespace sparseditto {

bool IsLlmKind(v1::MutatorKind kind) {
  return kind == v1::MUTATOR_KIND_OPENAI_COMPATIBLE || kind == v1::MUTATOR_KIND_ANTHROPIC ||
         kind == v1::MUTATOR_KIND_COMMAND;
}

bool IsLlmOperator(v1::MutationOperator op) {
  return op == v1::MUTATION_OPERATOR_LLM_DIFF || op == v1::MUTATION_OPERATOR_LLM_REWRITE ||
         op == v1::MUTATION_OPERATOR_LLM_CROSSOVER;
}

bool HasLlmMutators(const v1::Task& task) {
  return std::any_of(task.mutators().begin(), task.mutators().end(),
                     [](const v1::MutatorSpec& m) { return IsLlmKind(m.kind()); });
}

absl::StatusOr<coordinator::LlmSearchState> ParseLlmSearchState(const std::string& bytes) {
  coordinator::LlmSearchState state;
  if (!state.ParseFromString(bytes) || state.format_version() != 1) {
    return absl::InvalidArgumentError("the stored LLM mutator state does not parse (format version 1)");
  }
  return state;
}

namespace {

constexpr size_t kMaxMessageBytes = 2048;
constexpr size_t kMaxLogBytes = 1200;

// FAILURE_CATEGORY_COMPILE -> "compile".
std::string CategoryWord(v1::FailureCategory failure) {
  std::string name = v1::FailureCategory_Name(failure);
  if (name.rfind("FAILURE_CATEGORY_", 0) == 0) name = name.substr(std::string("FAILURE_CATEGORY_").size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// Why an evaluated child failed, for its parent's next prompt.
std::string EvaluationFailure(const v1::EvalResult& result) {
  std::string why = fmt::format("the last child made from this kernel was evaluated and failed ({})",
                                CategoryWord(result.failure()));
  // Candidate text: cleaned (common/untrusted_text.h) before it goes into a prompt.
  if (!result.failure_detail().empty()) why += fmt::format(": {}", CleanUntrustedText(result.failure_detail()));
  if (result.failure() == v1::FAILURE_CATEGORY_COMPILE && !result.compile_log().empty()) {
    why += fmt::format("\ncompile log (end):\n{}", TextTail(CleanUntrustedText(result.compile_log()), kMaxLogBytes));
  }
  return why;
}

bool IsCodeFailure(llm::MutationOutcome outcome) {
  return outcome == llm::MutationOutcome::kDiffDidNotApply || outcome == llm::MutationOutcome::kNoUsableCode ||
         outcome == llm::MutationOutcome::kBadChild;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LlmSearchMutator>> LlmSearchMutator::Create(const v1::Task& task,
                                                                           LlmSearchMutatorOptions options) {
  absl::StatusOr<std::vector<llm::ModelOptions>> models =
      llm::LlmMutator::ModelsFromSpecs({task.mutators().begin(), task.mutators().end()});
  if (!models.ok()) return models.status();
  if (models->empty()) {
    return absl::InvalidArgumentError(fmt::format("task {}: no mutator of kind openai, anthropic or command",
                                                  task.name()));
  }
  absl::StatusOr<llm::PromptLibrary> prompts = llm::PromptLibrary::Load(options.prompts_dir, options.abi_header);
  if (!prompts.ok()) return prompts.status();
  std::vector<std::string> names;
  for (const llm::ModelOptions& m : *models) names.push_back(m.name);
  llm::LlmMutatorOptions mutator_options = options.mutator;
  mutator_options.chooser.policy =
      options.model_choice == ModelChoice::kBandit ? llm::ChoicePolicy::kCostAwareUcb : llm::ChoicePolicy::kWeighted;
  mutator_options.chooser.seed = task.seed();
  absl::StatusOr<std::unique_ptr<llm::LlmMutator>> mutator = llm::LlmMutator::Create(
      *std::move(models), *std::move(prompts), std::move(mutator_options), options.client_factory);
  if (!mutator.ok()) return mutator.status();
  auto made = std::unique_ptr<LlmSearchMutator>(
      new LlmSearchMutator(*std::move(mutator), std::move(names), std::move(options)));
  made->state_.set_format_version(1);
  if (made->options_.matrix_features_json.empty() && made->options_.analyze_task_matrix) {
    if (absl::StatusOr<CsrMatrix> matrix = MaterializeTaskMatrix(task); matrix.ok()) {
      made->options_.matrix_features_json = FeaturesToJson(AnalyzePattern(*matrix)).dump(2);
    }
  }
  return made;
}

bool LlmSearchMutator::Available() const {
  return std::any_of(models_.begin(), models_.end(), [&](const std::string& m) { return !mutator_->IsDisabled(m); });
}

absl::StatusOr<Proposal> LlmSearchMutator::Propose(const MutationPlan& plan, const MutationContext& context) {
  // A stored candidate with its stored evaluation (empty when not evaluated), or nullopt when unknown.
  auto lookup = [&](const std::string& id) -> std::optional<llm::EvaluatedCandidate> {
    auto it = context.candidates.find(id);
    if (it == context.candidates.end()) return std::nullopt;
    llm::EvaluatedCandidate c{.candidate = it->second, .result = {}};
    if (absl::StatusOr<v1::EvalResult> r = context.evaluation(id); r.ok()) c.result = *std::move(r);
    return c;
  };
  llm::MutationRequest request;
  request.task = context.task;
  request.op = plan.op;
  for (const std::string& id : {plan.parent_id, plan.mate_id}) {
    if (id.empty()) continue;
    if (std::optional<llm::EvaluatedCandidate> c = lookup(id); c.has_value()) request.parents.push_back(*std::move(c));
  }
  for (const std::string& id : plan.inspiration_ids) {
    if (id == plan.parent_id || id == plan.mate_id) continue;
    if (std::optional<llm::EvaluatedCandidate> c = lookup(id); c.has_value()) {
      request.inspirations.push_back(*std::move(c));
    }
  }
  if (options_.model_choice == ModelChoice::kPlan && !mutator_->IsDisabled(plan.mutator) &&
      std::find(models_.begin(), models_.end(), plan.mutator) != models_.end()) {
    request.model = plan.mutator;  // otherwise the chooser picks among the enabled models
  }
  {
    absl::MutexLock lock(&mu_);
    request.previous_failure = ParentFailure(plan.parent_id);
  }
  request.gpu = options_.gpu;
  request.matrix_features_json = options_.matrix_features_json;
  request.tokens_left = context.tokens_left;
  request.usd_left = context.usd_left;

  const llm::MutationResult r = mutator_->Mutate(request);
  Proposal proposal;
  proposal.outcome = std::string(llm::MutationOutcomeName(r.outcome));
  proposal.model = r.model;
  proposal.tokens = r.prompt_tokens + r.completion_tokens;
  proposal.cost_usd = r.cost_usd;
  Staged staged{.outcome = r.outcome, .chat_outcome = std::string(llm::ChatOutcomeName(r.chat_outcome))};
  if (r.outcome == llm::MutationOutcome::kOk) {
    v1::Candidate child = r.child;
    child.set_prompt(r.prompt);
    child.set_response(r.response);
    proposal.child = std::move(child);
  } else {
    proposal.why = r.message;
    if (r.outcome == llm::MutationOutcome::kOverBudget) {
      proposal.over_budget = r.over_limit == "money" ? StopReason::kMoney : StopReason::kTokens;
    }
  }
  absl::MutexLock lock(&mu_);
  staged_[plan.step] = std::move(staged);
  return proposal;
}

void LlmSearchMutator::Settle(const MutationPlan& plan, const Proposal& proposal) {
  absl::MutexLock lock(&mu_);
  auto it = staged_.find(plan.step);
  if (it == staged_.end()) return;  // not a proposal of this mutator
  const Staged staged = std::move(it->second);
  staged_.erase(it);
  if (proposal.child.has_value()) {
    coordinator::PendingReward pending;
    pending.set_source_hash(proposal.child->source_hash());
    pending.set_cost_usd(proposal.cost_usd);
    auto* list = state_.mutable_pending();
    const auto index = std::lower_bound(list->begin(), list->end(), pending.source_hash(),
                                        [](const auto& p, const std::string& h) { return p.source_hash() < h; }) -
                       list->begin();
    *list->Add() = std::move(pending);
    std::rotate(list->begin() + index, list->end() - 1, list->end());
    return;
  }
  coordinator::FailedMutation* failed = state_.add_failed();
  failed->set_step(plan.step);
  failed->set_parent_id(plan.parent_id);
  failed->set_mate_id(plan.mate_id);
  failed->set_mutator(plan.mutator);
  failed->set_model(proposal.model);
  failed->set_outcome(proposal.outcome);
  failed->set_chat_outcome(staged.chat_outcome);
  failed->set_message(proposal.why.substr(0, kMaxMessageBytes));
  failed->set_tokens(proposal.tokens);
  failed->set_cost_usd(proposal.cost_usd);
  if (!proposal.model.empty() && staged.outcome != llm::MutationOutcome::kModelDisabled &&
      staged.outcome != llm::MutationOutcome::kInvalidRequest && staged.outcome != llm::MutationOutcome::kOverBudget) {
    (void)mutator_->RecordReward(proposal.model, 0, proposal.cost_usd);  // the model is known: it answered
  }
  if (IsCodeFailure(staged.outcome)) SetParentFailure(plan.parent_id, proposal.why);
}

absl::Status LlmSearchMutator::RecordEvaluation(const v1::Candidate& child, const v1::EvalResult& result,
                                                const MutationContext& context) {
  v1::EvalResult parent;
  if (!child.parent_ids().empty()) {
    absl::StatusOr<v1::EvalResult> stored = context.evaluation(child.parent_ids(0));
    if (stored.ok()) {
      parent = *std::move(stored);
    } else if (!absl::IsNotFound(stored.status())) {
      return stored.status();
    }
  }
  absl::MutexLock lock(&mu_);
  const double cost = TakePendingCost(child.source_hash());
  // NotFound only for a child of a model this task no longer names: nothing to reward.
  (void)mutator_->RecordReward(child.mutator(), llm::ImprovementReward(parent, result), cost);
  if (child.parent_ids().empty()) return absl::OkStatus();
  SetParentFailure(child.parent_ids(0), IsCorrect(result) ? "" : EvaluationFailure(result));
  return absl::OkStatus();
}

void LlmSearchMutator::RecordDuplicate(const v1::Candidate& child, const std::string& earlier_id) {
  (void)earlier_id;
  absl::MutexLock lock(&mu_);
  (void)mutator_->RecordReward(child.mutator(), 0, TakePendingCost(child.source_hash()));
}

coordinator::LlmSearchState LlmSearchMutator::State() const {
  absl::MutexLock lock(&mu_);
  coordinator::LlmSearchState state = state_;
  state.set_chooser_state(mutator_->SaveChooserState());
  for (const std::string& m : models_) {
    if (mutator_->IsDisabled(m)) state.add_disabled_models(m);
  }
  std::sort(state.mutable_disabled_models()->begin(), state.mutable_disabled_models()->end());
  return state;
}

std::string LlmSearchMutator::SaveState() const { return State().SerializeAsString(); }

absl::Status LlmSearchMutator::RestoreState(const std::string& bytes) {
  absl::StatusOr<coordinator::LlmSearchState> state = ParseLlmSearchState(bytes);
  if (!state.ok()) return state.status();
  if (absl::Status s = mutator_->RestoreChooserState(state->chooser_state()); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format("the stored model choice does not fit the task's models: {}",
                                                  s.message()));
  }
  for (const std::string& m : state->disabled_models()) {
    if (absl::Status s = mutator_->DisableModel(m); !s.ok()) return absl::InvalidArgumentError(s.message());
  }
  state->clear_chooser_state();
  state->clear_disabled_models();
  absl::MutexLock lock(&mu_);
  state_ = *std::move(state);
  return absl::OkStatus();
}

void LlmSearchMutator::SetParentFailure(const std::string& parent_id, const std::string& message) {
  auto* list = state_.mutable_last_failures();
  auto at = std::lower_bound(list->begin(), list->end(), parent_id,
                             [](const coordinator::ParentFailure& f, const std::string& id) { return f.parent_id() < id; });
  const bool found = at != list->end() && at->parent_id() == parent_id;
  if (message.empty()) {
    if (found) list->erase(at);
    return;
  }
  if (found) {
    at->set_message(message.substr(0, kMaxMessageBytes));
    return;
  }
  const int index = static_cast<int>(at - list->begin());
  coordinator::ParentFailure* added = list->Add();
  added->set_parent_id(parent_id);
  added->set_message(message.substr(0, kMaxMessageBytes));
  std::rotate(list->begin() + index, list->end() - 1, list->end());
}

std::string LlmSearchMutator::ParentFailure(const std::string& parent_id) const {
  for (const coordinator::ParentFailure& f : state_.last_failures()) {
    if (f.parent_id() == parent_id) return f.message();
  }
  return "";
}

double LlmSearchMutator::TakePendingCost(const std::string& source_hash) {
  auto* list = state_.mutable_pending();
  for (auto it = list->begin(); it != list->end(); ++it) {
    if (it->source_hash() != source_hash) continue;
    const double cost = it->cost_usd();
    list->erase(it);
    return cost;
  }
  return 0;
}

}  // namespace sparseditto
