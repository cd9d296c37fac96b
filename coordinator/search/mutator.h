// The one interface the search loop (search_loop.h) mutates through: the built-in mutator
// (BuiltinSearchMutator, builtin_child.h) and the LLM mutators (LlmSearchMutator, llm_search_mutator.h)
// implement it, and the loop holds them in a MutatorSet by the MutatorSpec kinds they serve, with no
// special case for either.
//
// The loop's side of the contract, per plan (Coordinator::PlanMutation):
//   - the plan goes to the first mutator of the set that Serves() its mutator kind and is Available();
//     none: to the set's fallback (the built-in mutator, which serves every kind);
//   - Propose(), given what the budget has left (MutationContext.tokens_left / usd_left), which a
//     mutator that spends reserves before it spends; the proposal's tokens and cost, with the wall time
//     since the last charge, are charged to the coordinator's budget; a proposal refused for the budget
//     (Proposal.over_budget) ends the search with that limit (Coordinator::RefuseOverBudget); no child: the coordinator records a failed mutation (and is told of
//     an exhausted tunable space when the proposal reports one); a child: stamped, registered, stored
//     (with its prompt and response, when it has them) and evaluated;
//   - RecordEvaluation() on the mutator that Made() a child, after its evaluation and before its commit;
//     RecordDuplicate() when the child repeats an earlier source;
//   - a mutator that is not Replayable() (its proposal for a plan is not a pure function of the plan and
//     the known sources: a model's answer) is asked asynchronously (proposal_pool.h): up to
//     SearchLoopOptions::proposals_in_flight of its calls run at once, each on a thread of its own, with
//     a snapshot of the plan's candidates as its context and a share of the budget left as its
//     tokens_left / usd_left, while the loop compiles and evaluates earlier children; each answer is
//     taken in by the loop's thread as it arrives (Settle, then as above) and stored at once, failures
//     and duplicates included. Its plans are drawn from the population as it stands when each is made
//     (answers still in flight are not in it). Plans asked and not answered are stored with every
//     RunState (in_flight_plans) and asked again by a resumed search;
//   - the set's state (that of its one mutator that KeepsState()) goes into every RunState the loop
//     writes (RunState.mutator_state) and is restored on resume.
// Errors: Propose returns an error only for a broken contract (a plan naming an unknown parent); a
// mutation that failed is a proposal without a child. RecordEvaluation: the store's errors while
// reading the parent's result. RestoreState: InvalidArgument for bytes that are not a state of it.
// Thread-safety: a Replayable() mutator need not be thread-safe: the loop calls it from one thread. One
// that is not Replayable() has Propose called from several threads at once while the loop's thread
// calls its other methods (Settle, RecordEvaluation, RecordDuplicate, Available, SaveState): Propose
// must be safe to call concurrently with itself and with those.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator/coordinator.h"
#include "eval_result.pb.h"
#include "mutators/builtin/tunable_space.h"
#include "task.pb.h"

namespace sparseditto {

// What a mutator may read of the search, valid for the duration of one call.
struct MutationContext {
  const v1::Task& task;
  // Every candidate of the task the loop knows (stored), by id: the plan's parent, mate and inspirations.
  const std::map<std::string, v1::Candidate>& candidates;
  // The coordinator's duplicate index (Coordinator::KnowsSource).
  KnownSourcePredicate known;
  // A candidate's stored evaluation; NotFound when it has none, the store's error otherwise.
  std::function<absl::StatusOr<v1::EvalResult>(const std::string& id)> evaluation;
  // What the task's budget has left for a mutation to spend (max_tokens / max_money_usd less what the
  // search spent); nullopt: no such limit. A mutator that spends reserves its worst case against these
  // before it spends (llm::MutationRequest.tokens_left), so the budget is never overrun.
  std::optional<int64_t> tokens_left;
  std::optional<double> usd_left;
};

// The tunable space of a plan's parent, all of whose points are known (Coordinator::MarkSpaceExhausted):
// the space and the candidates of the context in it.
struct ExhaustedSpaceReport {
  coordinator::ExhaustedSpace space;
  std::set<std::string> members;
};

struct Proposal {
  // The child, with parent_ids, operator, mutator, source_hash (and model, prompt and response for a
  // model's child) set; id and island are the loop's (Coordinator::StampChild). nullopt: the mutation
  // failed (`why`).
  std::optional<v1::Candidate> child;
  std::string why;
  // Set when the refusal was the parent's tunable space being exhausted.
  std::optional<ExhaustedSpaceReport> exhausted;
  std::string outcome;  // a model's outcome (llm::MutationOutcomeName); empty for the built-in mutator
  std::string model;    // the model asked; empty when none was
  int64_t tokens = 0;   // prompt and completion tokens of every request the mutation made
  double cost_usd = 0;
  // kTokens / kMoney: the mutation's next request was not made because its worst case would overrun
  // that limit of the task's budget (MutationContext.tokens_left / usd_left); the loop stops there, as
  // at a limit reached. kNone otherwise.
  StopReason over_budget = StopReason::kNone;
};

class Mutator {
 public:
  virtual ~Mutator() = default;

