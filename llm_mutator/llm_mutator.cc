#include "llm_mutator/llm_mutator.h"

#include "common/rng.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "kernel_abi/tunables.h"
#include "llm_mutator/answer_parser.h"
#include "llm_mutator/command_client.h"
#include "llm_mutator/http_clients.h"
#include "llm_mutator/provider_errors.h"
#include "mutators/builtin/source_hash.h"

namespace sparseditto::llm {

std::string_view MutationOutcomeName(MutationOutcome outcome) {
  switch (outcome) {
    case MutationOutcome::kOk: return "ok";
    case MutationOutcome::kModelFailed: return "model_failed";
    case MutationOutcome::kModelDisabled: return "model_disabled";
    case MutationOutcome::kDiffDidNotApply: return "diff_did_not_apply";
    case MutationOutcome::kNoUsableCode: return "no_usable_code";
    case MutationOutcome::kBadChild: return "bad_child";
    case MutationOutcome::kInvalidRequest: return "invalid_request";
    case MutationOutcome::kOverBudget: return "over_budget";
  }
  return "unknown";
}

namespace {

// Tokens a chat template may add around the messages (role markers, separators), beyond the prompt's
// bytes; generous, so the reservation stays an upper bound.
constexpr int64_t kChatFramingTokens = 64;

// Why the next request of `model` with `prompt` may not be sent under the request's limits, or "" when
// its worst case fits. A byte-level tokenizer never makes more tokens than bytes, so the prompt's bytes
// bound its tokens.
std::string OverBudget(const ModelOptions& model, const ChatRequest& prompt, const MutationRequest& request,
                       MutationResult* spent) {
  const int64_t prompt_tokens = static_cast<int64_t>(prompt.system.size() + prompt.user.size()) + kChatFramingTokens;
  const int64_t worst_tokens = prompt_tokens + model.max_tokens;
  const double worst_usd = CostUsd(model, prompt_tokens, model.max_tokens);
  const int64_t tokens_spent = spent->prompt_tokens + spent->completion_tokens;
  if (request.tokens_left && worst_tokens > *request.tokens_left - tokens_spent) {
    spent->over_limit = "tokens";
    return fmt::format("the request to {} was not sent: its worst case, {} tokens ({} of prompt, at most {} of "
                       "answer), exceeds the {} tokens left in the task's budget",
                       model.name, worst_tokens, prompt_tokens, model.max_tokens, *request.tokens_left - tokens_spent);
  }
  const double usd_spent = CostUsd(model, spent->prompt_tokens, spent->completion_tokens);
  if (request.usd_left && worst_usd > *request.usd_left - usd_spent) {
    spent->over_limit = "money";
    return fmt::format("the request to {} was not sent: its worst case, ${:.4f}, exceeds the ${:.4f} left in the "
                       "task's budget",
                       model.name, worst_usd, *request.usd_left - usd_spent);
  }
  return "";
}

struct SlotWait {
  const int* in_flight;
  int limit;
};
bool SlotIsFree(SlotWait* slot) { return *slot->in_flight < slot->limit; }

}  // namespace

ClientFactory DefaultClientFactory(HttpTransport* transport) {
  return [transport](const ModelOptions& m) -> std::unique_ptr<ChatClient> {
    switch (m.provider) {
      case Provider::kOpenAiCompatible:
      case Provider::kAnthropic: return std::make_unique<HttpChatClient>(m, transport);
      case Provider::kCommand: return std::make_unique<CommandClient>(m);
    }
    return nullptr;
  };
}

absl::StatusOr<std::unique_ptr<LlmMutator>> LlmMutator::Create(std::vector<ModelOptions> models, PromptLibrary prompts,
                                                               LlmMutatorOptions options, ClientFactory factory) {
  std::vector<ModelChooser::Arm> arms;
  for (const ModelOptions& m : models) arms.push_back({.name = m.name, .weight = m.weight});
  absl::StatusOr<ModelChooser> chooser = ModelChooser::Create(std::move(arms), options.chooser);
  if (!chooser.ok()) return chooser.status();
  std::unique_ptr<HttpTransport> transport;
  if (!factory) {
    transport = std::make_unique<CurlTransport>();
    factory = DefaultClientFactory(transport.get());
  }
  std::vector<Model> built;
  for (ModelOptions& m : models) {
    std::unique_ptr<ChatClient> client = factory(m);
    if (!client) return absl::InvalidArgumentError(fmt::format("{}: no client for this model", m.name));
    built.push_back({std::move(m), std::move(client)});
  }
  return std::unique_ptr<LlmMutator>(new LlmMutator(std::move(built), std::move(prompts), std::move(options),
                                                    std::move(*chooser), std::move(transport)));
}

absl::StatusOr<std::vector<ModelOptions>> LlmMutator::ModelsFromSpecs(const std::vector<v1::MutatorSpec>& specs) {
  std::vector<ModelOptions> models;
  for (const v1::MutatorSpec& spec : specs) {
    if (spec.kind() != v1::MUTATOR_KIND_OPENAI_COMPATIBLE && spec.kind() != v1::MUTATOR_KIND_ANTHROPIC &&
        spec.kind() != v1::MUTATOR_KIND_COMMAND) {
      continue;
    }
    absl::StatusOr<ModelOptions> m = ModelOptionsFromSpec(spec);
    if (!m.ok()) return m.status();
    models.push_back(std::move(*m));
  }
  return models;
}

std::optional<size_t> LlmMutator::PickModel(const MutationRequest& request, MutationResult* result) {
  absl::MutexLock lock(&mu_);
  std::string name = request.model;
  if (name.empty()) {
    absl::StatusOr<std::string> chosen = chooser_.Choose(disabled_);
    if (!chosen.ok()) {
      result->outcome = MutationOutcome::kModelDisabled;
      result->message = "every model of this mutator is disabled";
      return std::nullopt;
    }
    name = *chosen;
  }
  for (size_t i = 0; i < models_.size(); ++i) {
    if (models_[i].options.name != name) continue;
    result->model = name;
    if (disabled_.contains(name)) {
      result->outcome = MutationOutcome::kModelDisabled;
      result->message = fmt::format("model {} is disabled (an earlier request was refused)", name);
      return std::nullopt;
    }
    return i;
  }
  result->outcome = MutationOutcome::kInvalidRequest;
  result->message = fmt::format("no model named '{}'", name);
  return std::nullopt;
}

ChatResult LlmMutator::Ask(const Model& model, const MutationRequest& request, MutationResult* result) {
  RetryOptions retry = options_.retry;
  retry.max_retries = model.options.max_retries;
  uint64_t number = 0;
  {
    absl::MutexLock lock(&mu_);
    number = requests_++;
  }
  Rng rng(options_.seed ^ (0xd1b54a32d192ed03ULL * (number + 1)));
  ChatResult chat;
  std::string last_prompt;
  for (int level = 0; level <= kMaxShrinkLevel; ++level) {
    absl::StatusOr<ChatRequest> prompt = prompts_.BuildPrompt(request, level, model.options.privacy);
    if (!prompt.ok()) {
      chat.outcome = ChatOutcome::kBadRequest;
      chat.message = std::string(prompt.status().message());
      result->outcome = MutationOutcome::kInvalidRequest;
      return chat;
    }
    std::string markdown = PromptMarkdown(*prompt);
    if (level > 0 && markdown == last_prompt) continue;  // this level shrinks nothing more
    last_prompt = markdown;
    result->prompt = std::move(markdown);
    result->shrink_level = level;
    if (std::string why = OverBudget(model.options, *prompt, request, result); !why.empty()) {
      result->outcome = MutationOutcome::kOverBudget;
      result->message = std::move(why);
      break;  // the earlier levels' tokens are still charged below
    }
    chat = CallWithRetries(*model.client, *prompt, retry, rng, options_.sleep);
    result->attempts += chat.attempts;
    result->prompt_tokens += chat.prompt_tokens;
    result->completion_tokens += chat.completion_tokens;
    result->seconds += chat.seconds;
    result->response = chat.raw;
    if (chat.outcome != ChatOutcome::kContextTooLong) break;
  }
  result->cost_usd = CostUsd(model.options, result->prompt_tokens, result->completion_tokens);
  return chat;
}

void LlmMutator::BuildChild(const MutationRequest& request, const Model& model, const std::string& answer,
                            MutationResult* result) const {
  const v1::Candidate& parent = request.parents[0].candidate;
  absl::StatusOr<std::string> source = request.op == v1::MUTATION_OPERATOR_LLM_DIFF
                                           ? ApplyDiffAnswer(parent.source(), answer)
                                           : ExtractCudaBlock(answer);
  if (!source.ok()) {
    result->outcome = source.status().code() == absl::StatusCode::kFailedPrecondition
                          ? MutationOutcome::kDiffDidNotApply
                          : MutationOutcome::kNoUsableCode;
    result->message = std::string(source.status().message());
    return;
  }
  const std::string hash = SourceHash(*source);
  for (const EvaluatedCandidate& p : request.parents) {
    if (SourceHash(p.candidate.source()) == hash) {
      result->outcome = MutationOutcome::kNoUsableCode;
      result->message = "the child is a parent unchanged (only comments or white space differ)";
      return;
    }
  }
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(*source);
  if (!tunables.ok()) {
    result->outcome = MutationOutcome::kBadChild;
    result->message = fmt::format("the child's tunable declarations do not parse: {}", tunables.status().message());
    return;
  }
  v1::Candidate& child = result->child;
  child.set_task_name(request.task.name());
  child.set_source(std::move(*source));
  for (v1::Tunable& t : *tunables) *child.add_tunables() = std::move(t);
  for (const EvaluatedCandidate& p : request.parents) child.add_parent_ids(p.candidate.id());
  child.set_operator_(request.op);
  child.set_mutator(model.options.name);
  child.set_model(model.options.model.empty() ? model.options.name : model.options.model);
  child.set_generation(parent.generation() + 1);
  child.set_island(parent.island());
  child.set_seed_name(parent.seed_name());
  *child.mutable_archs() = parent.archs();
  child.set_source_hash(hash);
  result->outcome = MutationOutcome::kOk;
}

MutationResult LlmMutator::Mutate(const MutationRequest& request) {
  MutationResult result;
  if (request.parents.empty()) {
    result.outcome = MutationOutcome::kInvalidRequest;
    result.message = "no parent";
    return result;
  }
  const std::optional<size_t> index = PickModel(request, &result);
  if (!index) return result;
  const Model& model = models_[*index];
  {
    absl::MutexLock lock(&mu_);
    SlotWait slot{&in_flight_[*index], model.options.concurrency};
    mu_.Await(absl::Condition(&SlotIsFree, &slot));
    ++in_flight_[*index];
  }
  const ChatResult chat = Ask(model, request, &result);
  {
    absl::MutexLock lock(&mu_);
    --in_flight_[*index];
    if (chat.outcome == ChatOutcome::kAuthFailed) disabled_.insert(model.options.name);
  }
  result.chat_outcome = chat.outcome;
  if (result.outcome == MutationOutcome::kInvalidRequest) {
    result.message = chat.message;
    return result;
  }
  if (result.outcome == MutationOutcome::kOverBudget) return result;
  if (chat.outcome == ChatOutcome::kAuthFailed) {
    result.outcome = MutationOutcome::kModelDisabled;
    result.message = fmt::format("model {} disabled: {}", model.options.name, chat.message);
    return result;
  }
  if (chat.outcome != ChatOutcome::kOk) {
    result.outcome = MutationOutcome::kModelFailed;
    result.message = fmt::format("{}: {}: {}", model.options.name, ChatOutcomeName(chat.outcome), chat.message);
    return result;
  }
  BuildChild(request, model, chat.text, &result);
  return result;
}

absl::Status LlmMutator::RecordReward(const std::string& model, double reward, double cost_usd) {
  absl::MutexLock lock(&mu_);
  return chooser_.Record(model, reward, cost_usd);
}

std::string LlmMutator::SaveChooserState() const {
  absl::MutexLock lock(&mu_);
  return chooser_.SaveState();
}

absl::Status LlmMutator::RestoreChooserState(const std::string& state) {
  absl::MutexLock lock(&mu_);
  return chooser_.RestoreState(state);
}

bool LlmMutator::IsDisabled(const std::string& model) const {
  absl::MutexLock lock(&mu_);
  return disabled_.contains(model);
}

absl::Status LlmMutator::DisableModel(const std::string& model) {
  for (const Model& m : models_) {
    if (m.options.name != model) continue;
    absl::MutexLock lock(&mu_);
    disabled_.insert(model);
    return absl::OkStatus();
  }
  return absl::NotFoundError(fmt::format("no model named '{}'", model));
}

}  // namespace sparseditto::llm
