#include "coordinator/search/builtin_child.h"

#include "common/rng.h"
#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<std::optional<v1::Candidate>> BuiltinChild(const MutationPlan& plan,
                                                           const std::map<std::string, v1::Candidate>& candidates,
                                                           const BuiltinMutatorOptions& options) {
  auto parent = candidates.find(plan.parent_id);
  if (parent == candidates.end()) return absl::InternalError(fmt::format("plan names unknown parent {}", plan.parent_id));
  Rng rng(plan.mutator_seed);
  absl::StatusOr<v1::Candidate> child;
  if (plan.op == v1::MUTATION_OPERATOR_TUNE_CROSSOVER) {
    auto mate = candidates.find(plan.mate_id);
    if (mate == candidates.end()) return absl::InternalError(fmt::format("plan names unknown mate {}", plan.mate_id));
    child = CrossoverTunables(parent->second, mate->second, rng, options);
  } else {
    child = MutateTunables(parent->second, rng, options);
  }
  if (!child.ok()) return std::nullopt;
  return *std::move(child);
}

}  // namespace sparseditto
