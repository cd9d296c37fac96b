// The built-in mutator: no network, no model. It
//   - seeds a task: one candidate per seed of the library that applies to the task (SeedCandidates);
//   - mutates a parent's declared tunables (MutateTunables): 1..k tunables, each moved to another
//     allowed value, a neighbour in the declared list more often than a random jump;
//   - crosses the tunables of two parents of the same seed, or of two seeds of one family (a
//     `// sparseditto:family NAME` line in both sources), uniformly per tunable (CrossoverTunables);
//   - never proposes a point the search knows (the `known` predicate: the coordinator's duplicate
//     index) while an unseen one remains: a drawn child that is known is replaced by the nearest unseen
//     point of the parent's tunable space (tunable_space.h), and a space with none left is reported as
//     exhausted (ResourceExhausted).
// The declarations in the source are the truth (kernel_abi/tunables.h): a parent's tunables are
// re-parsed from its source, never taken from Candidate.tunables; device-relative declarations are
// resolved against options.device (facts read from the task's device by the evaluator; none: such a
// tunable stays at its current value).
//
// What a returned candidate carries: task_name, source, tunables, parent_ids, operator, mutator
// (options.mutator_name), generation, island (seeds: 0; children: the first parent's), seed_name,
// source_hash (mutators/builtin/source_hash.h) and archs. What it does not: id and created_unix_ms;
// the caller (the coordinator's search loop) assigns both, so that the mutator stays a pure function of
// its inputs and the generator.
//
// Determinism: every random draw goes through the `Rng&` passed in, in a fixed order, so the same
// inputs and the same generator state give the same child on every machine.
// Errors: InvalidArgument when a source's tunable declarations are malformed, or crossover parents are
// of different seeds (and families) or tasks; FailedPrecondition when there is nothing to change (no
// tunable with two or more allowed values; crossover parents that differ in fewer than two tunables,
// whose child would copy a parent; every crossover child known; no unseen point found within the
// probe limit of a large space); ResourceExhausted (MutateTunables) when every point of the parent's
// tunable space is known.
// Thread-safety: free functions over values; thread-safe as long as each thread uses its own Rng.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "common/rng.h"
#include "kernel_abi/tunable_values.h"
#include "kernels/seed_library.h"
#include "mutators/builtin/tunable_space.h"
#include "task.pb.h"

namespace sparseditto {

struct BuiltinMutatorOptions {
  std::string mutator_name = "builtin";  // Candidate.mutator; MutatorSpec.name of the task
  int max_tunables_changed = 2;          // k: a mutation changes 1..k tunables (uniform count), k >= 1
  double neighbour_probability = 0.75;   // chance a changed tunable moves to an adjacent allowed value
  DeviceFacts device;                    // the task's device, for device-relative declarations
  int64_t max_probes = kDefaultMaxProbes;  // points probed for an unseen one (tunable_space.h)
};

// One candidate per seed in `seeds` (in their order) for which SeedAppliesTo(seed, task).
// InvalidArgument naming the seed when its tunable declarations do not parse.
absl::StatusOr<std::vector<v1::Candidate>> SeedCandidates(const v1::Task& task,
                                                          const std::vector<SeedKernel>& seeds,
                                                          const BuiltinMutatorOptions& options = {});

// A child of `parent` (operator TUNE) with 1..k of its tunables changed; never equal to the parent, and
// never a source `known` answers true for while the parent's space holds an unseen point. An empty
// `known` knows nothing.
absl::StatusOr<v1::Candidate> MutateTunables(const v1::Candidate& parent, Rng& rng,
                                             const BuiltinMutatorOptions& options = {},
                                             const KnownSourcePredicate& known = {});

// A child (operator TUNE_CROSSOVER) built on `a`'s source, taking each tunable on which `a` and `b`
// differ from either parent with probability 1/2, redrawn so that it equals neither parent. Tunables
// of `b` that `a` does not declare, or whose value `a` does not allow, are ignored (for parents of two
// seeds of one family: the tunables that line up are those of one name whose value `a` allows). When
// the drawn child is known, the other mixes are tried in a fixed order from a drawn start; none left:
// FailedPrecondition.
absl::StatusOr<v1::Candidate> CrossoverTunables(const v1::Candidate& a, const v1::Candidate& b, Rng& rng,
                                                const BuiltinMutatorOptions& options = {},
                                                const KnownSourcePredicate& known = {});
// (CrossoverFamily, kernel_abi/tunables.h, says which parents may be crossed.)

}  // namespace sparseditto
