#include "coordinator/search/batch_search.h"

#include <chrono>
#include <optional>
#include <set>

#include "common/non_retryable.h"
#include "common/status_format.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/run_artifacts.h"
#include "coordinator/search/run_records.h"
#include "fmt/format.h"
#include "task/arch_populations.h"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

// The batch's tasks checked (names), then the run record (kept as first stored when the run exists) and
// every task (all checked before any is stored).
absl::Status PrepareRun(RunRecords& records, const std::vector<v1::Task>& tasks, const BatchSearchOptions& options) {
  std::set<std::string> names;
  for (const v1::Task& task : tasks) {
    if (!names.insert(task.name()).second) {
      return absl::InvalidArgumentError(fmt::format("task {} appears twice in the batch", task.name()));
    }
    // Its name names its folder in the run (task/run_paths.h); the loader refuses such names already.
    if (absl::Status s = CheckTaskName(task.name()); !s.ok()) return s;
  }
  if (absl::Status s = records.EnsureRun(options.project_revision, options.provenance_json); !s.ok()) return s;
  return records.PutTasks(tasks);
}

// The task's set-up is refused when the device the evaluator set it up on is of another arch than the
// task's (arch_populations.h): its population would be timed on the wrong GPU. Not retried.
absl::Status SetUpOnItsArch(CandidateEvaluator& evaluator, const v1::Task& task) {
  if (absl::Status s = evaluator.SetUp(task); !s.ok()) return s;
  const DeviceFacts device = evaluator.Device();
  if (device.arch == 0) return absl::OkStatus();  // the evaluator does not say (a fake, a test seam)
  return NonRetryable(CheckDeviceServesTask(task, fmt::format("sm_{}", device.arch), ""));
}

}  // namespace

int BatchOutcome::failed() const {
  int n = 0;
  for (const TaskOutcome& t : tasks) n += t.ok ? 0 : 1;
  return n;
}

absl::StatusOr<BatchOutcome> RunBatchSearch(PopulationStore& store, const std::string& run_id,
                                            const std::vector<v1::Task>& tasks_given,
                                            const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                                            const BatchSearchOptions& options) {
  const std::vector<v1::Task> tasks = SplitByArch(tasks_given);  // one population per arch
  RunRecords records(store, run_id);
  if (absl::Status s = PrepareRun(records, tasks, options); !s.ok()) return s;
  BatchOutcome outcome;
  if (!options.run_dir.empty()) {
    if (absl::Status s = WriteProvenance(store, run_id, options.run_dir); !s.ok()) return s;
  }
  for (const v1::Task& task : tasks) {
    // A stop asked for (a signal) ends the batch between tasks too: the tasks after stay as stored.
    if (options.loop.stop_requested && options.loop.stop_requested()) break;
    TaskOutcome& result = outcome.tasks.emplace_back();
    result.task_name = task.name();
    auto note_artifact_error = [&](const absl::Status& s) {
      if (!s.ok() && result.artifact_error.empty()) result.artifact_error = std::string(s.message());
    };
    SearchLoopOptions loop = options.loop;
    loop.on_evaluation = [&](const SearchProgress& progress) {
      if (!options.run_dir.empty()) {
        note_artifact_error(WriteCandidateArtifacts(store, run_id, progress.candidate_id, options.run_dir));
        note_artifact_error(WriteBestArtifacts(store, run_id, task.name(), options.run_dir));
      }
      if (options.on_progress) options.on_progress(progress);
    };
    TaskRecords task_records(store, run_id, task.name());
    absl::StatusOr<std::optional<SearchSummary>> finished = task_records.FinishedEarlier(options.loop.max_finalists > 0);
    if (finished.ok() && finished->has_value()) {
      result.ok = true;
      result.summary = **finished;
    }
    const int retries = options.max_retries >= 0 ? options.max_retries : task.budget().max_retries();
    for (int attempt = 0; attempt <= retries && !result.ok; ++attempt) {
      ++result.attempts;
      absl::StatusOr<SearchSummary> summary = absl::UnknownError("not run");
      absl::StatusOr<std::unique_ptr<Mutator>> llm = std::unique_ptr<Mutator>();
      if (options.make_llm && HasLlmMutators(task)) llm = options.make_llm(task);
      loop.mutators = options.loop.mutators;
      if (llm.ok() && *llm != nullptr) loop.mutators.push_back(llm->get());
      if (absl::Status s = task_records.BeginAttempt(); !s.ok()) {
        summary = s;
      } else if (!llm.ok()) {
        summary = absl::Status(llm.status().code(), fmt::format("LLM mutators: {}", llm.status().message()));
      } else if (absl::Status s = SetUpOnItsArch(evaluator, task); !s.ok()) {
        summary = Reworded(s, fmt::format("set-up: {}", s.message()));  // keeps NonRetryable
      } else {
        summary = RunTaskSearch(store, run_id, task, seeds, evaluator, loop);
      }
      if (summary.ok()) {
        result.ok = true;
        result.summary = *std::move(summary);
      } else {
        result.errors.push_back(std::string(summary.status().message()));
        if (options.loop.events != nullptr) {
          options.loop.events->Emit({{"type", "failure"},
                                     {"task", task.name()},
                                     {"candidate", ""},
                                     {"category", "TASK_ATTEMPT"},
                                     {"stage", ""},
                                     {"attempt", result.attempts},
                                     {"detail", result.errors.back().substr(0, 2000)}});
        }
        if (IsNonRetryable(summary.status())) {
          result.errors.back() += " (not retried: retrying cannot fix this)";
          break;
        }
      }
    }
    if (!result.ok) {
      // Best effort: a store that failed may refuse this too; the outcome reports the task either way.
      (void)task_records.MarkFailed(fmt::format("failed after {} attempts: {}", result.attempts, result.errors.back()));
    }
    if (!options.run_dir.empty()) note_artifact_error(WriteTaskArtifacts(store, run_id, task.name(), options.run_dir));
  }
  return outcome;
}

}  // namespace sparseditto
