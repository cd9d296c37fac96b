#include "coordinator/search/run_artifacts.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <vector>

#include "common/status_format.h"
#include "coordinator/search/stored_search.h"
#include "evaluator/report.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

absl::Status Unwritable(const fs::path& path, const std::string& why) {
  return absl::UnavailableError(fmt::format("cannot write {}: {}", path.string(), why));
}

// Temporary names beside a folder or file being replaced; RemoveLeftovers finds them by these markers.
constexpr std::string_view kTemporaryMarker = ".sparseditto-tmp-";
constexpr std::string_view kOldMarker = ".sparseditto-old-";

// Removes what a process killed while writing left in `dir` (ReplaceDirectory's temporary folders).
void RemoveLeftovers(const fs::path& dir) {
  std::error_code error;
  std::vector<fs::path> leftovers;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.find(kTemporaryMarker) != std::string::npos || name.find(kOldMarker) != std::string::npos) {
      leftovers.push_back(entry.path());
    }
  }
  for (const fs::path& p : leftovers) fs::remove_all(p, error);
}

// Builds `final_dir` in a fresh temporary sibling with `fill`, then renames it into place (over an
// existing folder: that one is renamed aside first and removed after).
absl::Status ReplaceDirectory(const fs::path& final_dir, const std::function<absl::Status(const fs::path&)>& fill) {
  std::error_code error;
  fs::create_directories(final_dir.parent_path(), error);
  if (error) return Unwritable(final_dir.parent_path(), error.message());
  const fs::path temporary = fmt::format("{}{}{}", final_dir.string(), kTemporaryMarker, getpid());
  const fs::path old = fmt::format("{}{}{}", final_dir.string(), kOldMarker, getpid());
  fs::remove_all(temporary, error);
  fs::create_directory(temporary, error);
  if (error) return Unwritable(temporary, error.message());
  if (absl::Status s = fill(temporary); !s.ok()) {
    fs::remove_all(temporary, error);
    return s;
  }
  const bool replacing = fs::exists(final_dir, error);
  if (replacing) {
    fs::remove_all(old, error);
    fs::rename(final_dir, old, error);
    if (error) return Unwritable(final_dir, error.message());
  }
  fs::rename(temporary, final_dir, error);
  if (error) return Unwritable(final_dir, error.message());
  if (replacing) fs::remove_all(old, error);
  return absl::OkStatus();
}

absl::Status WriteInto(const fs::path& dir, const std::string& name, const std::string& contents) {
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return Unwritable(dir / name, "write failed");
  return absl::OkStatus();
}

// <run_dir>/<task_name>/<parts...> through PathInside (task/run_paths.h), for a task name fit to name
// a task's folder: a store written before names were checked may hold one that is not.
absl::StatusOr<fs::path> TaskPath(const std::string& run_dir, const std::string& task_name,
                                  std::initializer_list<std::string_view> parts) {
  if (absl::Status s = CheckTaskName(task_name); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format("cannot write the files of a task in {}: {}", run_dir, s.message()));
  }
  std::vector<std::string_view> all = {task_name};
  all.insert(all.end(), parts.begin(), parts.end());
  switch (all.size()) {  // PathInside takes a braced list
    case 1: return PathInside(run_dir, {all[0]});
    case 2: return PathInside(run_dir, {all[0], all[1]});
    default: return PathInside(run_dir, {all[0], all[1], all[2]});
  }
}

// The best candidate's report: what it is, where it came from, and its full evaluation.
std::string BestReport(const StoredSearch& stored, const v1::Candidate& best, const v1::EvalResult& result) {
  nlohmann::ordered_json report;
  report["task"] = stored.task.name();
  report["candidate_id"] = best.id();
  report["fitness"] = result.fitness();
  report["seed"] = best.seed_name();
  report["mutator"] = best.mutator();
  report["model"] = best.model();
  report["parents"] = std::vector<std::string>(best.parent_ids().begin(), best.parent_ids().end());
  nlohmann::ordered_json tunables = nlohmann::ordered_json::object();
  for (const v1::Tunable& t : best.tunables()) tunables[t.name()] = t.value();
  report["tunables"] = tunables;
  report["evaluations_of_the_search"] = stored.search.spent().evaluations();
  report["result"] = nlohmann::ordered_json::parse(ResultToJson(result), nullptr, /*allow_exceptions=*/false);
  return report.dump(2) + "\n";
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const fs::path target(path);
  std::error_code error;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), error);
  if (error) return Unwritable(target.parent_path(), error.message());
  const fs::path temporary = fmt::format("{}{}{}", path, kTemporaryMarker, getpid());
  if (absl::Status s = WriteInto(temporary.parent_path(), temporary.filename().string(), contents); !s.ok()) {
    return s;
  }
  fs::rename(temporary, target, error);
  if (error) return Unwritable(target, error.message());
  return absl::OkStatus();
}

