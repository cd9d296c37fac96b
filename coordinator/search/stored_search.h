// What the population store holds about one task's search, read in one place for the readers of a run
// (artifacts, `sparseditto status`, `sparseditto export`): the task, its run state and the
// coordinator's state inside it (the one record of budgets spent and the best candidate).
// Thread-safety: a pure function of the store; safe to call concurrently.
#pragma once

#include <optional>
#include <string>

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

}  // namespace sparseditto
