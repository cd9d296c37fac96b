// The island model: N populations that evolve apart and exchange their best every few generations.
//
// Each island holds up to `capacity` correct candidates (id, fitness, seed, movable tunables), best
// first, ties in arrival order; a newcomer that would rank below a full island's worst is turned away,
// and the worst drops out when a better one arrives. Migration is a ring: the top `fraction` of island
// i (at least one member of a non-empty island) is copied to island (i + 1) mod N, all islands from the
// same snapshot, so the result does not depend on the order islands are visited. A migrant already
// on the destination island is not added twice.
//
// Thread-safety: none; owned by the coordinator.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "coordinator.pb.h"

namespace sparseditto {

struct Migration {
  int from = 0;
  int to = 0;
  std::string candidate_id;
  bool operator==(const Migration&) const = default;
};

class IslandModel {
 public:
  // num_islands >= 1 and capacity >= 1 (CoordinatorOptions::Validate checks them).
  IslandModel(int num_islands, int capacity);

  int size() const { return static_cast<int>(islands_.size()); }
  int capacity() const { return capacity_; }

  // Adds `member` to `island` (0 <= island < size()). Returns whether it is on the island afterwards
  // (false: turned away, or already there, in which case nothing changes).
  bool Add(int island, const coordinator::IslandMember& member);
  bool Contains(int island, const std::string& candidate_id) const;
  const std::vector<coordinator::IslandMember>& members(int island) const { return islands_[island]; }
  // Sets movable_tunables to 0 for these candidates on every island (their tunable space is exhausted).
  void MarkImmovable(const std::set<std::string>& candidate_ids);

  // Ring migration of the top `fraction` (in (0, 1]) of each island. Returns the copies that stayed on
  // their destination, in island order. One island: nothing moves.
  std::vector<Migration> Migrate(double fraction);

  void SaveTo(coordinator::SearchState* state) const;
  // InvalidArgument when the state holds another number of islands, an island above capacity, or one
  // not ordered best first.
  absl::Status LoadFrom(const coordinator::SearchState& state);

 private:
  int capacity_;
  std::vector<std::vector<coordinator::IslandMember>> islands_;
};

}  // namespace sparseditto