absl::Status WriteCandidateArtifacts(const PopulationStore& store, const std::string& run_id,
                                     const std::string& candidate_id, const std::string& run_dir) {
  absl::StatusOr<v1::Candidate> candidate = store.GetCandidate(run_id, candidate_id);
  if (!candidate.ok()) return candidate.status();
  absl::StatusOr<v1::EvalResult> result = store.GetEvaluation(run_id, candidate_id);
  if (!result.ok() && !absl::IsNotFound(result.status())) return result.status();
  absl::StatusOr<fs::path> dir = TaskPath(run_dir, candidate->task_name(), {"candidates", candidate_id});
  if (!dir.ok()) return dir.status();
  return ReplaceDirectory(*dir, [&](const fs::path& into) -> absl::Status {
    if (result.ok()) {
      if (absl::Status s = WriteArtifacts(into.string(), candidate->source(), *result); !s.ok()) return s;
    } else if (absl::Status s = WriteInto(into, "kernel.cu", candidate->source()); !s.ok()) {
      return s;
    }
    if (!candidate->prompt().empty()) {
      if (absl::Status s = WriteInto(into, "prompt.md", candidate->prompt()); !s.ok()) return s;
    }
    if (!candidate->response().empty()) {
      if (absl::Status s = WriteInto(into, "response.md", candidate->response()); !s.ok()) return s;
    }
    return absl::OkStatus();
  });
}

absl::Status WriteBestArtifacts(const PopulationStore& store, const std::string& run_id,
                                const std::string& task_name, const std::string& run_dir) {
  absl::StatusOr<fs::path> dir = TaskPath(run_dir, task_name, {"best"});
  if (!dir.ok()) return dir.status();
  absl::StatusOr<StoredSearch> stored = ReadStoredSearch(store, run_id, task_name);
  if (!stored.ok()) return stored.status();
  const std::string& best_id = stored->search.best_candidate_id();
  if (best_id.empty()) {
    std::error_code error;
    fs::remove_all(*dir, error);
    return absl::OkStatus();
  }
  absl::StatusOr<v1::Candidate> best = store.GetCandidate(run_id, best_id);
  if (!best.ok()) return best.status();
  absl::StatusOr<v1::EvalResult> result = store.GetEvaluation(run_id, best_id);
  if (!result.ok()) return result.status();
  return ReplaceDirectory(*dir, [&](const fs::path& into) -> absl::Status {
    if (absl::Status s = WriteInto(into, "kernel.cu", best->source()); !s.ok()) return s;
    return WriteInto(into, "report.json", BestReport(*stored, *best, *result));
  });
}

absl::Status WriteTaskArtifacts(const PopulationStore& store, const std::string& run_id,
                                const std::string& task_name, const std::string& run_dir) {
  absl::StatusOr<fs::path> task_dir = TaskPath(run_dir, task_name, {});
  if (!task_dir.ok()) return task_dir.status();
  absl::StatusOr<std::vector<v1::Candidate>> candidates = store.ListCandidates(run_id, task_name);
  if (!candidates.ok()) return candidates.status();
  RemoveLeftovers(*task_dir);
  RemoveLeftovers(*task_dir / "candidates");
  for (const v1::Candidate& c : *candidates) {
    if (absl::Status s = WriteCandidateArtifacts(store, run_id, c.id(), run_dir); !s.ok()) return s;
  }
  return WriteBestArtifacts(store, run_id, task_name, run_dir);
}

absl::Status WriteProvenance(const PopulationStore& store, const std::string& run_id, const std::string& run_dir) {
  absl::StatusOr<store::RunRecord> run = store.GetRun(run_id);
  if (!run.ok()) return run.status();
  nlohmann::ordered_json provenance = nlohmann::ordered_json::object();
  provenance["run"] = run->run_id();
  provenance["created_unix_ms"] = run->created_unix_ms();
  provenance["project_revision"] = run->project_revision();
  if (!run->provenance_json().empty()) {
    nlohmann::ordered_json recorded =
        nlohmann::ordered_json::parse(run->provenance_json(), nullptr, /*allow_exceptions=*/false);
    if (recorded.is_object()) {
      for (const auto& [key, value] : recorded.items()) provenance[key] = value;
    } else {
      provenance["provenance_text"] = run->provenance_json();  // not JSON: kept as written
    }
  }
  absl::StatusOr<fs::path> path = PathInside(run_dir, {"provenance.json"});
  if (!path.ok()) return path.status();
  return WriteFileAtomically(path->string(), provenance.dump(2) + "\n");
}

}  // namespace sparseditto

namespace sparseditto {

absl::StatusOr<std::unique_ptr<PopulationStore>> OpenRunStore(const std::string& run_dir,
                                                              const PopulationStoreOptions& options) {
  absl::StatusOr<fs::path> store = PathInside(run_dir, {"store"});
  if (!store.ok()) return store.status();
  absl::StatusOr<fs::path> provenance = PathInside(run_dir, {"provenance.json"});
  if (!provenance.ok()) return provenance.status();
  std::error_code error;
  if (options.create_if_missing && !fs::exists(*store, error) && fs::exists(*provenance, error)) {
    return absl::FailedPreconditionError(fmt::format(
        "the run folder {} holds an earlier run's files ({}) but its store {} is gone: the store is the "
        "run's truth, and a new one would silently start the run over. Restore {}, or move the run folder "
        "away to start a new run",
        run_dir, provenance->string(), store->string(), store->string()));
  }
  return PopulationStore::Open(store->string(), options);
}

}  // namespace sparseditto
