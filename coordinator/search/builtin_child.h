// The child the built-in mutator makes for a coordinator's plan (TUNE or TUNE_CROSSOVER): the parent's
// (and mate's) declared tunables moved with the plan's own Rng seed, so a plan always makes the same
// child. Pure function; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator/coordinator.h"
#include "mutators/builtin/builtin_mutator.h"

namespace sparseditto {

// The child, or nullopt when the mutator refused the plan (no tunable to move, parents of different
// seeds). Internal when the plan names a parent or mate missing from `candidates`.
absl::StatusOr<std::optional<v1::Candidate>> BuiltinChild(const MutationPlan& plan,
                                                           const std::map<std::string, v1::Candidate>& candidates,
                                                           const BuiltinMutatorOptions& options);

}  // namespace sparseditto
