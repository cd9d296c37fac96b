#include "cli/run_folder.h"

#include <filesystem>

#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<RunFolder> FindRunFolder(const std::string& run, const std::string& runs_dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  for (const fs::path& dir : {fs::path(run), fs::path(runs_dir) / run}) {
    if (fs::is_directory(dir / "store", error)) {
      fs::path named = fs::weakly_canonical(dir, error);
      if (error) named = dir.lexically_normal();
      if (named.filename().empty()) named = named.parent_path();  // "runs/x/"
      return RunFolder{dir.string(), named.filename().string()};
    }
  }
  return absl::NotFoundError(fmt::format("no run '{}': neither {}/store nor {}/{}/store exists", run, run,
                                         runs_dir, run));
}

absl::StatusOr<store::RunRecord> FindRunRecord(const PopulationStore& store, const RunFolder& folder) {
  absl::StatusOr<store::RunRecord> named = store.GetRun(folder.run_id);
  if (!absl::IsNotFound(named.status())) return named;
  absl::StatusOr<std::vector<store::RunRecord>> runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  if (runs->size() == 1) return runs->front();
  std::vector<std::string> ids;
  for (const store::RunRecord& r : *runs) ids.push_back(r.run_id());
  return absl::NotFoundError(fmt::format("{} holds no run {} (it holds: {})", store.path(), folder.run_id,
                                         ids.empty() ? std::string("none") : fmt::format("{}", fmt::join(ids, ", "))));
}

absl::StatusOr<OpenedRun> OpenRun(const std::string& run, const std::string& runs_dir) {
  OpenedRun opened;
  absl::StatusOr<RunFolder> folder = FindRunFolder(run, runs_dir);
  if (!folder.ok()) return folder.status();
  opened.folder = *std::move(folder);
  absl::StatusOr<std::unique_ptr<PopulationStore>> store = PopulationStore::OpenReadOnly(opened.folder.store());
  if (!store.ok()) return store.status();
  opened.store = *std::move(store);
  absl::StatusOr<store::RunRecord> record = FindRunRecord(*opened.store, opened.folder);
  if (!record.ok()) return record.status();
  opened.record = *std::move(record);
  absl::StatusOr<std::vector<v1::Task>> tasks = opened.store->ListTasks(opened.record.run_id());
  if (!tasks.ok()) return tasks.status();
  opened.tasks = *std::move(tasks);
  return opened;
}

}  // namespace sparseditto
