#include "coordinator/parent_selection.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace sparseditto {
namespace {

coordinator::IslandMember FromElite(const coordinator::Elite& e) {
  coordinator::IslandMember m;
  m.set_candidate_id(e.candidate_id());
  m.set_fitness(e.fitness());
  m.set_seed_name(e.seed_name());
  m.set_movable_tunables(e.movable_tunables());
  m.set_family(e.family());
  return m;
}

std::vector<coordinator::IslandMember> EliteMembers(const MapElitesArchive& archive, bool movable_only) {
  std::vector<coordinator::IslandMember> out;
  for (const auto& [cell, elite] : archive.cells()) {
    if (!movable_only || elite.movable_tunables() > 0) out.push_back(FromElite(elite));
  }
  return out;
}

// A state saved before families were recorded holds none: the seed is the family then.
const std::string& MateFamily(const coordinator::IslandMember& m) {
  return m.family().empty() ? m.seed_name() : m.family();
}

int64_t ChildrenOf(const ChildCounts& children, const std::string& id) {
  auto it = children.find(id);
  return it == children.end() ? 0 : it->second;
}

// One draw: proportional to the penalised weights, or uniform when they sum to zero. `pool` non-empty.
size_t WeightedIndex(const std::vector<coordinator::IslandMember>& pool, const ChildCounts& children,
                     double alpha, Rng& rng) {
  std::vector<double> weights;
  double total = 0;
  for (const auto& m : pool) {
    weights.push_back(PenalisedWeight(m.fitness(), ChildrenOf(children, m.candidate_id()), alpha));
    total += weights.back();
  }
  const double u = rng.Uniform();
  if (!(total > 0) || !std::isfinite(total)) return static_cast<size_t>(u * pool.size());
  double target = u * total;
  for (size_t i = 0; i < pool.size(); ++i) {
    if (target < weights[i]) return i;
    target -= weights[i];
  }
  // Rounding left `target` just above the sum: the last member with a weight.
  for (size_t i = pool.size(); i-- > 0;) {
    if (weights[i] > 0) return i;
  }
  return pool.size() - 1;
}

}  // namespace

double PenalisedWeight(double fitness, int64_t children, double alpha) {
  if (!std::isfinite(fitness) || fitness < 0) return 0;
  return fitness / std::pow(1.0 + static_cast<double>(std::max<int64_t>(children, 0)), alpha);
}

std::optional<ParentPick> SelectParent(const MapElitesArchive& archive,
                                       const std::vector<coordinator::IslandMember>& island,
                                       const ChildCounts& children, const SelectionOptions& options,
                                       bool movable_only, Rng& rng) {
  const std::vector<coordinator::IslandMember> elites = EliteMembers(archive, movable_only);
  std::vector<coordinator::IslandMember> local;
  for (const auto& m : island) {
    if (!movable_only || m.movable_tunables() > 0) local.push_back(m);
  }
  const bool explore = rng.Uniform() < options.exploration_ratio;
  if (explore && !elites.empty()) return ParentPick{elites[rng.Below(elites.size())], true};
  const auto& pool = local.empty() ? elites : local;
  if (pool.empty()) return std::nullopt;
  return ParentPick{pool[WeightedIndex(pool, children, options.child_penalty_alpha, rng)], false};
}

std::optional<coordinator::IslandMember> SelectMate(const MapElitesArchive& archive,
                                                    const std::vector<coordinator::IslandMember>& island,
                                                    const ChildCounts& children, const SelectionOptions& options,
                                                    const coordinator::IslandMember& parent, bool movable_only,
                                                    Rng& rng) {
  std::vector<coordinator::IslandMember> pool;
  std::set<std::string> seen = {parent.candidate_id()};
  auto consider = [&](const coordinator::IslandMember& m) {
    if (MateFamily(m) != MateFamily(parent) || MateFamily(m).empty()) return;
    if (movable_only && m.movable_tunables() == 0) return;
    if (seen.insert(m.candidate_id()).second) pool.push_back(m);
  };
  for (const auto& m : island) consider(m);
  for (const auto& m : EliteMembers(archive, movable_only)) consider(m);
  if (pool.empty()) return std::nullopt;
  return pool[WeightedIndex(pool, children, options.child_penalty_alpha, rng)];
}

std::vector<std::string> SelectInspirations(const MapElitesArchive& archive, std::string_view exclude_id,
                                            int top_k, int diverse_k, Rng& rng) {
  std::vector<const coordinator::Elite*> elites;
  for (const auto& [cell, elite] : archive.cells()) {
    if (elite.candidate_id() != exclude_id) elites.push_back(&elite);
  }
  // Best first; equal fitness in cell order (stable sort over the map's order).
  std::stable_sort(elites.begin(), elites.end(),
                   [](const auto* a, const auto* b) { return a->fitness() > b->fitness(); });
  std::vector<std::string> out;
  const size_t top = std::min<size_t>(std::max(top_k, 0), elites.size());
  for (size_t i = 0; i < top; ++i) out.push_back(elites[i]->candidate_id());
  // The rest back in cell order, then a partial Fisher-Yates for the diverse picks.
  std::vector<const coordinator::Elite*> rest(elites.begin() + top, elites.end());
  std::sort(rest.begin(), rest.end(), [](const auto* a, const auto* b) { return a->cell() < b->cell(); });
  const size_t diverse = std::min<size_t>(std::max(diverse_k, 0), rest.size());
  for (size_t i = 0; i < diverse; ++i) {
    std::swap(rest[i], rest[i + rng.Below(rest.size() - i)]);
    out.push_back(rest[i]->candidate_id());
  }
  return out;
}

}  // namespace sparseditto
