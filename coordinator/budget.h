// What a search has spent against its task's Budget (proto/task.proto), and whether it must stop.
//
// Limits: max_evaluations (0 reads as the loader's default, 200), max_wall_seconds, max_tokens and
// max_money_usd (0: no limit), stagnation_evaluations (stop after that many evaluations without a new
// global best; 0: never), and, from the coordinator's options, max_wasted_in_a_row: proposals in a row
// that brought nothing new (duplicates, mutations the mutator refused), the sign of an exhausted search
// space (0: never); and the coordinator's word that every tunable space the built-in mutator can search
// is exhausted (SetSpaceExhausted; mutators/builtin/tunable_space.h), which stops at once. Wall seconds are added by the caller (measured around its work), never read from
// a clock here, so a replay with the same inputs makes the same decisions.
// Thread-safety: none; owned by the coordinator.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "coordinator.pb.h"
#include "task.pb.h"

namespace sparseditto {

enum class StopReason { kNone, kEvaluations, kWallTime, kTokens, kMoney, kStagnation, kExhausted, kTarget };

// "none", "evaluations", "wall_time", "tokens", "money", "stagnation", "exhausted", "target_fitness".
std::string_view StopReasonName(StopReason reason);

struct Cost {
  double wall_seconds = 0;
  int64_t tokens = 0;
  double money_usd = 0;
};

class BudgetTracker {
 public:
  BudgetTracker(const v1::Budget& limits, int64_t max_wasted_in_a_row);

  void AddCost(const Cost& cost);
  // `best_fitness`: the best's fitness after this evaluation (for Budget.target_fitness).
  void RecordEvaluation(bool improved_best, double best_fitness = 0);
  void RecordNewCandidate();          // a proposal that was not a duplicate
  void RecordWasted(bool duplicate);  // a duplicate, or a mutation that produced nothing
  void SetSpaceExhausted() { spent_.set_space_exhausted(true); }
  // A mutation's next request was not made: its worst case would overrun `limit` (kTokens or kMoney;
  // other reasons are ignored). From then on Check() reports that limit, as if it were reached, and
  // Explain says so with `why`. Kept in Spent, so a resumed search stops there too.
  void RefuseOverBudget(StopReason limit, const std::string& why);

  // The first limit reached, in the order of StopReason (evaluations first).
  StopReason Check() const;
  // "max_evaluations 200 reached", "no improvement in 40 evaluations", ...; "" for kNone.
  std::string Explain(StopReason reason) const;

  const coordinator::Spent& spent() const { return spent_; }
  // The limits in force (max_evaluations with its default applied).
  const v1::Budget& limits() const { return limits_; }
  void Load(const coordinator::Spent& spent) { spent_ = spent; }

 private:
  v1::Budget limits_;
  int64_t max_wasted_in_a_row_;
  coordinator::Spent spent_;
};

}  // namespace sparseditto
