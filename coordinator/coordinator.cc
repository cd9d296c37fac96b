#include "coordinator/coordinator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/fitness.h"
#include "common/status_macros.h"
#include "coordinator/step_rng.h"
#include "fmt/format.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {
namespace {

constexpr uint32_t kStateFormatVersion = 1;

std::string DefaultMutatorName(v1::MutatorKind kind) {
  switch (kind) {
    case v1::MUTATOR_KIND_OPENAI_COMPATIBLE: return "openai";
    case v1::MUTATOR_KIND_ANTHROPIC: return "anthropic";
    case v1::MUTATOR_KIND_COMMAND: return "command";
    default: return "builtin";
  }
}

// The task's mutators by weight; a task without any gets the built-in one.
v1::MutatorSpec ChooseMutator(const v1::Task& task, Rng& rng) {
  v1::MutatorSpec builtin;
  builtin.set_kind(v1::MUTATOR_KIND_BUILTIN);
  builtin.set_weight(1);
  double total = 0;
  for (const auto& m : task.mutators()) total += m.weight() > 0 ? m.weight() : 0;
  const double u = rng.Uniform();
  if (task.mutators().empty()) return builtin;
  if (!(total > 0)) return task.mutators(0);
  double target = u * total;
  for (const auto& m : task.mutators()) {
    const double w = m.weight() > 0 ? m.weight() : 0;
    if (target < w) return m;
    target -= w;
  }
  for (int i = task.mutators_size(); i-- > 0;) {
    if (task.mutators(i).weight() > 0) return task.mutators(i);
  }
  return task.mutators(0);
}

}  // namespace

absl::StatusOr<coordinator::SearchState> ParseSearchState(const std::string& bytes) {
  coordinator::SearchState state;
  if (!state.ParseFromString(bytes)) return absl::InvalidArgumentError("bytes are not a serialised SearchState");
  return state;
}

absl::Status CoordinatorOptions::Validate() const {
  auto bad = [](std::string what) { return absl::InvalidArgumentError("coordinator options: " + what); };
  if (num_islands < 1) return bad(fmt::format("num_islands must be >= 1, got {}", num_islands));
  if (island_capacity < 1) return bad(fmt::format("island_capacity must be >= 1, got {}", island_capacity));
  if (evaluations_per_generation < 1) {
    return bad(fmt::format("evaluations_per_generation must be >= 1, got {}", evaluations_per_generation));
  }
  if (migration_interval < 1) return bad(fmt::format("migration_interval must be >= 1, got {}", migration_interval));
  if (!(migration_fraction > 0 && migration_fraction <= 1)) {
    return bad(fmt::format("migration_fraction must be in (0, 1], got {}", migration_fraction));
  }
  if (!(selection.exploration_ratio >= 0 && selection.exploration_ratio <= 1)) {
    return bad(fmt::format("exploration_ratio must be in [0, 1], got {}", selection.exploration_ratio));
  }
  if (!(selection.child_penalty_alpha >= 0)) {
    return bad(fmt::format("child_penalty_alpha must be >= 0, got {}", selection.child_penalty_alpha));
  }
  if (!(selection.per_n_ratio >= 0 && selection.per_n_ratio <= 1)) {
    return bad(fmt::format("per_n_ratio must be in [0, 1], got {}", selection.per_n_ratio));
  }
  if (!(crossover_probability >= 0 && crossover_probability <= 1)) {
    return bad(fmt::format("crossover_probability must be in [0, 1], got {}", crossover_probability));
  }
  if (inspiration_top_k < 0 || inspiration_diverse_k < 0 || max_wasted_in_a_row < 0) {
    return bad("inspiration counts and max_wasted_in_a_row must be >= 0");
  }
  std::set<std::string> names;
  for (const auto& f : features) {
    if (!names.insert(f.Name()).second) return bad(fmt::format("feature dimension '{}' given twice", f.Name()));
  }
  return absl::OkStatus();
}

std::string CoordinatorOptions::Fingerprint() const {
  std::vector<std::string> specs;
  for (const auto& f : features) specs.push_back(f.Spec());
  return fmt::format(
      "islands={} capacity={} evaluations_per_generation={} migration_interval={} migration_fraction={} "
      "features=[{}] exploration={} alpha={} per_n={} crossover={} inspirations={}+{} max_wasted_in_a_row={}",
      num_islands, island_capacity, evaluations_per_generation, migration_interval, migration_fraction,
      fmt::join(specs, ";"), selection.exploration_ratio, selection.child_penalty_alpha, selection.per_n_ratio,
      crossover_probability, inspiration_top_k, inspiration_diverse_k, max_wasted_in_a_row);
}

