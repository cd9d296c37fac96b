#include "coordinator/budget.h"

#include <algorithm>

#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr int64_t kDefaultMaxEvaluations = 200;  // task/task_loader.h's default

}  // namespace

std::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "none";
    case StopReason::kEvaluations: return "evaluations";
    case StopReason::kWallTime: return "wall_time";
    case StopReason::kTokens: return "tokens";
    case StopReason::kMoney: return "money";
    case StopReason::kStagnation: return "stagnation";
    case StopReason::kExhausted: return "exhausted";
    case StopReason::kTarget: return "target_fitness";
  }
  return "unknown";
}

BudgetTracker::BudgetTracker(const v1::Budget& limits, int64_t max_wasted_in_a_row)
    : limits_(limits), max_wasted_in_a_row_(max_wasted_in_a_row) {
  if (limits_.max_evaluations() <= 0) limits_.set_max_evaluations(kDefaultMaxEvaluations);
}

void BudgetTracker::AddCost(const Cost& cost) {
  spent_.set_wall_seconds(spent_.wall_seconds() + cost.wall_seconds);
  spent_.set_tokens(spent_.tokens() + cost.tokens);
  spent_.set_money_usd(spent_.money_usd() + cost.money_usd);
}

void BudgetTracker::RecordEvaluation(bool improved_best, double best_fitness) {
  spent_.set_evaluations(spent_.evaluations() + 1);
  spent_.set_best_fitness(std::max(spent_.best_fitness(), best_fitness));
  spent_.set_evaluations_since_improvement(improved_best ? 0 : spent_.evaluations_since_improvement() + 1);
}

void BudgetTracker::RefuseOverBudget(StopReason limit, const std::string& why) {
  if (limit != StopReason::kTokens && limit != StopReason::kMoney) return;
  spent_.set_over_budget(std::string(StopReasonName(limit)));
  spent_.set_over_budget_why(why);
}

void BudgetTracker::RecordNewCandidate() { spent_.set_wasted_in_a_row(0); }

void BudgetTracker::RecordWasted(bool duplicate) {
  if (duplicate) spent_.set_duplicates(spent_.duplicates() + 1);
  spent_.set_wasted_in_a_row(spent_.wasted_in_a_row() + 1);
}

StopReason BudgetTracker::Check() const {
  // The goal met ends the search whatever budget is left.
  if (limits_.target_fitness() > 0 && spent_.best_fitness() >= limits_.target_fitness()) return StopReason::kTarget;
  if (spent_.evaluations() >= limits_.max_evaluations()) return StopReason::kEvaluations;
  if (limits_.max_wall_seconds() > 0 && spent_.wall_seconds() >= limits_.max_wall_seconds()) {
    return StopReason::kWallTime;
  }
  if (limits_.max_tokens() > 0 && spent_.tokens() >= limits_.max_tokens()) return StopReason::kTokens;
  if (spent_.over_budget() == StopReasonName(StopReason::kTokens)) return StopReason::kTokens;
  if (limits_.max_money_usd() > 0 && spent_.money_usd() >= limits_.max_money_usd()) return StopReason::kMoney;
  if (spent_.over_budget() == StopReasonName(StopReason::kMoney)) return StopReason::kMoney;
  if (limits_.stagnation_evaluations() > 0 &&
      spent_.evaluations_since_improvement() >= limits_.stagnation_evaluations()) {
    return StopReason::kStagnation;
  }
  if (spent_.space_exhausted()) return StopReason::kExhausted;
  if (max_wasted_in_a_row_ > 0 && spent_.wasted_in_a_row() >= max_wasted_in_a_row_) return StopReason::kExhausted;
  return StopReason::kNone;
}

std::string BudgetTracker::Explain(StopReason reason) const {
  switch (reason) {
    case StopReason::kNone: return "";
    case StopReason::kEvaluations:
      return fmt::format("max_evaluations {} reached", limits_.max_evaluations());
    case StopReason::kWallTime:
      return fmt::format("max_wall_seconds {} reached ({:.1f} s spent)", limits_.max_wall_seconds(),
                         spent_.wall_seconds());
    case StopReason::kTokens:
      if (spent_.tokens() < limits_.max_tokens() && !spent_.over_budget_why().empty()) {
        return fmt::format("max_tokens {}: {} ({} spent)", limits_.max_tokens(), spent_.over_budget_why(), spent_.tokens());
      }
      return fmt::format("max_tokens {} reached ({} spent)", limits_.max_tokens(), spent_.tokens());
    case StopReason::kMoney:
      if (spent_.money_usd() < limits_.max_money_usd() && !spent_.over_budget_why().empty()) {
        return fmt::format("max_money_usd {}: {} ({:.2f} spent)", limits_.max_money_usd(), spent_.over_budget_why(),
                           spent_.money_usd());
      }
      return fmt::format("max_money_usd {} reached ({:.2f} spent)", limits_.max_money_usd(), spent_.money_usd());
    case StopReason::kStagnation:
      return fmt::format("no improvement of the best in {} evaluations (stagnation_evaluations)",
                         spent_.evaluations_since_improvement());
    case StopReason::kTarget:
      return fmt::format("target_fitness {} reached (best {:.3f})", limits_.target_fitness(), spent_.best_fitness());
    case StopReason::kExhausted:
      if (spent_.space_exhausted()) {
        return "every tunable space the built-in mutator can search is exhausted (each point proposed once)";
      }
      return fmt::format("{} proposals in a row brought no new candidate (duplicates or refused mutations)",
                         spent_.wasted_in_a_row());
  }
  return "";
}

}  // namespace sparseditto
