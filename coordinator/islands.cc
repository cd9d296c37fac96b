#include "coordinator/islands.h"

#include <algorithm>
#include <cmath>

#include "fmt/format.h"

namespace sparseditto {

IslandModel::IslandModel(int num_islands, int capacity)
    : capacity_(capacity), islands_(static_cast<size_t>(std::max(num_islands, 1))) {}

bool IslandModel::Contains(int island, const std::string& candidate_id) const {
  const auto& members = islands_[island];
  return std::any_of(members.begin(), members.end(),
                     [&](const coordinator::IslandMember& m) { return m.candidate_id() == candidate_id; });
}

bool IslandModel::Add(int island, const coordinator::IslandMember& member) {
  if (Contains(island, member.candidate_id())) return false;
  auto& members = islands_[island];
  // After every member at least as good (ties in arrival order).
  auto at = std::find_if(members.begin(), members.end(),
                         [&](const coordinator::IslandMember& m) { return m.fitness() < member.fitness(); });
  if (at == members.end() && static_cast<int>(members.size()) >= capacity_) return false;
  members.insert(at, member);
  if (static_cast<int>(members.size()) > capacity_) members.pop_back();
  return true;
}

std::vector<Migration> IslandModel::Migrate(double fraction) {
  std::vector<Migration> moved;
  if (islands_.size() < 2 || !(fraction > 0)) return moved;
  const auto snapshot = islands_;
  for (size_t from = 0; from < snapshot.size(); ++from) {
    const auto& members = snapshot[from];
    if (members.empty()) continue;
    const size_t count = std::min(members.size(),
                                  std::max<size_t>(1, static_cast<size_t>(std::ceil(fraction * members.size()))));
    const int to = static_cast<int>((from + 1) % snapshot.size());
    for (size_t i = 0; i < count; ++i) {
      if (Add(to, members[i])) moved.push_back({static_cast<int>(from), to, members[i].candidate_id()});
    }
  }
  return moved;
}

void IslandModel::SaveTo(coordinator::SearchState* state) const {
  state->clear_islands();
  for (const auto& members : islands_) {
    coordinator::Island* island = state->add_islands();
    for (const auto& m : members) *island->add_members() = m;
  }
}

absl::Status IslandModel::LoadFrom(const coordinator::SearchState& state) {
  if (state.islands_size() != size()) {
    return absl::InvalidArgumentError(
        fmt::format("state holds {} islands, the options ask for {}", state.islands_size(), size()));
  }
  std::vector<std::vector<coordinator::IslandMember>> islands(islands_.size());
  for (int i = 0; i < state.islands_size(); ++i) {
    const auto& members = state.islands(i).members();
    if (members.size() > capacity_) {
      return absl::InvalidArgumentError(
          fmt::format("island {} holds {} members, above its capacity {}", i, members.size(), capacity_));
    }
    for (int j = 1; j < members.size(); ++j) {
      if (members[j].fitness() > members[j - 1].fitness()) {
        return absl::InvalidArgumentError(fmt::format("island {} is not ordered best first", i));
      }
    }
    islands[i].assign(members.begin(), members.end());
  }
  islands_ = std::move(islands);
  return absl::OkStatus();
}

void IslandModel::MarkImmovable(const std::set<std::string>& candidate_ids) {
  for (auto& island : islands_) {
    for (auto& m : island) {
      if (candidate_ids.contains(m.candidate_id())) m.set_movable_tunables(0);
    }
  }
}

}  // namespace sparseditto
