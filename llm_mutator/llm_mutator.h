// The LLM mutator: MutationRequest -> MutationResult (mutation_request.h). It picks a model
// (model_chooser.h, unless the request names one), renders the prompt (prompt_builder.h), asks the
// model (http_clients.h / command_client.h, through the one retry layer of retry.h), parses the answer
// strictly (answer_parser.h) and returns the child or a typed failure with its reason, the tokens and
// cost spent, the model used, the prompt and the raw answer.
//
// What it does on each failure (the outcome is always returned, never thrown; Mutate never crashes
// on anything a server or a program sends):
//   429 / 503 / 529           retried with backoff (Retry-After honoured) up to the model's max_retries;
//                             then kModelFailed (chat_outcome kRateLimited / kOverloaded).
//   400 "context too long"    the prompt is shrunk (inspirations dropped, then the parent's logs trimmed,
//                             then dropped) and asked again; kModelFailed when even level 3 is too long.
//   a request whose worst case does not fit MutationRequest.tokens_left / usd_left: not sent, kOverBudget.
//   401 / 403 / unset key     the model is disabled for the life of this object (kModelDisabled with the
//                             server's reason, redacted); later requests for it return kModelDisabled at
//                             once and the chooser skips it.
//   other 4xx/5xx, time-out, truncated, malformed or empty answer, a command failing: kModelFailed.
//   an answer that does not parse or apply: kNoUsableCode / kDiffDidNotApply (message fit for
//   MutationRequest.previous_failure next time).
// Tokens and cost add up over every request the mutation made (retries and shrunken prompts too).
//
// Concurrency: each model has at most ModelOptions.concurrency requests in flight; Mutate blocks for a
// slot. Thread-safety: Mutate, RecordReward, the state calls and IsDisabled may be called from many
// threads at once; `mu_` guards the chooser, the slots and the disabled set.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "llm_mutator/chat_client.h"
#include "llm_mutator/http_transport.h"
#include "llm_mutator/model_chooser.h"
#include "llm_mutator/model_options.h"
#include "llm_mutator/mutation_request.h"
#include "llm_mutator/prompt_builder.h"
#include "llm_mutator/retry.h"

namespace sparseditto::llm {

struct LlmMutatorOptions {
  ChooserOptions chooser;  // weighted by ModelOptions.weight by default; seed 1
  // Backoff of the retry layer; max_retries is taken from each model's options.
  RetryOptions retry;
  Sleeper sleep = SleepSeconds;  // test seam: the pauses between retries
  uint64_t seed = 1;             // jitter draws: Rng(seed, request number)
};

// Makes the client of one model. The default (DefaultClientFactory) speaks the model's protocol over
// `transport` (openai, anthropic) or runs its command.
using ClientFactory = std::function<std::unique_ptr<ChatClient>(const ModelOptions&)>;
ClientFactory DefaultClientFactory(HttpTransport* transport);

class LlmMutator {
 public:
  // InvalidArgument: no models, duplicate names, a bad weight. With a null `factory` the mutator owns
  // a CurlTransport and uses DefaultClientFactory over it.
  static absl::StatusOr<std::unique_ptr<LlmMutator>> Create(std::vector<ModelOptions> models, PromptLibrary prompts,
                                                            LlmMutatorOptions options, ClientFactory factory = nullptr);
  // ModelOptionsFromSpec over every spec of kind openai, anthropic or command (others are skipped).
  static absl::StatusOr<std::vector<ModelOptions>> ModelsFromSpecs(const std::vector<v1::MutatorSpec>& specs);

  MutationResult Mutate(const MutationRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // Rewards the chooser (ImprovementReward of the child's evaluation against its parent's). NotFound
  // for an unknown model.
  absl::Status RecordReward(const std::string& model, double reward, double cost_usd) ABSL_LOCKS_EXCLUDED(mu_);
  std::string SaveChooserState() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status RestoreChooserState(const std::string& state) ABSL_LOCKS_EXCLUDED(mu_);
  bool IsDisabled(const std::string& model) const ABSL_LOCKS_EXCLUDED(mu_);
  // Disables `model` for the life of this object, as a 401 does (a resumed search restores the models
  // its run disabled). NotFound for an unknown model.
  absl::Status DisableModel(const std::string& model) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Model {
    ModelOptions options;
    std::unique_ptr<ChatClient> client;  // thread-safe
  };

  LlmMutator(std::vector<Model> models, PromptLibrary prompts, LlmMutatorOptions options, ModelChooser chooser,
             std::unique_ptr<HttpTransport> transport)
      : transport_(std::move(transport)), models_(std::move(models)), prompts_(std::move(prompts)),
        options_(std::move(options)), chooser_(std::move(chooser)), in_flight_(models_.size(), 0) {}

  // The model to use and its index, or a failed result.
  std::optional<size_t> PickModel(const MutationRequest& request, MutationResult* result) ABSL_LOCKS_EXCLUDED(mu_);
  // Asks the model, shrinking on "context too long". Fills tokens, cost, prompt, response.
  ChatResult Ask(const Model& model, const MutationRequest& request, MutationResult* result);
  void BuildChild(const MutationRequest& request, const Model& model, const std::string& answer,
                  MutationResult* result) const;

  const std::unique_ptr<HttpTransport> transport_;  // owned when Create got no factory; before models_
  const std::vector<Model> models_;
  const PromptLibrary prompts_;
  const LlmMutatorOptions options_;

  mutable absl::Mutex mu_;
  ModelChooser chooser_ ABSL_GUARDED_BY(mu_);
  std::vector<int> in_flight_ ABSL_GUARDED_BY(mu_);  // per model
  std::set<std::string> disabled_ ABSL_GUARDED_BY(mu_);
  uint64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sparseditto::llm
