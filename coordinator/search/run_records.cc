#include "coordinator/search/run_records.h"

#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/stored_search.h"
#include "coordinator/search/wall_clock.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

absl::Status OtherContent(const std::string& run_id, const v1::Task& task) {
  const std::string file =
      task.source_file().empty() ? "" : fmt::format(" than {}:{}", task.source_file(), task.source_line());
  return absl::InvalidArgumentError(fmt::format(
      "run {} holds task {} with other content{}; start a new run (--run NAME) or use the task as it was", run_id,
      task.name(), file));
}

// Whether a run's provenance says its results came from the tests' fake evaluator (cli/provenance.h).
bool ScoredByFakeEvaluator(const std::string& provenance_json) {
  const nlohmann::json p = nlohmann::json::parse(provenance_json, nullptr, /*allow_exceptions=*/false);
  return p.is_object() && p.contains("fake_evaluator");
}

}  // namespace

absl::Status RunRecords::EnsureRun(const std::string& project_revision, const std::string& provenance_json) {
  absl::StatusOr<store::RunRecord> run = store_.GetRun(run_id_);
  if (run.ok()) {
    // A run's provenance is written once, when it is made; what resumes it must score the same way, or
    // the run would hold measured and unmeasured results under one provenance.
    // (A caller that passes no provenance only makes sure the record exists: nothing to compare.)
    const bool stored_fake = ScoredByFakeEvaluator(run->provenance_json());
    if (!provenance_json.empty() && stored_fake != ScoredByFakeEvaluator(provenance_json)) {
      return absl::FailedPreconditionError(fmt::format(
          "run {} was scored by {}; resuming it with {} would mix measured and unmeasured results: start a new run "
          "(--run NAME){}",
          run_id_, stored_fake ? "the tests' fake evaluator" : "a GPU evaluator",
          stored_fake ? "a GPU evaluator" : "the tests' fake evaluator (SPARSEDITTO_FAKE_EVALUATOR_MS)",
          stored_fake ? "" : " or unset SPARSEDITTO_FAKE_EVALUATOR_MS"));
    }
    return absl::OkStatus();
  }
  if (!absl::IsNotFound(run.status())) return run.status();
  store::RunRecord record;
  record.set_run_id(run_id_);
  record.set_created_unix_ms(NowUnixMs());
  record.set_project_revision(project_revision);
  record.set_provenance_json(provenance_json);
  return store_.CreateRun(record);
}

absl::Status RunRecords::PutTasks(const std::vector<v1::Task>& tasks) {
  for (const v1::Task& task : tasks) {  // every task checked before any is stored
    absl::StatusOr<v1::Task> stored = store_.GetTask(run_id_, task.name());
    if (absl::IsNotFound(stored.status())) continue;
    if (!stored.ok()) return stored.status();
    if (SameTaskContent(*stored, task)) continue;
    v1::Task stored_rest = *stored;
    v1::Task given_rest = task;
    stored_rest.clear_budget();
    given_rest.clear_budget();
    if (SameTaskContent(stored_rest, given_rest)) {
      return absl::InvalidArgumentError(fmt::format(
          "run {} holds task {} with another budget (stored: {}; now: {}); resume with the budget it was started "
          "with (the task file's and the command line's --max-evaluations, --max-wall, --target-fitness, "
          "--stagnation) or start a new run (--run NAME)",
          run_id_, task.name(), stored->budget().ShortDebugString(), task.budget().ShortDebugString()));
    }
    return OtherContent(run_id_, task);
  }
  for (const v1::Task& task : tasks) {
    absl::Status s = store_.PutTask(run_id_, task);
    if (absl::IsAlreadyExists(s)) return OtherContent(run_id_, task);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<store::RunState>> TaskRecords::State() const {
  absl::StatusOr<store::RunState> state = store_.GetRunState(run_id_, task_name_);
  if (absl::IsNotFound(state.status())) return std::nullopt;
  if (!state.ok()) return state.status();
  return *std::move(state);
}

absl::StatusOr<v1::EvalResult> TaskRecords::Evaluation(const std::string& candidate_id) const {
  return store_.GetEvaluation(run_id_, candidate_id);
}

absl::StatusOr<std::vector<v1::Candidate>> TaskRecords::Candidates() const {
  return store_.ListCandidates(run_id_, task_name_);
}

void TaskRecords::Stamp(store::RunState* state) const {
  state->set_task_name(task_name_);
  state->set_updated_unix_ms(NowUnixMs());
}

absl::Status TaskRecords::BeginAttempt() {
  absl::StatusOr<std::optional<store::RunState>> state = State();
  if (!state.ok()) return state.status();
  store::RunState next;
  if (state->has_value()) {
    next = **state;
  } else {
    next.set_status(store::TASK_RUN_STATUS_PENDING);
  }
  next.set_attempts(next.attempts() + 1);
  return Write(std::move(next));
}

absl::Status TaskRecords::MarkFailed(const std::string& why) {
  absl::StatusOr<store::RunState> state = store_.GetRunState(run_id_, task_name_);
  if (!state.ok()) return state.status();
  state->set_status(store::TASK_RUN_STATUS_FAILED);
  state->set_status_detail(why);
  return Write(*std::move(state));
}

absl::Status TaskRecords::Write(store::RunState state) {
  Stamp(&state);
  return store_.PutRunState(run_id_, state);
}

absl::Status TaskRecords::CommitCandidates(const std::vector<v1::Candidate>& candidates, store::RunState state) {
  Stamp(&state);
  return store_.CommitCandidates(run_id_, candidates, state);
}

absl::Status TaskRecords::CommitEvaluation(const v1::EvalResult& result, store::RunState state) {
  Stamp(&state);
  return store_.CommitEvaluation(run_id_, result, state);
}

absl::StatusOr<std::optional<SearchSummary>> TaskRecords::FinishedEarlier(bool finalists) const {
  absl::StatusOr<StoredSearch> stored = ReadStoredSearch(store_, run_id_, task_name_);
  if (!stored.ok()) return stored.status();
  if (!stored->state || (stored->state->status() != store::TASK_RUN_STATUS_DONE &&
                         stored->state->status() != store::TASK_RUN_STATUS_BUDGET_EXHAUSTED) ||
      (finalists && !stored->state->finalist_done())) {
    return std::nullopt;
  }
  SearchSummary summary = RecordedSummary(stored->search, *stored->state);
  summary.stop_reason = "finished earlier";
  summary.resumed = true;
  return summary;
}

SearchSummary RecordedSummary(const coordinator::SearchState& search, const store::RunState& state) {
  SearchSummary s;
  s.best_candidate_id = search.best_candidate_id();
  s.best_fitness = search.best_fitness();
  s.evaluations = search.spent().evaluations();
  s.duplicates = search.spent().duplicates();
  s.stop_detail = state.status_detail();
  if (const store::FinalistAttempt* passed = PassedAttempt(state.finalist_attempts()); passed != nullptr) {
    s.finalist_candidate_id = passed->candidate_id();
  }
  s.finalists = DescribeFinalists(state.finalist_attempts());
  for (const coordinator::ExhaustedSpace& space : search.exhausted_spaces()) {
    s.exhausted_spaces.push_back(fmt::format("seed {}: all {} points of its tunable space proposed; no more built-in "
                                             "children of it", space.seed_name(), space.points()));
  }
  return s;
}

}  // namespace sparseditto
