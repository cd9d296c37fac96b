#include "coordinator/search/stored_search.h"

#include "common/status_format.h"
#include "coordinator/coordinator.h"
#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<StoredSearch> ReadStoredSearch(const PopulationStore& store, const std::string& run_id,
                                              const std::string& task_name) {
  StoredSearch out;
  absl::StatusOr<v1::Task> task = store.GetTask(run_id, task_name);
  if (!task.ok()) return task.status();
  out.task = *std::move(task);
  absl::StatusOr<store::RunState> state = store.GetRunState(run_id, task_name);
  if (absl::IsNotFound(state.status())) return out;
  if (!state.ok()) return state.status();
  out.state = *std::move(state);
  if (out.state->search_state().empty()) return out;
  absl::StatusOr<coordinator::SearchState> search = ParseSearchState(out.state->search_state());
  if (!search.ok()) {
    return absl::DataLossError(fmt::format("run {} task {}: the stored search state does not parse: {}", run_id,
                                           task_name, search.status().message()));
  }
  out.search = *std::move(search);
  return out;
}

}  // namespace sparseditto