Coordinator::Coordinator(const v1::Task& task, CoordinatorOptions options)
    : task_(task),
      options_(std::move(options)),
      archive_(options_.features),
      islands_(options_.num_islands, options_.island_capacity),
      budget_(task.budget(), options_.max_wasted_in_a_row) {}

absl::StatusOr<Coordinator> Coordinator::Create(const v1::Task& task, CoordinatorOptions options) {
  SD_RETURN_IF_ERROR(options.Validate());
  return Coordinator(task, std::move(options));
}

absl::StatusOr<Coordinator> Coordinator::Restore(const v1::Task& task, CoordinatorOptions options,
                                                 const coordinator::SearchState& state) {
  SD_RETURN_IF_ERROR(options.Validate());
  if (state.format_version() != kStateFormatVersion) {
    return absl::InvalidArgumentError(fmt::format("search state format {} is not {}", state.format_version(),
                                                  kStateFormatVersion));
  }
  if (state.task_name() != task.name() || state.run_seed() != task.seed()) {
    return absl::FailedPreconditionError(fmt::format(
        "search state is of task '{}' seed {}, not task '{}' seed {}", state.task_name(), state.run_seed(),
        task.name(), task.seed()));
  }
  if (state.config() != options.Fingerprint()) {
    return absl::FailedPreconditionError(fmt::format(
        "search state was saved under other coordinator options:\n  saved: {}\n  now:   {}", state.config(),
        options.Fingerprint()));
  }
  if (state.generation() < 0 || state.evaluations_in_generation() < 0 || state.next_candidate_number() < 1) {
    return absl::InvalidArgumentError("search state holds negative counters");
  }
  Coordinator c(task, std::move(options));
  SD_RETURN_IF_ERROR(c.archive_.LoadFrom(state));
  SD_RETURN_IF_ERROR(c.islands_.LoadFrom(state));
  SD_RETURN_IF_ERROR(c.hashes_.LoadFrom(state));
  for (const auto& entry : state.children()) {
    if (!c.children_.emplace(entry.candidate_id(), entry.children()).second) {
      return absl::InvalidArgumentError(
          fmt::format("child count of '{}' appears twice in the search state", entry.candidate_id()));
    }
  }
  c.budget_.Load(state.spent());
  c.step_ = state.step();
  c.generation_ = state.generation();
  c.evaluations_in_generation_ = state.evaluations_in_generation();
  c.next_candidate_number_ = state.next_candidate_number();
  c.exhausted_.assign(state.exhausted_spaces().begin(), state.exhausted_spaces().end());
  for (const coordinator::NElite& e : state.n_elites()) {
    if (!c.n_elites_.emplace(e.n(), e.member()).second) {
      return absl::InvalidArgumentError(fmt::format("the elite at n = {} appears twice in the search state", e.n()));
    }
  }
  c.device_ = {.sm_count = state.device().sm_count(),
               .smem_per_block = state.device().smem_per_block(),
               .smem_per_sm = state.device().smem_per_sm(),
               .arch = state.device().arch()};
  return c;
}

coordinator::SearchState Coordinator::SaveState() const {
  coordinator::SearchState state;
  state.set_format_version(kStateFormatVersion);
  state.set_task_name(task_.name());
  state.set_run_seed(task_.seed());
  state.set_config(options_.Fingerprint());
  state.set_step(step_);
  state.set_generation(generation_);
  state.set_evaluations_in_generation(evaluations_in_generation_);
  state.set_next_candidate_number(next_candidate_number_);
  *state.mutable_spent() = budget_.spent();
  archive_.SaveTo(&state);
  islands_.SaveTo(&state);
  hashes_.SaveTo(&state);
  for (const auto& space : exhausted_) *state.add_exhausted_spaces() = space;
  for (const auto& [n, member] : n_elites_) {
    coordinator::NElite* e = state.add_n_elites();
    e->set_n(n);
    *e->mutable_member() = member;
  }
  state.mutable_device()->set_sm_count(device_.sm_count);
  state.mutable_device()->set_smem_per_block(device_.smem_per_block);
  state.mutable_device()->set_smem_per_sm(device_.smem_per_sm);
  state.mutable_device()->set_arch(device_.arch);
  for (const auto& [id, count] : children_) {
    coordinator::ChildCount* entry = state.add_children();
    entry->set_candidate_id(id);
    entry->set_children(count);
  }
  return state;
}

std::string Coordinator::NextCandidateId() {
  return fmt::format("{}.{:06d}", task_.name(), next_candidate_number_++);
}

