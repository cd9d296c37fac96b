// The end of the search loop (task_loop.h): the plan stage, the finalist stage and the final state.
#include <utility>

#include "common/status_format.h"
#include "coordinator/search/plan_stage.h"
#include "coordinator/search/task_loop.h"
#include "coordinator/search/wall_clock.h"
#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<SearchSummary> TaskLoop::Finish() {
  // Not once the finalist stage is over (a run finished before plans existed keeps its finalists).
  if (options_.plan_stage && !plan_done_ && !finalist_done_) {
    absl::StatusOr<bool> evaluated = RunPlanStage();
    if (!evaluated.ok()) return evaluated.status();
    if (!*evaluated) return Stop("interrupted");  // the plan is in flight, evaluated first next time
  }
  if (options_.max_finalists > 0 && !finalist_done_) {
    if (options_.stop_requested && options_.stop_requested()) return Stop("interrupted");
    auto evaluate = [this](const std::string& id) {
      if (options_.on_finalist) {
        options_.on_finalist({.task_name = task_.name(),
                              .candidate_id = id,
                              .attempt = finalist_attempts_.size() + 1,
                              .max_finalists = options_.max_finalists});
      }
      return EvaluateFinalistById(
          [this](const v1::Candidate& c) { return AwaitJob(c, EvaluationKind::kFinalist); }, candidates_, id);
    };
    auto store_attempts = [this]() -> absl::Status {
      if (absl::Status s = records_.Write(State("")); !s.ok()) return s;
      const store::FinalistAttempt& a = finalist_attempts_[finalist_attempts_.size() - 1];
      v1::EvalResult result;
      (void)result.ParseFromString(a.result());
      Emit({{"type", "finalist"},
            {"task", task_.name()},
            {"candidate", a.candidate_id()},
            {"attempt", finalist_attempts_.size()},
            {"passed", a.passed()},
            {"outcome", OutcomeName(result)},
            {"detail", result.failure_detail().substr(0, 2000)}});
      // The attempt is stored: a stop here loses nothing, and the resumed stage goes on after it.
      if (!a.passed() && options_.stop_requested && options_.stop_requested()) {
        return absl::CancelledError("stop requested");
      }
      return absl::OkStatus();
    };
    const std::vector<std::string> order = FinalistOrder(coordinator_->archive(), options_.max_finalists);
    if (absl::Status s = RunFinalistStage(order, evaluate, store_attempts, &finalist_attempts_); !s.ok()) {
      if (absl::IsCancelled(s)) return Stop("interrupted");
      return s;
    }
    finalist_done_ = true;
  }
  store::RunState final_state = State("");
  final_state.set_status_detail(coordinator_->ExplainStop());
  if (absl::Status s = records_.Write(final_state); !s.ok()) return s;
  return Stop(std::string(StopReasonName(coordinator_->CheckStop())));
}

absl::StatusOr<bool> TaskLoop::RunPlanStage() {
  plan_done_ = true;
  std::vector<v1::EvalResult> results;
  for (const auto& [id, candidate] : candidates_) {
    absl::StatusOr<v1::EvalResult> r = records_.Evaluation(id);
    if (r.ok()) {
      results.push_back(*std::move(r));
    } else if (!absl::IsNotFound(r.status())) {
      return r.status();
    }
  }
  const coordinator::Elite* best = coordinator_->archive().best();
  absl::StatusOr<std::optional<PlanProposal>> proposal =
      ProposePlan(task_, candidates_, results, best == nullptr ? 0 : best->fitness(), &plan_detail_);
  if (!proposal.ok()) return proposal.status();
  if (proposal->has_value()) {
    v1::Candidate plan = (*proposal)->candidate;
    plan.set_id(coordinator_->NextCandidateId());
    plan.set_island(0);
    plan.set_created_unix_ms(NowUnixMs());
    absl::StatusOr<bool> is_new = RegisterOrReuse(plan);
    if (!is_new.ok()) return is_new.status();
    if (*is_new) {
      candidates_[plan.id()] = plan;
      if (absl::Status s = records_.CommitCandidates({plan}, State(plan.id())); !s.ok()) return s;
      if (ShouldStop()) return false;
      if (absl::Status s = EvaluateAndCommit(plan); !s.ok()) return s;
      return true;
    }
  }
  if (absl::Status s = records_.Write(State("")); !s.ok()) return s;
  return true;
}

}  // namespace sparseditto
