// The one writer of a run's records in the population store: the run record, its tasks, each task's
// RunState, and the candidates and evaluations committed together with a RunState. The batch
// (batch_search.h) and the task loop (search_loop.h) both go through it, and so does the summary of a
// task read back from its records.
//
// What it guarantees:
//   - the run record is created once (created_unix_ms now; project revision and provenance as given
//     then) and kept as first stored afterwards;
//   - a run's tasks are all checked against the stored ones (SameTaskContent, population_store.h: a
//     moved task file is the same task) before any is stored, so a batch with one changed task stores
//     none of them;
//   - every RunState written carries its task's name and the time of the write (updated_unix_ms),
//     whatever the caller set there.
// Errors: the store's; InvalidArgument for a task the run holds with other content (naming the run, the
// task and the task file); NotFound from MarkFailed when the task has no state.
// Thread-safety: none; one thread per run (the store itself may be shared).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator.pb.h"
#include "coordinator/search/search_loop.h"
#include "eval_result.pb.h"
#include "population_store/population_store.h"
#include "store.pb.h"
#include "task.pb.h"

namespace sparseditto {

class RunRecords {
 public:
  // `store` is not owned and outlives this.
  RunRecords(PopulationStore& store, std::string run_id) : store_(store), run_id_(std::move(run_id)) {}

  const std::string& run_id() const { return run_id_; }

  // Creates the run record when the run has none. When it has one and `provenance_json` is given, a
  // FailedPrecondition if one of the two says the tests' fake evaluator scored it and the other does not.
  absl::Status EnsureRun(const std::string& project_revision = "", const std::string& provenance_json = "");
  // Stores every task, each checked against the stored one first.
  absl::Status PutTasks(const std::vector<v1::Task>& tasks);

 private:
  PopulationStore& store_;
  std::string run_id_;
};

// The records of one task of a run.
class TaskRecords {
 public:
  // `store` is not owned and outlives this.
  TaskRecords(PopulationStore& store, std::string run_id, std::string task_name)
      : store_(store), run_id_(std::move(run_id)), task_name_(std::move(task_name)) {}

  // The stored state; nullopt when the task has none (never attempted).
  absl::StatusOr<std::optional<store::RunState>> State() const;
  // A stored candidate's evaluation: NotFound when it has none.
  absl::StatusOr<v1::EvalResult> Evaluation(const std::string& candidate_id) const;
  // Every stored candidate of the task, in the store's order.
  absl::StatusOr<std::vector<v1::Candidate>> Candidates() const;

  // The stored state with one more attempt begun (a fresh PENDING state when there is none).
  absl::Status BeginAttempt();
  // The task FAILED with `why`, its coordinator state kept (a later run resumes from it).
  absl::Status MarkFailed(const std::string& why);
  // Writes `state` as the task's.
  absl::Status Write(store::RunState state);
  // `candidates` and `state` in one write.
  absl::Status CommitCandidates(const std::vector<v1::Candidate>& candidates, store::RunState state);
  // `result` and `state` in one write.
  absl::Status CommitEvaluation(const v1::EvalResult& result, store::RunState state);

  // The summary of a task whose search ended in an earlier call (DONE or BUDGET_EXHAUSTED: final, as a
  // stored task cannot change) and, when `finalists` is set, finished its finalist stage, with
  // stop_reason "finished earlier"; nullopt when it is still to run. DataLoss when the stored
  // coordinator state does not parse.
  absl::StatusOr<std::optional<SearchSummary>> FinishedEarlier(bool finalists) const;

 private:
  void Stamp(store::RunState* state) const;

  PopulationStore& store_;
  std::string run_id_;
  std::string task_name_;
};

// What a task's records say of its search: the best candidate, the evaluations and duplicates spent,
// the finalists and the exhausted spaces, from the coordinator's state `search` and the task's `state`;
// stop_detail is the state's status_detail. The fields of one call (evaluations_this_call, stop_reason,
// resumed, reevaluated_in_flight, plan, plan_candidate_id) are left for the caller.
SearchSummary RecordedSummary(const coordinator::SearchState& search, const store::RunState& state);

}  // namespace sparseditto
