#include "coordinator/map_elites.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/eval_outcome.h"
#include "fmt/format.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {
namespace {

constexpr struct {
  FeatureDimension::Kind kind;
  const char* name;
} kResourceKinds[] = {
    {FeatureDimension::Kind::kRegisters, "registers"},
    {FeatureDimension::Kind::kSharedBytes, "shared_bytes"},
    {FeatureDimension::Kind::kSpillBytes, "spill_bytes"},
};

const char* ResourceName(FeatureDimension::Kind kind) {
  for (const auto& r : kResourceKinds) {
    if (r.kind == kind) return r.name;
  }
  return "";
}

int64_t ResourceValue(FeatureDimension::Kind kind, const v1::KernelResources& r) {
  switch (kind) {
    case FeatureDimension::Kind::kRegisters: return r.registers();
    case FeatureDimension::Kind::kSharedBytes: return r.shared_bytes();
    default: return r.spill_bytes();
  }
}

// Whether `key` is "name=bucket|..." over exactly these dimensions, in order.
bool KeyMatches(const std::string& key, const std::vector<FeatureDimension>& dims) {
  const std::string_view k = key;
  size_t at = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) {
      if (at >= k.size() || k[at] != '|') return false;
      ++at;
    }
    const std::string name = dims[i].Name();
    if (k.substr(at, name.size()) != name || k.substr(at + name.size(), 1) != "=") return false;
    at = k.find('|', at + name.size() + 1);
    if (at == std::string_view::npos) return i + 1 == dims.size();
  }
  return dims.empty() && k.empty();
}

}  // namespace

std::string FeatureDimension::Name() const {
  if (kind == Kind::kSeedName) return "seed";
  if (kind == Kind::kTunable) return tunable;
  return ResourceName(kind);
}

std::string FeatureDimension::Spec() const {
  if (kind == Kind::kSeedName) return "seed";
  if (kind == Kind::kTunable) return "tunable:" + tunable;
  return fmt::format("{}:{}", ResourceName(kind), fmt::join(edges, ","));
}

std::string FeatureDimension::Bucket(const v1::Candidate& candidate, const v1::EvalResult& result) const {
  if (kind == Kind::kSeedName) return candidate.seed_name().empty() ? "-" : candidate.seed_name();
  if (kind == Kind::kTunable) {
    for (const v1::Tunable& t : candidate.tunables()) {
      if (t.name() == tunable) return t.value();
    }
    return "-";
  }
  if (result.resources().empty()) return "?";
  int64_t value = 0;
  for (const v1::KernelResources& r : result.resources()) value = std::max(value, ResourceValue(kind, r));
  for (int64_t edge : edges) {
    if (value <= edge) return fmt::format("<={}", edge);
  }
  return edges.empty() ? std::to_string(value) : fmt::format(">{}", edges.back());
}

absl::StatusOr<FeatureDimension> ParseFeatureDimension(std::string_view spec) {
  auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format(
        "feature dimension '{}': {} (expected seed, tunable:NAME, or registers|shared_bytes|spill_bytes:E1,E2,...)",
        spec, why));
  };
  FeatureDimension dim;
  if (spec == "seed") return dim;
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return fail("unknown dimension");
  const std::string_view head = spec.substr(0, colon), rest = spec.substr(colon + 1);
  if (head == "tunable") {
    if (rest.empty() || rest.find_first_of("|=") != std::string_view::npos) return fail("bad tunable name");
    dim.kind = FeatureDimension::Kind::kTunable;
    dim.tunable = std::string(rest);
    return dim;
  }
  bool known = false;
  for (const auto& r : kResourceKinds) {
    if (head == r.name) {
      dim.kind = r.kind;
      known = true;
    }
  }
  if (!known) return fail("unknown dimension");
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string_view::npos) comma = rest.size();
    const std::string_view item = rest.substr(start, comma - start);
    int64_t edge = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), edge);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      return fail(fmt::format("bad edge '{}'", item));
    }
    if (!dim.edges.empty() && edge <= dim.edges.back()) return fail("edges must ascend");
    dim.edges.push_back(edge);
    start = comma + 1;
  }
  return dim;
}

