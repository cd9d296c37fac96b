#include "coordinator/search/proposal_pool.h"

#include <algorithm>
#include <utility>

namespace sparseditto {

ProposalPool::~ProposalPool() {
  for (Call& call : calls_) {
    if (call.thread.joinable()) call.thread.join();
  }
}

std::vector<MutationPlan> ProposalPool::Plans() const {
  std::vector<MutationPlan> plans;
  for (const Call& call : calls_) plans.push_back(call.plan);
  return plans;
}

Allowance ProposalPool::Reserved() const {
  Allowance sum;
  for (const Call& call : calls_) {
    if (call.allowance.tokens) sum.tokens = sum.tokens.value_or(0) + *call.allowance.tokens;
    if (call.allowance.usd) sum.usd = sum.usd.value_or(0) + *call.allowance.usd;
  }
  return sum;
}

Allowance ProposalPool::ShareOf(const Allowance& left, bool whole) const {
  const Allowance reserved = Reserved();
  const int64_t parts = whole ? 1 : std::max(capacity_ - size(), 1);
  Allowance share;
  if (left.tokens) share.tokens = std::max<int64_t>(*left.tokens - reserved.tokens.value_or(0), 0) / parts;
  if (left.usd) share.usd = std::max(*left.usd - reserved.usd.value_or(0), 0.0) / static_cast<double>(parts);
  return share;
}

void ProposalPool::Launch(const v1::Task& task, const MutationPlan& plan, Mutator& mutator, ContextSnapshot snapshot,
                          Allowance allowance, bool shared) {
  Call& call = calls_.emplace_back();
  call.number = launched_++;
  call.plan = plan;
  call.allowance = allowance;
  call.thread = std::thread([this, &task, plan, &mutator, snapshot = std::move(snapshot), allowance, shared,
                             number = call.number] {
    MutationContext context{
        .task = task,
        .candidates = snapshot.candidates,
        .known = [](const std::string&) { return false; },
        .evaluation = [&snapshot](const std::string& id) -> absl::StatusOr<v1::EvalResult> {
          auto it = snapshot.evaluations.find(id);
          if (it == snapshot.evaluations.end()) return absl::NotFoundError("no stored evaluation of " + id);
          return it->second;
        },
        .tokens_left = allowance.tokens,
        .usd_left = allowance.usd};
    EndedCall ended{.plan = plan, .mutator = &mutator, .proposal = mutator.Propose(plan, context), .shared = shared};
    absl::MutexLock lock(&mu_);
    ended_.emplace_back(number, std::move(ended));
  });
}

std::vector<EndedCall> ProposalPool::TakeEnded() {
  std::vector<std::pair<uint64_t, EndedCall>> taken;
  {
    absl::MutexLock lock(&mu_);
    taken.swap(ended_);
  }
  std::vector<EndedCall> out;
  for (auto& [number, call] : taken) {
    auto it = std::find_if(calls_.begin(), calls_.end(), [n = number](const Call& c) { return c.number == n; });
    if (it != calls_.end()) {
      it->thread.join();  // it has ended: only its last statements are left
      calls_.erase(it);
    }
    out.push_back(std::move(call));
  }
  return out;
}

std::vector<EndedCall> ProposalPool::AwaitEnded() {
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](std::vector<std::pair<uint64_t, EndedCall>>* ended) { return !ended->empty(); }, &ended_));
  }
  return TakeEnded();
}

std::string PlanRecord(const MutationPlan& plan) {
  coordinator::AskedPlan record;
  record.set_step(plan.step);
  record.set_island(plan.island);
  record.set_mutator(plan.mutator);
  record.set_mutator_kind(plan.mutator_kind);
  record.set_op(plan.op);
  record.set_parent_id(plan.parent_id);
  record.set_mate_id(plan.mate_id);
  for (const std::string& id : plan.inspiration_ids) record.add_inspiration_ids(id);
  record.set_explored(plan.explored);
  record.set_mutator_seed(plan.mutator_seed);
  return record.SerializeAsString();
}

absl::StatusOr<MutationPlan> PlanFromRecord(const std::string& bytes) {
  coordinator::AskedPlan record;
  if (!record.ParseFromString(bytes) || record.parent_id().empty() ||
      !v1::MutatorKind_IsValid(record.mutator_kind()) || !v1::MutationOperator_IsValid(record.op())) {
    return absl::InvalidArgumentError("a stored plan in flight (RunState.in_flight_plans) does not parse");
  }
  MutationPlan plan;
  plan.step = record.step();
  plan.island = record.island();
  plan.mutator = record.mutator();
  plan.mutator_kind = static_cast<v1::MutatorKind>(record.mutator_kind());
  plan.op = static_cast<v1::MutationOperator>(record.op());
  plan.parent_id = record.parent_id();
  plan.mate_id = record.mate_id();
  plan.inspiration_ids.assign(record.inspiration_ids().begin(), record.inspiration_ids().end());
  plan.explored = record.explored();
  plan.mutator_seed = record.mutator_seed();
  return plan;
}

}  // namespace sparseditto
