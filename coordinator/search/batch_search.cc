#include "coordinator/search/batch_search.h"

#include <chrono>
#include <optional>
#include <set>

#include "common/non_retryable.h"
#include "common/status_format.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/run_artifacts.h"
#include "coordinator/search/stored_search.h"
#include "coordinator/search/wall_clock.h"
#include "fmt/format.h"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

// The run record (kept as first stored when the run exists) and every task, checked before any search.
absl::Status PrepareRun(PopulationStore& store, const std::string& run_id, const std::vector<v1::Task>& tasks,
                        const BatchSearchOptions& options) {
  std::set<std::string> names;
  for (const v1::Task& task : tasks) {
    if (!names.insert(task.name()).second) {
      return absl::InvalidArgumentError(fmt::format("task {} appears twice in the batch", task.name()));
    }
    // Its name names its folder in the run (task/run_paths.h); the loader refuses such names already.
    if (absl::Status s = CheckTaskName(task.name()); !s.ok()) return s;
  }
  absl::StatusOr<store::RunRecord> run = store.GetRun(run_id);
  if (absl::IsNotFound(run.status())) {
    store::RunRecord record;
    record.set_run_id(run_id);
    record.set_created_unix_ms(NowUnixMs());
    record.set_project_revision(options.project_revision);
    record.set_provenance_json(options.provenance_json);
    if (absl::Status s = store.CreateRun(record); !s.ok()) return s;
  } else if (!run.ok()) {
    return run.status();
  }
  for (const v1::Task& task : tasks) {  // every task checked before any is stored
    absl::StatusOr<v1::Task> stored = store.GetTask(run_id, task.name());
    if (absl::IsNotFound(stored.status())) continue;
    if (!stored.ok()) return stored.status();
    if (!SameTaskContent(*stored, task)) {
      return absl::InvalidArgumentError(fmt::format(
          "run {} holds task {} with other content than {}:{}; start a new run (--run NAME)", run_id,
          task.name(), task.source_file(), task.source_line()));
    }
  }
  for (const v1::Task& task : tasks) {
    if (absl::Status s = store.PutTask(run_id, task); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The stored state with one more attempt begun (a fresh PENDING state when there is none).
absl::Status BeginAttempt(PopulationStore& store, const std::string& run_id, const std::string& task_name) {
  absl::StatusOr<store::RunState> state = store.GetRunState(run_id, task_name);
  if (!state.ok() && !absl::IsNotFound(state.status())) return state.status();
  store::RunState next;
  if (state.ok()) {
    next = *state;
  } else {
    next.set_task_name(task_name);
    next.set_status(store::TASK_RUN_STATUS_PENDING);
  }
  next.set_attempts(next.attempts() + 1);
  next.set_updated_unix_ms(NowUnixMs());
  return store.PutRunState(run_id, next);
}

// Records the task FAILED with `why`, keeping the coordinator state (a later run resumes from it).
absl::Status MarkFailed(PopulationStore& store, const std::string& run_id, const std::string& task_name,
                        const std::string& why) {
  absl::StatusOr<store::RunState> state = store.GetRunState(run_id, task_name);
  if (!state.ok()) return state.status();
  state->set_status(store::TASK_RUN_STATUS_FAILED);
  state->set_status_detail(why);
  state->set_updated_unix_ms(NowUnixMs());
  return store.PutRunState(run_id, *state);
}

// The summary of a task whose search ended in an earlier call (DONE or BUDGET_EXHAUSTED: final, as a
// stored task cannot change) and, when `finalists` is set, finished its finalist stage; or nullopt when
// it is still to run.
absl::StatusOr<std::optional<SearchSummary>> FinishedEarlier(const PopulationStore& store, const std::string& run_id,
                                                             const std::string& task_name, bool finalists) {
  absl::StatusOr<StoredSearch> stored = ReadStoredSearch(store, run_id, task_name);
  if (!stored.ok()) return stored.status();
  if (!stored->state || (stored->state->status() != store::TASK_RUN_STATUS_DONE &&
                         stored->state->status() != store::TASK_RUN_STATUS_BUDGET_EXHAUSTED) ||
      (finalists && !stored->state->finalist_done())) {
    return std::nullopt;
  }
  SearchSummary summary;
  summary.best_candidate_id = stored->search.best_candidate_id();
  summary.best_fitness = stored->search.best_fitness();
  summary.evaluations = stored->search.spent().evaluations();
  summary.duplicates = stored->search.spent().duplicates();
  summary.stop_reason = "finished earlier";
  summary.stop_detail = stored->state->status_detail();
  summary.resumed = true;
  const FinalistAttempts& attempts = stored->state->finalist_attempts();
  if (const store::FinalistAttempt* passed = PassedAttempt(attempts); passed != nullptr) {
    summary.finalist_candidate_id = passed->candidate_id();
  }
  summary.finalists = DescribeFinalists(attempts);
  return summary;
}

}  // namespace

int BatchOutcome::failed() const {
  int n = 0;
  for (const TaskOutcome& t : tasks) n += t.ok ? 0 : 1;
  return n;
}

absl::StatusOr<BatchOutcome> RunBatchSearch(PopulationStore& store, const std::string& run_id,
                                            const std::vector<v1::Task>& tasks,
                                            const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                                            const BatchSearchOptions& options) {
  if (absl::Status s = PrepareRun(store, run_id, tasks, options); !s.ok()) return s;
  BatchOutcome outcome;
  if (!options.run_dir.empty()) {
    if (absl::Status s = WriteProvenance(store, run_id, options.run_dir); !s.ok()) return s;
  }
  for (const v1::Task& task : tasks) {
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
    absl::StatusOr<std::optional<SearchSummary>> finished =
        FinishedEarlier(store, run_id, task.name(), options.loop.max_finalists > 0);
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
      if (absl::Status s = BeginAttempt(store, run_id, task.name()); !s.ok()) {
        summary = s;
      } else if (!llm.ok()) {
        summary = absl::Status(llm.status().code(), fmt::format("LLM mutators: {}", llm.status().message()));
      } else if (absl::Status s = evaluator.SetUp(task); !s.ok()) {
        summary = Reworded(s, fmt::format("set-up: {}", s.message()));  // keeps NonRetryable
      } else {
        summary = RunTaskSearch(store, run_id, task, seeds, evaluator, loop);
      }
      if (summary.ok()) {
        result.ok = true;
        result.summary = *std::move(summary);
      } else {
        result.errors.push_back(std::string(summary.status().message()));
        if (IsNonRetryable(summary.status())) {
          result.errors.back() += " (not retried: retrying cannot fix this)";
          break;
        }
      }
    }
    if (!result.ok) {
      // Best effort: a store that failed may refuse this too; the outcome reports the task either way.
      (void)MarkFailed(store, run_id, task.name(),
                       fmt::format("failed after {} attempts: {}", result.attempts, result.errors.back()));
    }
    if (!options.run_dir.empty()) note_artifact_error(WriteTaskArtifacts(store, run_id, task.name(), options.run_dir));
  }
  return outcome;
}

}  // namespace sparseditto
