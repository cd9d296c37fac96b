// The search loop for ONE task over a PopulationStore: seeds -> evaluate -> (plan -> mutate -> dedup ->
// commit -> evaluate -> report -> commit evaluation + coordinator state) until the coordinator stops.
//
// Durability and resume: each evaluation is committed together with a RunState whose rng_state holds the
// coordinator's serialised SearchState (Coordinator::SaveState). A candidate is committed before it is
// evaluated. Calling RunTaskSearch again on the same store, run and task restores the coordinator from the
// last committed state and continues: the plan after that state is drawn again, gives the same child (the
// mutator is a pure function of the plan), which is the candidate stored but not yet evaluated, and it is
// evaluated then. Nothing with a committed evaluation is evaluated again, and a resumed search ends exactly
// as an uninterrupted one. Duplicates (RegisterCandidate names an earlier id) reuse the stored evaluation
// and never reach the evaluator; they are not stored.
//
// Errors: absl::Status from the store, the coordinator or the mutator's seeding; InvalidArgument when the
// stored task differs from `task`; FailedPrecondition when no seed applies to the task.
// Thread-safety: none; one thread per task.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"
#include "coordinator/search/candidate_evaluator.h"
#include "kernels/seed_library.h"
#include "mutators/builtin/builtin_mutator.h"
#include "population_store/population_store.h"
#include "task.pb.h"

namespace sparseditto {

struct SearchLoopOptions {
  CoordinatorOptions coordinator;
  BuiltinMutatorOptions mutator;
  // Stop this call (stop_reason "interrupted") when this many evaluations were made in it and another
  // is due; the candidate due is committed already and is evaluated first by the next call. 0: no limit.
  // A test seam for an interruption (a crash or a kill between two evaluations).
  int64_t stop_after_evaluations = 0;
  // Safety net against a loop that makes no progress (plans refused over and over).
  int64_t max_steps = 1000000;
};

struct SearchSummary {
  std::string best_candidate_id;  // empty when no candidate is correct
  double best_fitness = 0;
  int64_t evaluations = 0;           // evaluations of the task in total (this call and earlier ones)
  int64_t evaluations_this_call = 0;  // evaluator calls made by this call
  int64_t duplicates = 0;            // proposals answered from a stored result
  std::string stop_reason;           // StopReasonName, or "interrupted"
  bool resumed = false;              // the store held a state of this task already
};

absl::StatusOr<SearchSummary> RunTaskSearch(PopulationStore& store, const std::string& run_id,
                                            const v1::Task& task, const std::vector<SeedKernel>& seeds,
                                            CandidateEvaluator& evaluator, const SearchLoopOptions& options);

}  // namespace sparseditto
