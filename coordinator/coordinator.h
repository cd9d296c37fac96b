// The coordinator's search logic for one task: which parent to mutate next and how, what to keep,
// when to stop. No storage, no network, no clock: the search loop (embedded or distributed) feeds it
// candidates and results and persists SaveState() beside them (store::RunState.search_state, the one record of what the search spent and found).
//
// A search loop over it:
//   seeds = SeedCandidates(task, library)                  (mutators/builtin/builtin_mutator.h)
//   for i, seed: coordinator.StampSeed(i, &seed); RegisterCandidate; evaluate; ReportResult
//   while coordinator.CheckStop() == kNone:
//     plan = PlanMutation()                                (FailedPrecondition: nothing to mutate now)
//     child = mutator(plan)  with Rng(plan.mutator_seed), known = KnowsSource;  refused: RecordFailedMutation()
//       (the built-in mutator says the parent's tunable space is exhausted: MarkSpaceExhausted first)
//     StampChild(plan, &child)
//     if RegisterCandidate(child) names an earlier id: reuse that id's result; do not evaluate
//     else evaluate; ReportResult(child, result, cost)
//
// Determinism: plan i draws only from StepRng(task.seed, task.name, "plan", i); ids, islands and
// generations are counters; every container is ordered. The same task, options and sequence of
// results give the same plans, and Restore(SaveState()) at any point continues identically.
// Errors: InvalidArgument for bad options, a candidate or result of another task, an island out of
// range, or a state that does not parse; FailedPrecondition for a state saved under other options or
// another task, a result reported twice or for a duplicate, and a plan with no eligible parent.
// Thread-safety: none; one thread drives a coordinator (one per task).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator.pb.h"
#include "coordinator/budget.h"
#include "coordinator/duplicate_index.h"
#include "coordinator/islands.h"
#include "coordinator/map_elites.h"
#include "coordinator/parent_selection.h"
#include "eval_result.pb.h"
#include "kernel_abi/tunable_values.h"
#include "task.pb.h"

namespace sparseditto {

// InvalidArgument when `bytes` is not a serialised SearchState.
absl::StatusOr<coordinator::SearchState> ParseSearchState(const std::string& bytes);

struct CoordinatorOptions {
  int num_islands = 4;
  int island_capacity = 32;
  int evaluations_per_generation = 8;  // a generation ends after this many reported results
  int migration_interval = 4;          // migrate when the generation count is a multiple of this
  double migration_fraction = 0.25;    // top fraction of each island copied to the next
  std::vector<FeatureDimension> features = DefaultFeatureDimensions();
  SelectionOptions selection;
  double crossover_probability = 0.2;  // of a plan being a crossover (when a mate exists)
  int inspiration_top_k = 3;
  int inspiration_diverse_k = 2;
  int64_t max_wasted_in_a_row = 200;   // StopReason::kExhausted; 0: never

  absl::Status Validate() const;
  // Every option in one line; a state records it and Restore refuses a different one.
  std::string Fingerprint() const;
};

struct MutationPlan {
  uint64_t step = 0;
  int island = 0;                       // the child's island
  std::string mutator;                  // MutatorSpec.name
  v1::MutatorKind mutator_kind = v1::MUTATOR_KIND_BUILTIN;
  v1::MutationOperator op = v1::MUTATION_OPERATOR_TUNE;  // TUNE, TUNE_CROSSOVER, LLM_DIFF, LLM_CROSSOVER
  std::string parent_id;
  std::string mate_id;                  // crossover only
  std::vector<std::string> inspiration_ids;
  bool explored = false;                // parent drawn uniformly among archive cells
  uint64_t mutator_seed = 0;            // seed of the mutator's Rng for this plan
};

struct ReportOutcome {
  InsertOutcome archive;
  bool joined_island = false;
  std::vector<Migration> migrations;  // when this result ended a migrating generation
  StopReason stop = StopReason::kNone;
};

class Coordinator {
 public:
  static absl::StatusOr<Coordinator> Create(const v1::Task& task, CoordinatorOptions options);
  static absl::StatusOr<Coordinator> Restore(const v1::Task& task, CoordinatorOptions options,
                                             const coordinator::SearchState& state);
  // The state holds no map fields, so SaveState().SerializeAsString() is deterministic: equal states
  // give equal bytes. ParseSearchState reads them back.
  coordinator::SearchState SaveState() const;

  // "<task>.000001", "<task>.000002", ...: unique within a run (the task name is unique in a batch).
  std::string NextCandidateId();
  // Sets id and island (round robin over islands by seed index) of a seed candidate.
  void StampSeed(size_t seed_index, v1::Candidate* seed);
  // Sets id and island (plan.island) of a child made from `plan`.
  void StampChild(const MutationPlan& plan, v1::Candidate* child);

