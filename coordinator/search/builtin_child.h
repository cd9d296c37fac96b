// The child the built-in mutator makes for a coordinator's plan (TUNE or TUNE_CROSSOVER): the parent's
// (and mate's) declared tunables moved with the plan's own Rng seed, so a plan always makes the same
// child given the same known sources. Pure function of its inputs; thread-safe when `known` is.
#pragma once

#include <map>
#include <set>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator/coordinator.h"
#include "mutators/builtin/builtin_mutator.h"

namespace sparseditto {

struct BuiltinOutcome {
  std::optional<v1::Candidate> child;  // nullopt: the mutator refused the plan
  // The refusal was the parent's tunable space being exhausted (every point known): the caller tells
  // the coordinator (Coordinator::MarkSpaceExhausted).
  bool exhausted = false;
  std::string why;  // the mutator's message when refused
};

// `known`: the coordinator's duplicate index (Coordinator::KnowsSource); the child is never a known
// source while the parent's space holds an unseen point. Internal when the plan names a parent or
// mate missing from `candidates`.
absl::StatusOr<BuiltinOutcome> BuiltinChild(const MutationPlan& plan, const std::map<std::string, v1::Candidate>& candidates,
                                            const BuiltinMutatorOptions& options, const KnownSourcePredicate& known = {});

// What the coordinator is told when the built-in mutator found `parent`'s tunable space exhausted
// (Coordinator::MarkSpaceExhausted): the space (TunableSpaceKey, seed, points) and the candidates of
// `candidates` in it. `keys` caches TunableSpaceKey by candidate id between calls (candidates whose
// declarations do not parse belong to no space). InvalidArgument when the parent's do not parse.
struct ExhaustedSpaceReport {
  coordinator::ExhaustedSpace space;
  std::set<std::string> members;
};
absl::StatusOr<ExhaustedSpaceReport> DescribeExhaustedSpace(const v1::Candidate& parent,
                                                            const std::map<std::string, v1::Candidate>& candidates,
                                                            const DeviceFacts& device,
                                                            std::map<std::string, std::string>* keys);

}  // namespace sparseditto
