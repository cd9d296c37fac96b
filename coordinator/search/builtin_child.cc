#include "coordinator/search/builtin_child.h"

#include "common/rng.h"
#include "fmt/format.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {

absl::StatusOr<BuiltinOutcome> BuiltinChild(const MutationPlan& plan, const std::map<std::string, v1::Candidate>& candidates,
                                            const BuiltinMutatorOptions& options, const KnownSourcePredicate& known) {
  auto parent = candidates.find(plan.parent_id);
  if (parent == candidates.end()) return absl::InternalError(fmt::format("plan names unknown parent {}", plan.parent_id));
  Rng rng(plan.mutator_seed);
  absl::StatusOr<v1::Candidate> child;
  if (plan.op == v1::MUTATION_OPERATOR_TUNE_CROSSOVER) {
    auto mate = candidates.find(plan.mate_id);
    if (mate == candidates.end()) return absl::InternalError(fmt::format("plan names unknown mate {}", plan.mate_id));
    child = CrossoverTunables(parent->second, mate->second, rng, options, known);
  } else {
    child = MutateTunables(parent->second, rng, options, known);
  }
  BuiltinOutcome out;
  if (child.ok()) {
    out.child = *std::move(child);
  } else {
    out.exhausted = absl::IsResourceExhausted(child.status());
    out.why = std::string(child.status().message());
  }
  return out;
}

absl::StatusOr<ExhaustedSpaceReport> DescribeExhaustedSpace(const v1::Candidate& parent,
                                                            const std::map<std::string, v1::Candidate>& candidates,
                                                            const DeviceFacts& device,
                                                            std::map<std::string, std::string>* keys) {
  auto key_of = [&](const v1::Candidate& c) -> absl::StatusOr<std::string> {
    if (auto it = keys->find(c.id()); it != keys->end()) return it->second;
    absl::StatusOr<std::string> key = TunableSpaceKey(c.source(), device);
    if (key.ok()) (*keys)[c.id()] = *key;
    return key;
  };
  absl::StatusOr<std::string> key = key_of(parent);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(parent.source(), device);
  if (!tunables.ok()) return tunables.status();
  ExhaustedSpaceReport report;
  report.space.set_space_key(*key);
  report.space.set_seed_name(parent.seed_name());
  report.space.set_points(TunableSpaceSize(*tunables));
  for (const auto& [id, c] : candidates) {
    absl::StatusOr<std::string> k = key_of(c);
    if (k.ok() && *k == *key) report.members.insert(id);
  }
  return report;
}

bool BuiltinSearchMutator::Made(const v1::Candidate& child) const {
  return child.operator_() == v1::MUTATION_OPERATOR_TUNE || child.operator_() == v1::MUTATION_OPERATOR_TUNE_CROSSOVER;
}

absl::StatusOr<Proposal> BuiltinSearchMutator::Propose(const MutationPlan& plan, const MutationContext& context) {
  absl::StatusOr<BuiltinOutcome> built = BuiltinChild(plan, context.candidates, options_, context.known);
  if (!built.ok()) return built.status();
  Proposal proposal;
  proposal.child = std::move(built->child);
  proposal.why = std::move(built->why);
  if (built->exhausted) {
    absl::StatusOr<ExhaustedSpaceReport> report =
        DescribeExhaustedSpace(context.candidates.at(plan.parent_id), context.candidates, options_.device, &space_keys_);
    if (!report.ok()) return report.status();
    proposal.exhausted = *std::move(report);
  }
  return proposal;
}

}  // namespace sparseditto