void Coordinator::StampSeed(size_t seed_index, v1::Candidate* seed) {
  seed->set_id(NextCandidateId());
  seed->set_island(static_cast<int32_t>(seed_index % islands_.size()));
}

void Coordinator::StampChild(const MutationPlan& plan, v1::Candidate* child) {
  child->set_id(NextCandidateId());
  child->set_island(plan.island);
}

absl::StatusOr<std::optional<std::string>> Coordinator::RegisterCandidate(const v1::Candidate& candidate) {
  if (candidate.task_name() != task_.name()) {
    return absl::InvalidArgumentError(fmt::format("candidate '{}' is of task '{}', not '{}'", candidate.id(),
                                                  candidate.task_name(), task_.name()));
  }
  if (candidate.id().empty() || candidate.source_hash().empty()) {
    return absl::InvalidArgumentError("a registered candidate needs an id and a source hash");
  }
  std::optional<std::string> earlier = hashes_.FindOrAdd(candidate.source_hash(), candidate.id());
  if (earlier) {
    budget_.RecordWasted(/*duplicate=*/true);
  } else {
    budget_.RecordNewCandidate();
  }
  return earlier;
}

void Coordinator::RecordFailedMutation() { budget_.RecordWasted(/*duplicate=*/false); }

bool Coordinator::MarkSpaceExhausted(const coordinator::ExhaustedSpace& space, const std::set<std::string>& members,
                                     const KindServedElsewhere& served_elsewhere) {
  for (const auto& known : exhausted_) {
    if (known.space_key() == space.space_key()) return false;
  }
  exhausted_.push_back(space);
  archive_.MarkImmovable(members);
  islands_.MarkImmovable(members);
  for (auto& [n, member] : n_elites_) {
    if (members.contains(member.candidate_id())) member.set_movable_tunables(0);
  }
  // Another mutator that gets plans (ChooseMutator: a positive weight, or the first when none has one)
  // still has work.
  bool any_weight = false;
  for (const auto& m : task_.mutators()) any_weight |= m.weight() > 0;
  for (int i = 0; i < task_.mutators_size(); ++i) {
    const v1::MutatorSpec& m = task_.mutators(i);
    const bool planned = any_weight ? m.weight() > 0 : i == 0;
    if (planned && m.kind() != v1::MUTATOR_KIND_BUILTIN && (!served_elsewhere || served_elsewhere(m.kind()))) {
      return true;
    }
  }
  bool movable_left = false;
  for (const auto& [cell, elite] : archive_.cells()) movable_left |= elite.movable_tunables() > 0;
  for (int i = 0; i < islands_.size(); ++i) {
    for (const auto& m : islands_.members(i)) movable_left |= m.movable_tunables() > 0;
  }
  if (!movable_left) budget_.SetSpaceExhausted();
  return true;
}

absl::StatusOr<MutationPlan> Coordinator::PlanMutation() {
  if (archive_.cells().empty()) {
    return absl::FailedPreconditionError("no correct candidate yet: nothing to mutate");
  }
  MutationPlan plan;
  plan.step = step_++;
  Rng rng = StepRng(task_.seed(), task_.name(), "plan", plan.step);
  plan.mutator_seed = rng.Next();
  plan.island = static_cast<int>(plan.step % static_cast<uint64_t>(islands_.size()));
  const v1::MutatorSpec spec = ChooseMutator(task_, rng);
  plan.mutator = spec.name().empty() ? DefaultMutatorName(spec.kind()) : spec.name();
  plan.mutator_kind = spec.kind();
  const bool builtin = spec.kind() == v1::MUTATOR_KIND_BUILTIN;
  const auto& island = islands_.members(plan.island);
  std::optional<ParentPick> parent = PerNParent(builtin, rng);
  if (!parent) parent = SelectParent(archive_, island, children_, options_.selection, builtin, rng);
  if (!parent) {
    budget_.RecordWasted(/*duplicate=*/false);
    return absl::FailedPreconditionError(
        fmt::format("plan {}: no candidate has a tunable the {} mutator can change", plan.step, plan.mutator));
  }
  plan.parent_id = parent->member.candidate_id();
  plan.explored = parent->explored;
  std::optional<coordinator::IslandMember> mate;
  if (rng.Uniform() < options_.crossover_probability) {
    mate = SelectMate(archive_, island, children_, options_.selection, parent->member, builtin, rng);
  }
  if (mate) plan.mate_id = mate->candidate_id();
  if (builtin) {
    plan.op = mate ? v1::MUTATION_OPERATOR_TUNE_CROSSOVER : v1::MUTATION_OPERATOR_TUNE;
  } else {
    plan.op = mate ? v1::MUTATION_OPERATOR_LLM_CROSSOVER : v1::MUTATION_OPERATOR_LLM_DIFF;
    plan.inspiration_ids = SelectInspirations(archive_, plan.parent_id, options_.inspiration_top_k,
                                              options_.inspiration_diverse_k, rng);
  }
  ++children_[plan.parent_id];
  if (mate) ++children_[plan.mate_id];
  return plan;
}