std::vector<FeatureDimension> DefaultFeatureDimensions() {
  FeatureDimension registers;
  registers.kind = FeatureDimension::Kind::kRegisters;
  registers.edges = {32, 64, 96, 128, 168, 255};
  return {FeatureDimension{}, registers};
}

bool IsCorrectResult(const v1::EvalResult& result) {
  return IsCorrect(result) && std::isfinite(result.fitness()) && result.fitness() > 0 && !result.flagged_implausible();
}

int32_t MovableTunables(const v1::Candidate& candidate) {
  int32_t n = 0;
  for (const v1::Tunable& t : candidate.tunables()) n += t.allowed_values_size() >= 2;
  return n;
}

MapElitesArchive::MapElitesArchive(std::vector<FeatureDimension> dimensions)
    : dimensions_(std::move(dimensions)) {}

std::string MapElitesArchive::CellOf(const v1::Candidate& candidate, const v1::EvalResult& result) const {
  std::string key;
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (i > 0) key += '|';
    key += dimensions_[i].Name() + "=" + dimensions_[i].Bucket(candidate, result);
  }
  return key;
}

const coordinator::Elite* MapElitesArchive::best() const {
  auto it = cells_.find(best_cell_);
  return it == cells_.end() ? nullptr : &it->second;
}

InsertOutcome MapElitesArchive::Insert(const v1::Candidate& candidate, const v1::EvalResult& result) {
  InsertOutcome out;
  out.cell = CellOf(candidate, result);
  out.accepted = IsCorrectResult(result);
  if (!out.accepted) return out;
  auto it = cells_.find(out.cell);
  out.new_cell = it == cells_.end();
  if (!out.new_cell && result.fitness() <= it->second.fitness()) return out;
  const coordinator::Elite* previous_best = best();
  out.improved_best = previous_best == nullptr || result.fitness() > previous_best->fitness();
  coordinator::Elite& elite = cells_[out.cell];
  if (!out.new_cell) out.replaced_id = elite.candidate_id();
  elite.set_cell(out.cell);
  elite.set_candidate_id(candidate.id());
  elite.set_fitness(result.fitness());
  elite.set_seed_name(candidate.seed_name());
  elite.set_movable_tunables(MovableTunables(candidate));
  elite.set_family(CrossoverFamily(candidate));
  out.improved_cell = true;
  if (out.improved_best) best_cell_ = out.cell;
  return out;
}

void MapElitesArchive::SaveTo(coordinator::SearchState* state) const {
  state->clear_archive();
  for (const auto& [cell, elite] : cells_) *state->add_archive() = elite;
  const coordinator::Elite* b = best();
  state->set_best_candidate_id(b ? b->candidate_id() : "");
  state->set_best_fitness(b ? b->fitness() : 0.0);
}

absl::Status MapElitesArchive::LoadFrom(const coordinator::SearchState& state) {
  std::map<std::string, coordinator::Elite> cells;
  std::string best_cell;
  bool found_best = false;
  for (const coordinator::Elite& elite : state.archive()) {
    if (!KeyMatches(elite.cell(), dimensions_)) {
      return absl::InvalidArgumentError(fmt::format("archive cell '{}' does not match the feature dimensions",
                                                    elite.cell()));
    }
    if (!cells.emplace(elite.cell(), elite).second) {
      return absl::InvalidArgumentError(fmt::format("archive cell '{}' appears twice", elite.cell()));
    }
    if (elite.candidate_id() == state.best_candidate_id() && elite.fitness() == state.best_fitness()) {
      best_cell = elite.cell();
      found_best = true;
    }
  }
  if (!cells.empty() && !found_best) {
    return absl::InvalidArgumentError(
        fmt::format("best candidate '{}' is not an elite of the archive", state.best_candidate_id()));
  }
  cells_ = std::move(cells);
  best_cell_ = std::move(best_cell);
  return absl::OkStatus();
}

void MapElitesArchive::MarkImmovable(const std::set<std::string>& candidate_ids) {
  for (auto& [cell, elite] : cells_) {
    if (candidate_ids.contains(elite.candidate_id())) elite.set_movable_tunables(0);
  }
}

}  // namespace sparseditto
