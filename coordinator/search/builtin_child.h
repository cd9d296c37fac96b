// The child the built-in mutator makes for a coordinator's plan (TUNE or TUNE_CROSSOVER): the parent's
// (and mate's) declared tunables moved with the plan's own Rng seed, so a plan always makes the same
// child given the same known sources. BuiltinChild and DescribeExhaustedSpace are pure functions of
// their inputs (thread-safe when `known` is); BuiltinSearchMutator is them behind the search loop's
// Mutator interface (mutator.h), not thread-safe (its cache of space keys).
#pragma once

#include <map>
#include <set>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator/coordinator.h"
#include "coordinator/search/mutator.h"
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
absl::StatusOr<ExhaustedSpaceReport> DescribeExhaustedSpace(const v1::Candidate& parent,
                                                            const std::map<std::string, v1::Candidate>& candidates,
                                                            const DeviceFacts& device,
                                                            std::map<std::string, std::string>* keys);

// The built-in mutator as the loop's Mutator: it serves plans of kind builtin (and, as a MutatorSet's
// fallback, every plan no other mutator takes), made the children of operators TUNE and TUNE_CROSSOVER,
// is replayable and keeps no state. A refusal because the parent's space is exhausted comes with the
// space (Proposal::exhausted). Propose: Internal for a plan naming an unknown parent or mate,
// InvalidArgument when the parent's declarations do not parse while its space is described.
class BuiltinSearchMutator : public Mutator {
 public:
  // `options.device`: the run's device facts, as the search read them.
  explicit BuiltinSearchMutator(BuiltinMutatorOptions options) : options_(std::move(options)) {}

  bool Serves(v1::MutatorKind kind) const override { return kind == v1::MUTATOR_KIND_BUILTIN; }
  bool Replayable() const override { return true; }
  bool Made(const v1::Candidate& child) const override;
  absl::StatusOr<Proposal> Propose(const MutationPlan& plan, const MutationContext& context) override;

 private:
  BuiltinMutatorOptions options_;
  std::map<std::string, std::string> space_keys_;  // TunableSpaceKey by candidate id
};

}  // namespace sparseditto
