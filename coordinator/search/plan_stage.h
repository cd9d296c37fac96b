// The plan stage of a task's search (DESIGN.md §3.5, issue 24 item 1). Once the budget is spent and
// before the finalist stage, the loop (search_loop.h) picks a dispatch plan from the task's correct
// evaluated candidates (plan_choice.h) and, when its predicted fitness beats the best single
// candidate's, composes it into one source (mutators/plan/plan_composer.h) and evaluates it as a
// candidate like any other: stored, in flight while evaluated, its result committed and reported to the
// coordinator, so it enters the archive (a cell of its own: seed_name "plan") and the finalist order by
// its measured fitness. This file builds that candidate; the loop does the rest.
// Pure function; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator/search/plan_choice.h"
#include "eval_result.pb.h"
#include "task.pb.h"

namespace sparseditto {

inline constexpr char kPlanSeedName[] = "plan";
inline constexpr char kPlanMutatorName[] = "plan";

struct PlanProposal {
  // Source, source hash, parents (the variants, in the plan's order), operator PLAN, mutator and seed
  // name "plan", generation one past its parents', archs: the task's archs every variant builds for
  // (ArchBuildsFor: a variant for sm_90 builds for sm_90a; empty when no variant names an arch). No id,
  // island or creation time: the loop stamps them.
  v1::Candidate candidate;
  PlanChoice choice;
};

// The plan candidate of `task`'s search, or nullopt with `*why` saying why there is none: no plan
// needed or possible, a prediction not above `best_single_fitness`, variants that share no arch, or a
// variant the composer refuses (its reason). `results` are the task's evaluations (those of plans are
// ignored); `candidates` must hold every candidate they name (Internal otherwise: a harness fault).
absl::StatusOr<std::optional<PlanProposal>> ProposePlan(const v1::Task& task,
                                                        const std::map<std::string, v1::Candidate>& candidates,
                                                        const std::vector<v1::EvalResult>& results,
                                                        double best_single_fitness, std::string* why);

}  // namespace sparseditto
