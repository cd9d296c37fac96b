#include "coordinator/server/run_reports.h"

#include <filesystem>

#include "coordinator/search/export_wrapper.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/kernel_export.h"
#include "coordinator/search/stored_search.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "population_store/population_store.h"
#include "task/arch_populations.h"

namespace sparseditto {
namespace {

std::string StateName(const StoredSearch& s) {
  if (!s.state) return "pending";
  switch (s.state->status()) {
    case store::TASK_RUN_STATUS_RUNNING: return "running";
    case store::TASK_RUN_STATUS_DONE: return "done";
    case store::TASK_RUN_STATUS_FAILED: return "failed";
    case store::TASK_RUN_STATUS_BUDGET_EXHAUSTED: return "budget_exhausted";
    default: return "pending";
  }
}

std::string StorePath(const std::string& run_dir) { return (std::filesystem::path(run_dir) / "store").string(); }

}  // namespace

absl::StatusOr<std::vector<v1::TaskStatus>> ReadTaskStatuses(
    const std::string& run_dir, const std::string& run, const google::protobuf::RepeatedPtrField<v1::Task>& tasks) {
  std::vector<v1::TaskStatus> out;
  std::unique_ptr<PopulationStore> store;
  if (std::filesystem::exists(StorePath(run_dir))) {
    auto opened = PopulationStore::OpenReadOnly(StorePath(run_dir));
    if (!opened.ok()) return opened.status();
    store = *std::move(opened);
  }
  for (const v1::Task& task : SplitByArch({tasks.begin(), tasks.end()})) {
    v1::TaskStatus& status = out.emplace_back();
    status.set_task_name(task.name());
    if (task.arch_size() == 1) status.set_arch(task.arch(0));
    status.set_max_evaluations(task.budget().max_evaluations());
    status.set_state("pending");
    if (store == nullptr) continue;
    absl::StatusOr<StoredSearch> s = ReadStoredSearch(*store, run, task.name());
    if (absl::IsNotFound(s.status())) continue;  // the run's store is made, this task not yet stored
    if (!s.ok()) return s.status();
    status.set_state(StateName(*s));
    if (s->state) status.set_state_detail(s->state->status_detail());
    status.set_evaluations(s->search.spent().evaluations());
    status.set_max_evaluations(s->task.budget().max_evaluations());
    status.set_best_candidate_id(s->search.best_candidate_id());
    status.set_best_fitness(s->search.best_fitness());
    if (s->state) status.set_finalists(DescribeFinalists(s->state->finalist_attempts()));
    if (auto candidates = store->ListCandidates(run, task.name()); candidates.ok()) {
      status.set_candidates(static_cast<int64_t>(candidates->size()));
    }
    absl::StatusOr<std::vector<GpuEvaluations>> gpus = EvaluatedOn(*store, run, task.name());
    if (!gpus.ok()) return gpus.status();
    for (const GpuEvaluations& g : *gpus) status.add_evaluated_on(fmt::format("{}: {}", g.gpu, g.evaluations));
  }
  return out;
}

absl::StatusOr<v1::ExportRunResponse> ExportRunKernels(const std::string& run_dir, const std::string& run,
                                                       const google::protobuf::RepeatedPtrField<v1::Task>& tasks) {
  if (!std::filesystem::exists(StorePath(run_dir))) {
    return absl::FailedPreconditionError(fmt::format("run {} has not started: nothing to export yet", run));
  }
  auto store = PopulationStore::OpenReadOnly(StorePath(run_dir));
  if (!store.ok()) return store.status();
  absl::StatusOr<store::RunRecord> record = (*store)->GetRun(run);
  if (!record.ok()) return record.status();
  v1::ExportRunResponse response;
  std::vector<ExportedFile> built;  // build.sh's files
  for (const v1::Task& task : SplitByArch({tasks.begin(), tasks.end()})) {
    absl::StatusOr<ExportedTask> text = ExportBestKernel(**store, *record, task.name());
    if (!text.ok()) {
      response.add_problems(fmt::format("{}: {}", task.name(), text.status().message()));
      continue;
    }
    v1::ExportedFile* file = response.add_files();
    file->set_name(task.name() + ".cu");
    file->set_content(std::move(text->cu));
    file = response.add_files();
    file->set_name(task.name() + ".h");
    file->set_content(std::move(text->declarations));
    built.push_back({task.name() + ".cu", std::move(text->nvcc_flags)});
  }
  if (!built.empty()) {
    v1::ExportedFile* script = response.add_files();
    script->set_name("build.sh");
    script->set_content(BuildScript(built));
  }
  return response;
}

}  // namespace sparseditto
