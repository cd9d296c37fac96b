// The search loop's proposals (task_loop.h): plans asked of a mutator that is not replayable run in the
// proposal pool (proposal_pool.h), and every proposal, made there or on the loop's thread, is taken in
// here: charged to the budget, settled with its mutator, deduplicated and, when asked asynchronously,
// stored at once.
#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "coordinator/search/task_loop.h"
#include "fmt/format.h"

namespace sparseditto {

std::vector<std::string> TaskLoop::ParentsOf(const MutationPlan& plan) {
  std::vector<std::string> parents = {plan.parent_id};
  if (!plan.mate_id.empty()) parents.push_back(plan.mate_id);
  return parents;
}

int TaskLoop::ProposalsInFlight() const {
  return options_.proposals_in_flight > 0 ? options_.proposals_in_flight : std::max(options_.compile_ahead, 1);
}

absl::StatusOr<MutationPlan> TaskLoop::NextPlan() {
  if (ask_again_.empty()) return coordinator_->PlanMutation();
  MutationPlan plan = std::move(ask_again_.front());
  ask_again_.erase(ask_again_.begin());
  return plan;
}

Allowance TaskLoop::BudgetLeft() const {
  Allowance left;
  const v1::Budget& limits = task_.budget();
  if (limits.max_tokens() > 0) left.tokens = limits.max_tokens() - coordinator_->spent().tokens();
  if (limits.max_money_usd() > 0) left.usd = limits.max_money_usd() - coordinator_->spent().money_usd();
  return left;
}

void TaskLoop::Ask(const MutationPlan& plan, Mutator& mutator) {
  ContextSnapshot snapshot;
  std::vector<std::string> ids = ParentsOf(plan);
  ids.insert(ids.end(), plan.inspiration_ids.begin(), plan.inspiration_ids.end());
  for (const std::string& id : ids) {
    auto it = candidates_.find(id);
    if (it == candidates_.end()) continue;
    snapshot.candidates.emplace(id, it->second);
    absl::StatusOr<v1::EvalResult> r = records_.Evaluation(id);
    if (r.ok()) snapshot.evaluations.emplace(id, *std::move(r));
  }
  const Allowance left = BudgetLeft();
  const bool whole = ask_alone_;  // NextPlan gave the plan refused for its share: it now gets all
  const Allowance share = pool_->ShareOf(left, whole);
  const bool shared = (left.tokens && share.tokens < left.tokens) || (left.usd && share.usd < left.usd);
  if (whole) alone_step_ = plan.step;
  pool_->Launch(task_, plan, mutator, std::move(snapshot), share, shared);
}

absl::StatusOr<std::optional<v1::Candidate>> TaskLoop::TakeIn(const MutationPlan& plan, Mutator& mutator,
                                                              Proposal proposal, bool shared,
                                                              const std::vector<v1::Candidate>& queue,
                                                              const std::vector<v1::Candidate>& pending,
                                                              const std::string& evaluating) {
  const SteadyClock::time_point now = SteadyClock::now();
  coordinator_->AddCost({.wall_seconds = std::chrono::duration<double>(now - last_report_).count(),
                         .tokens = proposal.tokens,
                         .money_usd = proposal.cost_usd});
  last_report_ = now;
  if (ask_alone_ && plan.step == alone_step_) ask_alone_ = false;
  mutator.Settle(plan, proposal);
  if (proposal.exhausted.has_value()) {
    coordinator_->MarkSpaceExhausted(proposal.exhausted->space, proposal.exhausted->members,
                                     [this](v1::MutatorKind kind) { return mutators_->ServedElsewhere(kind); });
  }
  if (!proposal.child.has_value()) {
    if (proposal.over_budget != StopReason::kNone && shared) {
      // Refused for its share while others were in flight: asked again alone, with all that is left.
      ask_again_.insert(ask_again_.begin(), plan);
      ask_alone_ = true;
    } else {
      if (proposal.over_budget != StopReason::kNone) coordinator_->RefuseOverBudget(proposal.over_budget, proposal.why);
      Emit(MutationEvent(task_.name(), ParentsOf(plan), plan.mutator, nullptr, "failed", proposal.why));
      coordinator_->RecordFailedMutation();
    }
    // An answer that is not replayed (a model's) is lost unless its failure is stored now.
    if (!mutator.Replayable()) {
      const store::RunState state = !evaluating.empty() ? State(evaluating, Rest(queue, 0))
                                    : queue.empty()     ? State("")
                                                        : State(queue[0].id(), Rest(queue, 1));
      if (absl::Status s = records_.Write(state); !s.ok()) return s;
    }
    return std::nullopt;
  }
  v1::Candidate& child = *proposal.child;
  coordinator_->StampChild(plan, &child);
  absl::StatusOr<bool> is_new = RegisterOrReuse(child, pending, evaluating);
  if (!is_new.ok()) return is_new.status();
  if (!*is_new) {
    Emit(MutationEvent(task_.name(), ParentsOf(plan), plan.mutator, &child, "duplicate",
                       "the same source as a candidate evaluated before; its result is reused"));
    return std::nullopt;
  }
  return std::move(child);
}

v1::EvalResult TaskLoop::AwaitServing(const v1::EvaluationJob& job) {
  if (serving_.queue == nullptr || !pool_.has_value() || pool_->size() == 0) return pipeline_.Await(job);
  // The pipeline's Await may be called from any thread (evaluation_pipeline.h's implementations say
  // so); this thread takes the answers in meanwhile.
  std::future<v1::EvalResult> result = std::async(std::launch::async, [this, &job] { return pipeline_.Await(job); });
  while (result.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (!serving_.error.ok() || pool_->size() == 0) continue;
    const size_t before = serving_.queue->size();
    serving_.error = TakeAnswers(pool_->TakeEnded(), serving_.queue, serving_.evaluating);
    for (size_t i = before; i < serving_.queue->size(); ++i) serving_.arrived.push_back((*serving_.queue)[i].id());
  }
  return result.get();
}

absl::Status TaskLoop::TakeAnswers(std::vector<EndedCall> ended, std::vector<v1::Candidate>* queue,
                                   const std::string& evaluating) {
  for (EndedCall& call : ended) {
    if (!call.proposal.ok()) return call.proposal.status();
    absl::StatusOr<std::optional<v1::Candidate>> child =
        TakeIn(call.plan, *call.mutator, *std::move(call.proposal), call.shared, *queue, *queue, evaluating);
    if (!child.ok()) return child.status();
    if (!child->has_value()) continue;
    const v1::Candidate& stored = **child;
    candidates_[stored.id()] = stored;
    queue->push_back(stored);
    // The child alone, with the window and the plans still asked: the answer is stored as it comes.
    const store::RunState state =
        evaluating.empty() ? State((*queue)[0].id(), Rest(*queue, 1)) : State(evaluating, Rest(*queue, 0));
    if (absl::Status s = records_.CommitCandidates({stored}, state); !s.ok()) return s;
    Emit(MutationEvent(task_.name(), ParentsOf(call.plan), call.plan.mutator, &stored, "new", ""));
    // Compiled while it waits behind the others.
    if (std::max<int64_t>(BatchSize(), ProposalsInFlight()) > 1) pipeline_.Hint(task_, {stored});
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
