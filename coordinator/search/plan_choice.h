// Picking a dispatch plan from a finished search (DESIGN.md §3.5, issue 24 item 1): per n of the task the
// fastest correct candidate by its stored median time, a candidate that wins several n made one
// variant, and the plan's predicted fitness by the evaluator's formula (common/fitness.h) over the
// winners' times and their own baselines at each n.
//
// Ranges: with the task's n sorted, n_1 < ... < n_k, the winner at n_i serves (n_{i-1}, n_i] (from 1
// for n_1) and the winner at n_k everything above n_{k-1}, so every n >= 1 (the smoke shapes' 1 and 7
// among them) reaches a variant; neighbouring ranges of one candidate are merged.
// Ties at an n go to the candidate of higher fitness, then to the smaller id.
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval_result.pb.h"
#include "mutators/plan/plan_composer.h"

namespace sparseditto {

struct PlanVariantChoice {
  std::string candidate_id;
  std::vector<NRange> serves;
};

struct PlanChoice {
  std::vector<PlanVariantChoice> variants;          // at least two, ordered by their first range
  std::vector<v1::TimingStats> timings;             // per task n, ascending: the winner's timing there
  std::map<int64_t, v1::BaselineList> baselines;    // per task n: the winner's baselines there
  double predicted_fitness = 0;                     // SpeedupFitness(timings, baselines)
};

// The plan over `results` (the task's evaluations; those that are not correct, or lack a positive time
// or a baseline at an n, do not compete there). nullopt when no plan is needed (one candidate is the
// fastest at every n) or none can be made (an n that no correct candidate timed, or no n).
std::optional<PlanChoice> ChoosePlan(const std::vector<int64_t>& task_n, const std::vector<v1::EvalResult>& results);

// "t.000004 n 1-16, t.000009 n 17-1048576 (predicted fitness 1.234)".
std::string DescribePlan(const PlanChoice& plan);

}  // namespace sparseditto
