// Choosing parents, crossover mates and inspirations from the archive and an island.
//
// Parent: with probability exploration_ratio, exploration: uniform over the archive's cells (each cell's
// elite equally likely, however good); otherwise exploitation: over the island's members, weighted
//     weight = fitness / (1 + children)^alpha
// where children counts the mutations already planned from that candidate, so a parent that has been
// tried often yields to fresh ones. An empty island exploits the archive's elites instead.
// Mate (crossover): same weights over the island's members and the archive's elites of the parent's
// family (IslandMember.family: the declared family, else the seed), other than the parent itself.
// Inspirations (for LLM prompts): the top_k elites by fitness, then diverse_k further cells uniformly.
// `movable_only` keeps only candidates with a tunable the built-in mutator can change.
//
// Every function draws from the Rng passed in, in a fixed order (the exploration coin is drawn even
// when one pool is empty), and iterates pools in a fixed order, so a decision depends only on the
// generator state and the inputs.
// Thread-safety: pure functions; thread-safe with one Rng per thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/rng.h"
#include "coordinator.pb.h"
#include "coordinator/map_elites.h"

namespace sparseditto {

struct SelectionOptions {
  double exploration_ratio = 0.2;    // in [0, 1]; the rest is exploitation
  double child_penalty_alpha = 1.0;  // >= 0; 0: no penalty
  // In [0, 1]: the share of plans whose parent is the fastest candidate at one n (the per-n elites,
  // Coordinator), the n drawn with weight 1 / (its speed-up over the best baseline), so evaluations
  // go where the gap to the best baseline is widest. One kernel rarely wins every n (a 2:4 stream at
  // n = 16, dense at 128, wgmma.sp at 2048), and a plan picks the best per n; a parent drawn by the
  // geomean fitness alone would leave the n where it is weak unimproved. 0.25 leaves most plans to
  // the islands. Only used when the task has two or more n with an elite.
  double per_n_ratio = 0.25;
};

using ChildCounts = std::map<std::string, int64_t>;

// fitness / (1 + children)^alpha; 0 for a non-finite or negative fitness.
double PenalisedWeight(double fitness, int64_t children, double alpha);

struct ParentPick {
  coordinator::IslandMember member;
  bool explored = false;  // drawn uniformly among archive cells
};

// Nullopt when neither the archive nor the island holds an eligible candidate.
std::optional<ParentPick> SelectParent(const MapElitesArchive& archive,
                                       const std::vector<coordinator::IslandMember>& island,
                                       const ChildCounts& children, const SelectionOptions& options,
                                       bool movable_only, Rng& rng);

// Nullopt when no other candidate of the parent's family is eligible.
std::optional<coordinator::IslandMember> SelectMate(const MapElitesArchive& archive,
                                                    const std::vector<coordinator::IslandMember>& island,
                                                    const ChildCounts& children, const SelectionOptions& options,
                                                    const coordinator::IslandMember& parent, bool movable_only,
                                                    Rng& rng);

// Candidate ids, best first, then the diverse ones in draw order; never `exclude_id`, never twice.
std::vector<std::string> SelectInspirations(const MapElitesArchive& archive, std::string_view exclude_id,
                                            int top_k, int diverse_k, Rng& rng);

}  // namespace sparseditto
