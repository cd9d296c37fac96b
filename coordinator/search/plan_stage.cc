#include "coordinator/search/plan_stage.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "kernels/seed_library.h"
#include "mutators/builtin/source_hash.h"
#include "mutators/plan/plan_composer.h"

namespace sparseditto {

absl::StatusOr<std::optional<PlanProposal>> ProposePlan(const v1::Task& task,
                                                        const std::map<std::string, v1::Candidate>& candidates,
                                                        const std::vector<v1::EvalResult>& results,
                                                        double best_single_fitness, std::string* why) {
  std::vector<v1::EvalResult> singles;
  for (const v1::EvalResult& r : results) {
    auto it = candidates.find(r.candidate_id());
    if (it == candidates.end()) {
      return absl::InternalError(fmt::format("task {}: the evaluated candidate {} is not loaded", task.name(),
                                             r.candidate_id()));
    }
    if (it->second.operator_() != v1::MUTATION_OPERATOR_PLAN) singles.push_back(r);
  }
  std::optional<PlanChoice> choice =
      ChoosePlan(std::vector<int64_t>(task.n().begin(), task.n().end()), singles);
  if (!choice.has_value()) {
    *why = "no plan: one candidate is the fastest at every n, or an n has no correct timed candidate";
    return std::nullopt;
  }
  if (choice->predicted_fitness <= best_single_fitness) {
    *why = fmt::format("no plan: {} does not beat the best single candidate ({:.3f})", DescribePlan(*choice),
                       best_single_fitness);
    return std::nullopt;
  }
  PlanProposal proposal;
  v1::Candidate& plan = proposal.candidate;
  std::vector<PlanVariant> variants;
  std::vector<std::vector<std::string>> variant_archs;  // of the variants that name archs
  int32_t generation = 0;
  for (const PlanVariantChoice& v : choice->variants) {
    const v1::Candidate& parent = candidates.at(v.candidate_id);
    variants.push_back({.name = parent.id(), .seed_name = parent.seed_name(), .source = parent.source(),
                        .serves = v.serves});
    plan.add_parent_ids(parent.id());
    generation = std::max(generation, parent.generation() + 1);
    if (!parent.archs().empty()) variant_archs.emplace_back(parent.archs().begin(), parent.archs().end());
  }
  // The plan builds for an arch when every variant does, by the seeds' rule (a variant for sm_90 builds
  // for sm_90a): the task's archs where it has them, else the archs the variants name.
  std::set<std::string> targets(task.arch().begin(), task.arch().end());
  if (targets.empty()) {
    for (const std::vector<std::string>& own : variant_archs) targets.insert(own.begin(), own.end());
  }
  std::erase_if(targets, [&](const std::string& target) {
    return std::any_of(variant_archs.begin(), variant_archs.end(),
                       [&](const std::vector<std::string>& own) { return !ArchBuildsFor(own, target); });
  });
  const bool all_archs = variant_archs.empty();  // no variant names an arch: the plan names none either
  if (!all_archs && targets.empty()) {
    *why = fmt::format("no plan: the variants of {} share no arch", DescribePlan(*choice));
    return std::nullopt;
  }
  absl::StatusOr<std::string> source = ComposePlanSource(variants);
  if (!source.ok()) {
    *why = fmt::format("no plan: {} not composed: {}", DescribePlan(*choice), std::string(source.status().message()));
    return std::nullopt;
  }
  plan.set_task_name(task.name());
  plan.set_source(*source);
  plan.set_source_hash(SourceHash(*source));
  plan.set_operator_(v1::MUTATION_OPERATOR_PLAN);
  plan.set_mutator(kPlanMutatorName);
  plan.set_seed_name(kPlanSeedName);
  plan.set_generation(generation);
  if (!all_archs) {
    for (const std::string& a : targets) plan.add_archs(a);
  }
  *why = DescribePlan(*choice);
  proposal.choice = *std::move(choice);
  return proposal;
}

}  // namespace sparseditto
