// A batch: every task of a task file searched one after another in one run of one store, each with its
// own budget and time limit (its Budget: max_evaluations, max_wall_seconds, ...), with the run's files
// (run_artifacts.h) kept up to date from the store. The run record, the tasks and each task's state are
// written through RunRecords / TaskRecords (run_records.h), as the task loop writes them.
//
// A task with several archs is searched as one population per arch (task/arch_populations.h): a task
// "<task>@<arch>" of that arch only, with its own records, state, budget and best, searched in the
// order of the arch list; the outcome lists the populations. A population whose set-up lands on a device
// of another arch (the evaluator's Device() after SetUp; an arch of 0, unknown, is not checked) fails
// at once, not retried, naming the task and both archs: it is never timed on the wrong GPU, and the
// other populations go on. Embedded `sparseditto search` on an H200 thus searches the sm_90 / sm_90a
// populations and records the sm_80 one FAILED, saying where it can be searched.
//
// A task whose search ended in an earlier call (done, or its budget spent) is final: it is reported
// from the store (stop_reason "finished earlier") without setting up the evaluator or an attempt.
//
// Failures: a task whose search returns an error (the store failed, the evaluator could not set the
// task up, no seed is correct, ...) is retried, resuming from the store, up to its retry count; then it
// is recorded FAILED in the store (status_detail: the last error) and reported, and the batch goes on
// with the next task. An error marked NonRetryable (common/non_retryable.h: no NVIDIA driver, a task
// the runner refuses) is not retried: the task fails after that attempt, its error saying so. Retries do not stack: a task gets at most 1 + retries attempts in one call of
// RunBatchSearch, whatever failed and however often; calling RunBatchSearch again (running the command
// again) gives a failed task a new set of attempts. RunState.attempts counts every attempt ever begun.
//
// Events (search_events.h): each task's loop tells options.loop.events; a failed attempt is a
// "failure" event of category TASK_ATTEMPT. options.loop.stop_requested also ends the batch between
// tasks (the tasks not reached are not in the outcome).
//
// Errors of the batch as a whole (the returned status, before any task is searched): InvalidArgument
// for two tasks of one name, a task name that cannot name a folder of the run (CheckTaskName,
// task/run_paths.h: "..", "store", ...), or a task the run holds with other content (SameTaskContent, population_store.h); the
// store's errors while creating the run record or storing the tasks.
// Thread-safety: none; one thread runs a batch.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/llm_mutation.h"
#include "coordinator/search/search_loop.h"
#include "kernels/seed_library.h"
#include "population_store/population_store.h"
#include "task.pb.h"

namespace sparseditto {

struct BatchSearchOptions {
  SearchLoopOptions loop;  // its on_evaluation is replaced; use on_progress
  // Retries of a failed task per call: -1 (the default) takes each task's budget.max_retries (task
  // files default it to 1); 0 or more overrides it for every task (`sparseditto search --retries`).
  int max_retries = -1;
  // The run's folder (runs/<run>): artifacts are written there after each evaluation and each task;
  // empty: none are written.
  std::string run_dir;
  // Stored in the run record when the run is created (a resumed run keeps its first one), and written
  // as <run_dir>/provenance.json. JSON object text.
  std::string provenance_json;
  std::string project_revision;
  // Called after each committed evaluation (after its artifacts are written). May be empty.
  std::function<void(const SearchProgress&)> on_progress;
  // Makes the LLM mutators of a task that lists some (HasLlmMutators), once per attempt, asked after
  // loop.mutators; its error fails the attempt. Empty: LLM plans are served by loop.mutators or the
  // built-in mutator.
  std::function<absl::StatusOr<std::unique_ptr<LlmMutation>>(const v1::Task&)> make_llm;
};

struct TaskOutcome {
  std::string task_name;
  bool ok = false;
  int attempts = 0;                 // attempts made in this call
  std::vector<std::string> errors;  // one per failed attempt, in order
  SearchSummary summary;            // of the successful attempt
  std::string artifact_error;       // the first artifact that could not be written; the search goes on
};

struct BatchOutcome {
  std::vector<TaskOutcome> tasks;  // in the batch's order
  int failed() const;
};

absl::StatusOr<BatchOutcome> RunBatchSearch(PopulationStore& store, const std::string& run_id,
                                            const std::vector<v1::Task>& tasks,
                                            const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                                            const BatchSearchOptions& options);

}  // namespace sparseditto