  // Registers a proposal's source hash. Returns the id of an earlier candidate with the same normalised
  // source (the caller reuses its result and does not evaluate this one), or nullopt for a new source.
  // InvalidArgument for a candidate of another task, without an id or without a source hash.
  absl::StatusOr<std::optional<std::string>> RegisterCandidate(const v1::Candidate& candidate);
  // The mutator refused a plan (e.g. crossover parents that differ too little).
  void RecordFailedMutation();

  // Whether a normalised source hash was proposed before (registered): what the built-in mutator is
  // given as its KnownSourcePredicate, so it plans no duplicate while an unseen point remains.
  bool KnowsSource(const std::string& source_hash) const { return hashes_.Find(source_hash).has_value(); }
  // The built-in mutator found every point of a tunable space proposed (mutators/builtin/tunable_space.h).
  // `members`: the candidates of that space the caller knows; they no longer parent built-in plans
  // (their movable_tunables become 0 in the archive and on the islands). Returns false, changing
  // nothing, for a space reported before. When every mutator that gets plans is served by the built-in
  // one (its kind is builtin, or `served_elsewhere` says false for its kind: no other mutator takes its
  // plans, so the built-in mutator does) and no candidate it could use is left, CheckStop() says
  // kExhausted ("every tunable space ... exhausted"). `served_elsewhere` empty: every kind but builtin
  // is served by another mutator.
  using KindServedElsewhere = std::function<bool(v1::MutatorKind kind)>;
  bool MarkSpaceExhausted(const coordinator::ExhaustedSpace& space, const std::set<std::string>& members,
                          const KindServedElsewhere& served_elsewhere = {});
  const std::vector<coordinator::ExhaustedSpace>& exhausted_spaces() const { return exhausted_; }

  // The facts device-relative tunables resolve against; saved and restored with the state, so a
  // resumed search keeps those of its first attempt. Unknown (zeros) until set.
  void SetDeviceFacts(const DeviceFacts& facts) { device_ = facts; }
  const DeviceFacts& device_facts() const { return device_; }

  // The next mutation. FailedPrecondition while the archive is empty (no step is used), or when the
  // mutator drawn needs a parent with movable tunables and none exists (the step is used and counted
  // as wasted, so a later plan draws anew).
  absl::StatusOr<MutationPlan> PlanMutation();

  // Takes an evaluated candidate (registered, not a duplicate, not reported before) into the archive
  // and its island, and spends the budget.
  absl::StatusOr<ReportOutcome> ReportResult(const v1::Candidate& candidate, const v1::EvalResult& result,
                                             const Cost& cost);
  // Costs outside evaluations (tokens of an LLM proposal that came to nothing).
  void AddCost(const Cost& cost) { budget_.AddCost(cost); }
  // BudgetTracker::RefuseOverBudget: the search stops at `limit` (kTokens / kMoney).
  void RefuseOverBudget(StopReason limit, const std::string& why) { budget_.RefuseOverBudget(limit, why); }

  StopReason CheckStop() const { return budget_.Check(); }
  std::string ExplainStop() const { return budget_.Explain(budget_.Check()); }

  const MapElitesArchive& archive() const { return archive_; }
  const IslandModel& islands() const { return islands_; }
  const coordinator::Spent& spent() const { return budget_.spent(); }
  // The task's evaluation budget, its default (200) applied when the task leaves it 0.
  int64_t max_evaluations() const { return budget_.limits().max_evaluations(); }
  double max_wall_seconds() const { return budget_.limits().max_wall_seconds(); }  // 0: none
  const ChildCounts& children() const { return children_; }
  uint64_t step() const { return step_; }
  // The fastest candidate at each n (full timings of correct candidates; member.fitness its speed-up
  // over the best baseline at n), by n. SelectionOptions::per_n_ratio of the plans take a parent here.
  const std::map<int64_t, coordinator::IslandMember>& n_elites() const { return n_elites_; }
  int64_t generation() const { return generation_; }

 private:
  Coordinator(const v1::Task& task, CoordinatorOptions options);
  // Takes a result's per-n speed-ups into n_elites_ (not a screen's, not a failed candidate's).
  void NoteNElites(const v1::Candidate& candidate, const v1::EvalResult& result);
  // With probability per_n_ratio (and two or more n with an elite): a per-n elite, drawn with weight
  // 1 / speed-up; nullopt otherwise (the islands choose). Draws from `rng` only when it may pick.
  std::optional<ParentPick> PerNParent(bool movable_only, Rng& rng) const;

  v1::Task task_;
  CoordinatorOptions options_;
  MapElitesArchive archive_;
  IslandModel islands_;
  DuplicateIndex hashes_;
  BudgetTracker budget_;
  ChildCounts children_;
  uint64_t step_ = 0;
  int64_t generation_ = 0;
  int64_t evaluations_in_generation_ = 0;
  int64_t next_candidate_number_ = 1;
  std::vector<coordinator::ExhaustedSpace> exhausted_;  // in the order found
  DeviceFacts device_;
  std::map<int64_t, coordinator::IslandMember> n_elites_;  // by n
};

}  // namespace sparseditto
