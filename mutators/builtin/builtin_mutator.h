// The built-in mutator: no network, no model. It
//   - seeds a task: one candidate per seed of the library that applies to the task (SeedCandidates);
//   - mutates a parent's declared tunables (MutateTunables): 1..k tunables, each moved to another
//     allowed value, a neighbour in the declared list more often than a random jump;
//   - crosses the tunables of two parents of the same seed (CrossoverTunables), uniformly per tunable.
// The declarations in the source are the truth (kernel_abi/tunables.h): a parent's tunables are
// re-parsed from its source, never taken from Candidate.tunables.
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
// of different seeds or tasks; FailedPrecondition when there is nothing to change (no tunable with two
// or more allowed values; crossover parents that differ in fewer than two tunables, whose child would
// copy a parent).
// Thread-safety: free functions over values; thread-safe as long as each thread uses its own Rng.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "common/rng.h"
#include "kernels/seed_library.h"
#include "task.pb.h"

namespace sparseditto {

struct BuiltinMutatorOptions {
  std::string mutator_name = "builtin";  // Candidate.mutator; MutatorSpec.name of the task
  int max_tunables_changed = 2;          // k: a mutation changes 1..k tunables (uniform count), k >= 1
  double neighbour_probability = 0.75;   // chance a changed tunable moves to an adjacent allowed value
};

// One candidate per seed in `seeds` (in their order) for which SeedAppliesTo(seed, task).
// InvalidArgument naming the seed when its tunable declarations do not parse.
absl::StatusOr<std::vector<v1::Candidate>> SeedCandidates(const v1::Task& task,
                                                          const std::vector<SeedKernel>& seeds,
                                                          const BuiltinMutatorOptions& options = {});

// A child of `parent` (operator TUNE) with 1..k of its tunables changed; never equal to the parent.
absl::StatusOr<v1::Candidate> MutateTunables(const v1::Candidate& parent, Rng& rng,
                                             const BuiltinMutatorOptions& options = {});

// A child (operator TUNE_CROSSOVER) built on `a`'s source, taking each tunable on which `a` and `b`
// differ from either parent with probability 1/2, redrawn so that it equals neither parent. Tunables
// of `b` that `a` does not declare, or whose value `a` does not allow, are ignored.
absl::StatusOr<v1::Candidate> CrossoverTunables(const v1::Candidate& a, const v1::Candidate& b, Rng& rng,
                                                const BuiltinMutatorOptions& options = {});

}  // namespace sparseditto