absl::StatusOr<ReportOutcome> Coordinator::ReportResult(const v1::Candidate& candidate,
                                                        const v1::EvalResult& result, const Cost& cost) {
  if (candidate.task_name() != task_.name() || result.candidate_id() != candidate.id()) {
    return absl::InvalidArgumentError(fmt::format(
        "result of '{}' for candidate '{}' of task '{}' does not belong to this search of task '{}'",
        result.candidate_id(), candidate.id(), candidate.task_name(), task_.name()));
  }
  if (candidate.island() < 0 || candidate.island() >= islands_.size()) {
    return absl::InvalidArgumentError(fmt::format("candidate '{}': island {} is not in [0, {})", candidate.id(),
                                                  candidate.island(), islands_.size()));
  }
  SD_RETURN_IF_ERROR(hashes_.MarkEvaluated(candidate.source_hash(), candidate.id()));
  ReportOutcome outcome;
  budget_.AddCost(cost);
  outcome.archive = archive_.Insert(candidate, result);
  if (outcome.archive.accepted) {
    coordinator::IslandMember member;
    member.set_candidate_id(candidate.id());
    member.set_fitness(result.fitness());
    member.set_seed_name(candidate.seed_name());
    member.set_movable_tunables(MovableTunables(candidate));
    member.set_family(CrossoverFamily(candidate));
    outcome.joined_island = islands_.Add(candidate.island(), member);
  }
  NoteNElites(candidate, result);
  budget_.RecordEvaluation(outcome.archive.improved_best,
                           archive_.best() == nullptr ? 0 : archive_.best()->fitness());
  if (++evaluations_in_generation_ >= options_.evaluations_per_generation) {
    evaluations_in_generation_ = 0;
    ++generation_;
    if (generation_ % options_.migration_interval == 0) {
      outcome.migrations = islands_.Migrate(options_.migration_fraction);
    }
  }
  outcome.stop = budget_.Check();
  return outcome;
}

void Coordinator::NoteNElites(const v1::Candidate& candidate, const v1::EvalResult& result) {
  if (result.fitness() <= 0 || result.timing_screen()) return;  // failed, or a screen's noisy times
  const std::map<int64_t, v1::BaselineList> baselines(result.baselines().begin(), result.baselines().end());
  for (const v1::TimingStats& t : result.timings()) {
    const double best_baseline = FastestBaselineMs(baselines, t.n());
    if (!std::isfinite(best_baseline) || t.median_ms() <= 0) continue;
    const double speedup = best_baseline / t.median_ms();
    auto it = n_elites_.find(t.n());
    if (it != n_elites_.end() && it->second.fitness() >= speedup) continue;
    coordinator::IslandMember member;
    member.set_candidate_id(candidate.id());
    member.set_fitness(speedup);
    member.set_seed_name(candidate.seed_name());
    member.set_movable_tunables(MovableTunables(candidate));
    member.set_family(CrossoverFamily(candidate));
    n_elites_[t.n()] = member;
  }
}

std::optional<ParentPick> Coordinator::PerNParent(bool movable_only, Rng& rng) const {
  if (n_elites_.size() < 2 || !(options_.selection.per_n_ratio > 0)) return std::nullopt;
  if (!(rng.Uniform() < options_.selection.per_n_ratio)) return std::nullopt;
  std::vector<const coordinator::IslandMember*> pool;
  std::vector<double> weights;
  double total = 0;
  for (const auto& [n, member] : n_elites_) {
    if (movable_only && member.movable_tunables() == 0) continue;
    pool.push_back(&member);
    weights.push_back(1.0 / std::max(member.fitness(), 1e-6));
    total += weights.back();
  }
  if (pool.empty()) return std::nullopt;
  double target = rng.Uniform() * total;
  for (size_t i = 0; i < pool.size(); ++i) {
    if (target < weights[i] || i + 1 == pool.size()) return ParentPick{*pool[i], false};
    target -= weights[i];
  }
  return std::nullopt;
}

}  // namespace sparseditto
