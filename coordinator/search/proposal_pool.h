// The proposals of mutators that are not Replayable() (mutator.h: a model's answer), asked
// asynchronously: each call runs Mutator::Propose on a thread of its own, so that the search loop
// (task_loop.h) goes on compiling and evaluating earlier children while a model thinks, and several
// models' calls overlap. The loop launches calls, takes the ones that ended (in the order they ended)
// and stores each answer as it takes it.
//
// What a call may read: a snapshot the loop made when it launched the call (ContextSnapshot): the
// plan's candidates (parent, mate, inspirations) and their stored evaluations as of then, so the call
// never reads the loop's live maps. Its MutationContext::known answers false for every source (the
// loop finds duplicates when the answer arrives) and its candidates map holds the snapshot's only.
//
// The budget: a call is given an Allowance, its share of what the task's token and money budget has
// left less what the calls in flight were given (ShareOf), which it passes to the mutator as
// MutationContext.tokens_left / usd_left: the mutator reserves its worst case against that share, so
// the calls in flight together never spend more than was left when they were launched (what the loop
// charged since only lowers what later calls are given). A call that was refused for its share
// (Proposal.over_budget) while its share was less than the whole is asked again by the loop once no
// other call is in flight (EndedCall::shared).
//
// Ownership: the mutators are borrowed and outlive the pool. The destructor waits for the calls in
// flight to end (a model's time-out bounds that); their answers are dropped.
// Thread-safety: Launch, ShareOf, TakeEnded, AwaitEnded and size are for one thread (the loop's); the
// calls' threads touch only their own call and `mu_`. The mutators must be safe to call from several
// threads at once (LlmSearchMutator is: llm_search_mutator.h).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator.pb.h"
#include "coordinator/search/mutator.h"

namespace sparseditto {

// What a call reads of the search, copied when it is launched.
struct ContextSnapshot {
  std::map<std::string, v1::Candidate> candidates;    // by id: the plan's parent, mate and inspirations
  std::map<std::string, v1::EvalResult> evaluations;  // by id: the stored evaluations of those
};

// A share of the task's budget; nullopt: no such limit.
struct Allowance {
  std::optional<int64_t> tokens;
  std::optional<double> usd;
};

struct EndedCall {
  MutationPlan plan;
  Mutator* mutator = nullptr;
  absl::StatusOr<Proposal> proposal;
  // The call was given less than the whole of what was left then (others were in flight, or a share
  // was kept for the free slots).
  bool shared = false;
};

class ProposalPool {
 public:
  // At most `capacity` calls in flight (at least 1).
  explicit ProposalPool(int capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  ~ProposalPool();
  ProposalPool(const ProposalPool&) = delete;
  ProposalPool& operator=(const ProposalPool&) = delete;

  int capacity() const { return capacity_; }
  // Calls launched and not yet taken (ended or not).
  int size() const { return static_cast<int>(calls_.size()); }
  bool full() const { return size() >= capacity_; }
  // The plans of the calls launched and not taken, in the order launched.
  std::vector<MutationPlan> Plans() const;

  // The share of `left` (what the budget has left, the answers taken so far charged) a call launched
  // now gets: `left` less the allowances of the calls not taken, divided by the free slots
  // (capacity - size()). With `whole`, all of that instead (the call is asked again alone).
  Allowance ShareOf(const Allowance& left, bool whole = false) const;
  // The allowances of the calls not taken, summed (what Context() must not hand out again).
  Allowance Reserved() const;

  // Starts mutator.Propose(plan, a context over `task` and `snapshot` with `allowance`) on a new
  // thread. REQUIRES: !full(); `task` outlives the call. `shared`: see EndedCall.
  void Launch(const v1::Task& task, const MutationPlan& plan, Mutator& mutator, ContextSnapshot snapshot,
              Allowance allowance, bool shared);

  // The calls that ended since the last take, in the order they ended; empty when none (never blocks).
  std::vector<EndedCall> TakeEnded() ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until a call ended, then TakeEnded(). REQUIRES: size() > 0.
  std::vector<EndedCall> AwaitEnded() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Call {
    uint64_t number = 0;  // launch order
    MutationPlan plan;
    Allowance allowance;
    std::thread thread;
  };

  const int capacity_;
  uint64_t launched_ = 0;
  std::list<Call> calls_;  // the loop's thread only

  absl::Mutex mu_;
  std::vector<std::pair<uint64_t, EndedCall>> ended_ ABSL_GUARDED_BY(mu_);  // by call number
};

// MutationPlan <-> its stored form (RunState.in_flight_plans). PlanFromRecord: InvalidArgument for
// bytes that do not parse.
std::string PlanRecord(const MutationPlan& plan);
absl::StatusOr<MutationPlan> PlanFromRecord(const std::string& bytes);

}  // namespace sparseditto
