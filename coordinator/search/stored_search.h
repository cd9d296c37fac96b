// What the population store holds about one task's search, read in one place for the readers of a run
// (artifacts, `sparseditto status`, `sparseditto export`): the task, its run state and the
// coordinator's state inside it (the one record of budgets spent and the best candidate).
// Thread-safety: a pure function of the store; safe to call concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator.pb.h"
#include "population_store/population_store.h"
#include "store.pb.h"
#include "task.pb.h"

namespace sparseditto {

struct StoredSearch {
  v1::Task task;
  std::optional<store::RunState> state;  // nullopt: stored, never started
  coordinator::SearchState search;       // default (no evaluations, no best) until the search began
};

// Errors: NotFound for an unknown run or task; DataLoss when the stored coordinator state does not
// parse; the store's errors.
absl::StatusOr<StoredSearch> ReadStoredSearch(const PopulationStore& store, const std::string& run_id,
                                              const std::string& task_name);

// One GPU model a task's evaluations ran on, as their results say (EvalResult.gpu_name and arch, which
// the evaluator reads from the device, never from the task): "NVIDIA H200 (sm_90)".
struct GpuEvaluations {
  std::string gpu;
  int64_t evaluations = 0;
};

// The GPUs the stored evaluations of `task_name` ran on, most evaluations first (then by name). Results
// that name no GPU (a candidate refused or failed before the GPU stages) are not counted. A population
// searched as the rules say (task/arch_populations.h) has at most one entry; more mean that times from
// different GPUs are compared in it. Errors: the store's.
absl::StatusOr<std::vector<GpuEvaluations>> EvaluatedOn(const PopulationStore& store, const std::string& run_id,
                                                        const std::string& task_name);

// The same count over results already read (none may be null). Pure.
std::vector<GpuEvaluations> GpusOf(const std::vector<const v1::EvalResult*>& results);

}  // namespace sparseditto
