#include "mutators/builtin/builtin_mutator.h"

#include <algorithm>
#include <map>

#include "common/status_format.h"
#include "fmt/format.h"
#include "kernel_abi/tunables.h"
#include "mutators/builtin/source_hash.h"

namespace sparseditto {
namespace {

absl::StatusOr<std::vector<v1::Tunable>> ParseOrExplain(const v1::Candidate& c, std::string_view role,
                                                        const DeviceFacts& device) {
  auto tunables = ParseTunables(c.source(), device);
  if (!tunables.ok()) {
    return absl::InvalidArgumentError(fmt::format("{} candidate '{}' (seed '{}'): {}", role, c.id(),
                                                  c.seed_name(), tunables.status().message()));
  }
  return tunables;
}

int IndexOf(const v1::Tunable& t, const std::string& value) {
  const auto& allowed = t.allowed_values();
  return static_cast<int>(std::find(allowed.begin(), allowed.end(), value) - allowed.begin());
}

// Fills everything but the source-derived fields from the parent(s).
v1::Candidate ChildOf(const v1::Candidate& first, int generation, v1::MutationOperator op,
                      const BuiltinMutatorOptions& options) {
  v1::Candidate child;
  child.set_task_name(first.task_name());
  child.set_operator_(op);
  child.set_mutator(options.mutator_name);
  child.set_generation(generation);
  child.set_island(first.island());
  child.set_seed_name(first.seed_name());
  *child.mutable_archs() = first.archs();
  child.add_parent_ids(first.id());
  return child;
}

absl::Status SetSource(v1::Candidate* child, std::string source, const DeviceFacts& device) {
  auto tunables = ParseTunables(source, device);
  if (!tunables.ok()) return tunables.status();  // cannot happen after a successful ApplyTunables
  child->mutable_tunables()->Clear();
  for (auto& t : *tunables) *child->add_tunables() = std::move(t);
  child->set_source_hash(SourceHash(source));
  child->set_source(std::move(source));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<v1::Candidate>> SeedCandidates(const v1::Task& task,
                                                          const std::vector<SeedKernel>& seeds,
                                                          const BuiltinMutatorOptions& options) {
  std::vector<v1::Candidate> out;
  for (const SeedKernel& seed : seeds) {
    if (!SeedAppliesTo(seed, task)) continue;
    auto tunables = ParseTunables(seed.source, options.device);
    if (!tunables.ok()) {
      return absl::InvalidArgumentError(fmt::format("seed '{}': {}", seed.name, tunables.status().message()));
    }
    v1::Candidate& c = out.emplace_back();
    c.set_task_name(task.name());
    c.set_source(seed.source);
    for (auto& t : *tunables) *c.add_tunables() = std::move(t);
    c.set_operator_(v1::MUTATION_OPERATOR_SEED);
    c.set_mutator(options.mutator_name);
    c.set_generation(0);
    c.set_island(0);
    c.set_seed_name(seed.name);
    c.set_source_hash(SourceHash(seed.source));
    for (const std::string& arch : seed.archs) c.add_archs(arch);
  }
  return out;
}

absl::StatusOr<v1::Candidate> MutateTunables(const v1::Candidate& parent, Rng& rng,
                                             const BuiltinMutatorOptions& options, const KnownSourcePredicate& known) {
  if (options.max_tunables_changed < 1) {
    return absl::InvalidArgumentError("max_tunables_changed must be >= 1");
  }
  auto tunables = ParseOrExplain(parent, "parent", options.device);
  if (!tunables.ok()) return tunables.status();
  std::vector<const v1::Tunable*> movable;
  for (const v1::Tunable& t : *tunables) {
    if (t.allowed_values_size() >= 2) movable.push_back(&t);
  }
  if (movable.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("parent '{}' declares no tunable with two or more allowed values", parent.id()));
  }
  const size_t k = std::min<size_t>(options.max_tunables_changed, movable.size());
  const size_t count = 1 + rng.Below(k);
  // Partial Fisher-Yates: the first `count` entries become a uniform choice without repetition.
  for (size_t i = 0; i < count; ++i) std::swap(movable[i], movable[i + rng.Below(movable.size() - i)]);
  std::map<std::string, std::string> changes;
  for (size_t i = 0; i < count; ++i) {
    const v1::Tunable& t = *movable[i];
    const int size = t.allowed_values_size();
    const int current = IndexOf(t, t.value());
    int target;
    if (rng.Uniform() < options.neighbour_probability) {
      if (current == 0) {
        target = 1;
      } else if (current == size - 1) {
        target = size - 2;
      } else {
        target = rng.Below(2) == 0 ? current - 1 : current + 1;
      }
    } else {
      target = static_cast<int>(rng.Below(size - 1));
      if (target >= current) ++target;
    }
    changes[t.name()] = t.allowed_values(target);
  }
  auto source = ApplyTunables(parent.source(), changes, options.device);
  if (!source.ok()) return source.status();
  if (known && known(SourceHash(*source))) {
    absl::StatusOr<std::map<std::string, std::string>> unseen =
        NearestUnseenPoint(parent.source(), options.device, known, rng, options.max_probes);
    if (!unseen.ok()) {
      return absl::Status(unseen.status().code(), fmt::format("parent '{}' (seed '{}'): {}", parent.id(),
                                                              parent.seed_name(), unseen.status().message()));
    }
    source = ApplyTunables(parent.source(), *unseen, options.device);
    if (!source.ok()) return source.status();
  }
  v1::Candidate child = ChildOf(parent, parent.generation() + 1, v1::MUTATION_OPERATOR_TUNE, options);
  if (absl::Status s = SetSource(&child, *std::move(source), options.device); !s.ok()) return s;
  return child;
}

absl::StatusOr<v1::Candidate> CrossoverTunables(const v1::Candidate& a, const v1::Candidate& b, Rng& rng,
                                                const BuiltinMutatorOptions& options,
                                                const KnownSourcePredicate& known) {
  const std::string family_a = CrossoverFamily(a);
  if (family_a.empty() || family_a != CrossoverFamily(b)) {
    return absl::InvalidArgumentError(fmt::format(
        "crossover needs two parents of the same seed or family; '{}' is of seed '{}' (family '{}'), '{}' of "
        "seed '{}' (family '{}')", a.id(), a.seed_name(), DeclaredFamily(a.source()), b.id(), b.seed_name(),
        DeclaredFamily(b.source())));
  }
  if (a.task_name() != b.task_name()) {
    return absl::InvalidArgumentError(fmt::format("crossover parents '{}' and '{}' belong to tasks '{}' and '{}'",
                                                  a.id(), b.id(), a.task_name(), b.task_name()));
  }
  auto ta = ParseOrExplain(a, "first parent", options.device);
  if (!ta.ok()) return ta.status();
  auto tb = ParseOrExplain(b, "second parent", options.device);
  if (!tb.ok()) return tb.status();
  std::map<std::string, std::string> b_values;
  for (const v1::Tunable& t : *tb) b_values[t.name()] = t.value();
  // Tunables (in a's source order) where b holds another value that a allows.
  std::vector<std::pair<std::string, std::string>> differing;
  for (const v1::Tunable& t : *ta) {
    auto it = b_values.find(t.name());
    if (it == b_values.end() || it->second == t.value()) continue;
    if (IndexOf(t, it->second) == t.allowed_values_size()) continue;
    differing.emplace_back(t.name(), it->second);
  }
  if (differing.size() < 2) {
    return absl::FailedPreconditionError(fmt::format(
        "parents '{}' and '{}' differ in {} tunable(s); a crossover would copy a parent", a.id(), b.id(),
        differing.size()));
  }
  std::vector<bool> from_b(differing.size());
  size_t taken = 0;
  for (size_t i = 0; i < differing.size(); ++i) {
    from_b[i] = rng.Below(2) == 1;
    taken += from_b[i];
  }
  if (taken == 0 || taken == differing.size()) {  // a copy of one parent: flip one choice
    const size_t flip = rng.Below(differing.size());
    from_b[flip] = !from_b[flip];
  }
  auto mix = [&](const std::vector<bool>& take) {
    std::map<std::string, std::string> changes;
    for (size_t i = 0; i < differing.size(); ++i) {
      if (take[i]) changes[differing[i].first] = differing[i].second;
    }
    return ApplyTunables(a.source(), changes, options.device);
  };
  auto source = mix(from_b);
  if (!source.ok()) return source.status();
  if (known && known(SourceHash(*source))) {
    // The other mixes (neither parent: masks 1 .. 2^d - 2), from a drawn start; at most max_probes.
    const uint64_t d = std::min<size_t>(differing.size(), 62);
    const uint64_t count = (uint64_t{1} << d) - 2;
    const uint64_t start = rng.Below(count);
    bool found = false;
    for (uint64_t k = 0; k < count && static_cast<int64_t>(k) < options.max_probes && !found; ++k) {
      const uint64_t mask = 1 + (start + k) % count;
      std::vector<bool> take(differing.size(), false);
      for (uint64_t i = 0; i < d; ++i) take[i] = (mask >> i) & 1;
      source = mix(take);
      if (!source.ok()) return source.status();
      found = !known(SourceHash(*source));
    }
    if (!found) {
      return absl::FailedPreconditionError(fmt::format(
          "every crossover of '{}' and '{}' probed is known ({} tunables differ)", a.id(), b.id(), differing.size()));
    }
  }
  v1::Candidate child = ChildOf(a, std::max(a.generation(), b.generation()) + 1,
                                v1::MUTATION_OPERATOR_TUNE_CROSSOVER, options);
  child.add_parent_ids(b.id());
  if (absl::Status s = SetSource(&child, *std::move(source), options.device); !s.ok()) return s;
  return child;
}

}  // namespace sparseditto
