#include "coordinator/search/stored_search.h"

#include <algorithm>
#include <map>

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

std::vector<GpuEvaluations> GpusOf(const std::vector<const v1::EvalResult*>& results) {
  std::map<std::string, int64_t> counts;
  for (const v1::EvalResult* result : results) {
    if (result->gpu_name().empty() && result->arch().empty()) continue;
    ++counts[fmt::format("{} ({})", result->gpu_name().empty() ? "unnamed GPU" : result->gpu_name(),
                         result->arch().empty() ? "arch unknown" : result->arch())];
  }
  std::vector<GpuEvaluations> out;
  for (const auto& [gpu, n] : counts) out.push_back({.gpu = gpu, .evaluations = n});
  std::stable_sort(out.begin(), out.end(),
                   [](const GpuEvaluations& a, const GpuEvaluations& b) { return a.evaluations > b.evaluations; });
  return out;
}

absl::StatusOr<std::vector<GpuEvaluations>> EvaluatedOn(const PopulationStore& store, const std::string& run_id,
                                                        const std::string& task_name) {
  absl::StatusOr<std::vector<v1::Candidate>> candidates = store.ListCandidates(run_id, task_name);
  if (!candidates.ok()) return candidates.status();
  std::vector<v1::EvalResult> results;
  for (const v1::Candidate& c : *candidates) {
    absl::StatusOr<v1::EvalResult> result = store.GetEvaluation(run_id, c.id());
    if (absl::IsNotFound(result.status())) continue;
    if (!result.ok()) return result.status();
    results.push_back(*std::move(result));
  }
  std::vector<const v1::EvalResult*> pointers;
  for (const v1::EvalResult& r : results) pointers.push_back(&r);
  return GpusOf(pointers);
}

}  // namespace sparseditto