  // Whether plans of this MutatorSpec kind go to this mutator (while Available()).
  virtual bool Serves(v1::MutatorKind kind) const = 0;
  // False when it can take no work any more (every model disabled); its plans go to the fallback.
  virtual bool Available() const { return true; }
  // Whether the proposal for a plan is a pure function of the plan and the known sources, so that the
  // loop may plan several children before storing any, and draw a lost one again after a crash.
  virtual bool Replayable() const = 0;
  // Whether `child` (a stored candidate) is this mutator's: its evaluation and duplicates are told to it.
  virtual bool Made(const v1::Candidate& child) const = 0;

  // The child of `plan`. Blocks until it is made (or the mutation failed).
  virtual absl::StatusOr<Proposal> Propose(const MutationPlan& plan, const MutationContext& context) = 0;
  // The loop takes in `proposal`, the answer of Propose(plan), on its own thread, before it stores
  // anything of it. A mutator whose state (SaveState) records its proposals (an LLM's failed
  // mutations, rewards pending) records them here rather than in Propose, so that a state stored while
  // the proposal is still in flight holds nothing of it, and a plan asked again after a crash is not
  // recorded twice.
  virtual void Settle(const MutationPlan& plan, const Proposal& proposal) { (void)plan, (void)proposal; }
  // `child` (stamped, Made() by this mutator) was evaluated with `result`.
  virtual absl::Status RecordEvaluation(const v1::Candidate& child, const v1::EvalResult& result,
                                        const MutationContext& context) {
    (void)child, (void)result, (void)context;
    return absl::OkStatus();
  }
  // `child` repeated the source of `earlier_id` and is not evaluated.
  virtual void RecordDuplicate(const v1::Candidate& child, const std::string& earlier_id) {
    (void)child, (void)earlier_id;
  }

  // Whether it has state to keep across a crash (SaveState / RestoreState); at most one mutator of a
  // set does.
  virtual bool KeepsState() const { return false; }
  virtual std::string SaveState() const { return ""; }
  virtual absl::Status RestoreState(const std::string& state) {
    (void)state;
    return absl::OkStatus();
  }
};

// The mutators of one search: `others` (not owned; asked in order) before `fallback` (not owned), which
// serves every plan none of them takes. Neither is owned; both outlive the set.
class MutatorSet {
 public:
  // InvalidArgument when more than one of them KeepsState() (RunState holds one mutator state).
  static absl::StatusOr<MutatorSet> Create(Mutator* fallback, std::vector<Mutator*> others);

  // The mutator for a plan of `kind`.
  Mutator& For(v1::MutatorKind kind) const;
  // The mutator that made `candidate`; null for none (a seed, a plan, a child of a mutator not in the set).
  Mutator* MakerOf(const v1::Candidate& candidate) const;
  // True when every mutator is Replayable().
  bool Replayable() const;
  // True when the plans of `kind` go to a mutator other than the fallback now
  // (Coordinator::MarkSpaceExhausted's `served_elsewhere`).
  bool ServedElsewhere(v1::MutatorKind kind) const { return &For(kind) != fallback_; }

  // The state of the mutator that KeepsState(); "" when none does.
  std::string SaveState() const;
  // Restores it; `state` empty (a run stored without one) leaves it as it is.
  absl::Status RestoreState(const std::string& state) const;

 private:
  MutatorSet(Mutator* fallback, std::vector<Mutator*> others) : fallback_(fallback), others_(std::move(others)) {}
  std::vector<Mutator*> All() const;

  Mutator* fallback_;
  std::vector<Mutator*> others_;
};

}  // namespace sparseditto
