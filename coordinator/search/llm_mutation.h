// The seam between the search loop (search_loop.h) and LLM mutators: what the loop calls for a plan of
// an LLM kind (MutatorSpec kinds openai, anthropic, command). The implementation over llm::LlmMutator is
// llm_search_mutator.h; tests may supply their own.
//
// The loop's side of the contract, per plan whose mutator kind is an LLM kind (IsLlmKind):
//   - when Available() is false (every model disabled) the loop carries the plan out with the built-in
//     mutator, as it does for every plan when SearchLoopOptions::llm is null;
//   - otherwise Propose(); the loop charges tokens, cost and the call's wall time to the coordinator's
//     budget; no child: the coordinator records a failed mutation and the loop stores the state (nothing
//     is evaluated); a child: stamped, registered, stored (with its prompt and response) and evaluated;
//   - RecordEvaluation() after the child's evaluation, before its commit; RecordDuplicate() when the
//     child repeats an earlier source;
//   - SaveState() goes into every RunState the loop writes (RunState.mutator_state); RestoreState() on
//     resume. So the chooser's rewards, the disabled models and the failures fed back survive a crash.
// Errors: Propose and Record* report nothing as an error: every failure is a typed outcome in the
// proposal (and in the state). RestoreState: InvalidArgument for bytes that are not a state of it.
// Thread-safety: implementations need not be thread-safe; the loop calls from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "candidate.pb.h"
#include "coordinator/coordinator.h"
#include "eval_result.pb.h"
#include "llm_mutator/mutation_request.h"
#include "task.pb.h"

namespace sparseditto {

// True for the MutatorSpec kinds served by LLM mutators: openai, anthropic, command.
bool IsLlmKind(v1::MutatorKind kind);
// True for LLM_DIFF, LLM_REWRITE, LLM_CROSSOVER.
bool IsLlmOperator(v1::MutationOperator op);
// True when one of the task's mutators is of an LLM kind.
bool HasLlmMutators(const v1::Task& task);

// A stored candidate with its stored evaluation (empty when not evaluated), or nullopt when unknown.
using CandidateLookup = std::function<std::optional<llm::EvaluatedCandidate>(const std::string& id)>;

struct LlmProposal {
  // The child, with parent_ids, operator, mutator, model, source_hash, prompt and response set; id and
  // island are the loop's (Coordinator::StampChild). nullopt: the mutation failed.
  std::optional<v1::Candidate> child;
  std::string outcome;  // llm::MutationOutcomeName
  std::string message;  // why, when there is no child
  std::string model;    // the model asked; empty when none was
  int64_t tokens = 0;   // prompt and completion tokens of every request the mutation made
  double cost_usd = 0;
};

class LlmMutation {
 public:
  virtual ~LlmMutation() = default;

  // False when no model can take work any more (all disabled).
  virtual bool Available() const = 0;
  // Asks a model for the child of `plan` (an LLM operator). Blocks until the answer (or the failure).
  virtual LlmProposal Propose(const v1::Task& task, const MutationPlan& plan, const CandidateLookup& lookup) = 0;
  // `child` (a stamped LLM child) was evaluated: `parent` is its first parent's stored result (empty
  // when there is none), `result` its own.
  virtual void RecordEvaluation(const v1::Candidate& child, const v1::EvalResult& parent,
                                const v1::EvalResult& result) = 0;
  // `child` repeated the source of `earlier_id` and is not evaluated.
  virtual void RecordDuplicate(const v1::Candidate& child, const std::string& earlier_id) = 0;

  virtual std::string SaveState() const = 0;
  virtual absl::Status RestoreState(const std::string& state) = 0;
};

}  // namespace sparseditto
