#include "coordinator/search/evaluation_job.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sparseditto {

v1::EvaluationJob MakeEvaluationJob(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                                    EvaluationKind kind, const v1::ScreenBar* bar) {
  v1::EvaluationJob job;
  *job.mutable_task() = task;
  *job.mutable_candidate() = candidate;
  job.set_check_seed(check_seed);
  job.set_finalist(kind == EvaluationKind::kFinalist);
  if (kind == EvaluationKind::kScreened) *job.mutable_screen() = bar != nullptr ? *bar : v1::ScreenBar();
  return job;
}

v1::EvalResult RunEvaluationJob(CandidateEvaluator& evaluator, const v1::EvaluationJob& job) {
  if (job.retime_baselines()) {
    if (absl::Status s = evaluator.RetimeBaselines(job.task()); !s.ok()) {
      return JobEndedWithoutResult(job, absl::StrCat("re-timing the baselines failed: ", s.message()));
    }
  }
  if (job.candidate().id().empty()) {  // a set-up job (the taker sets the task up before any job of it)
    v1::EvalResult done;
    done.set_task_name(job.task().name());
    return done;
  }
  v1::EvalResult result =
      job.finalist()     ? evaluator.EvaluateFinalist(job.task(), job.candidate(), job.check_seed())
      : job.has_screen() ? evaluator.EvaluateScreened(job.task(), job.candidate(), job.check_seed(), job.screen())
                         : evaluator.Evaluate(job.task(), job.candidate(), job.check_seed());
  result.set_candidate_id(job.candidate().id());
  result.set_task_name(job.task().name());
  return result;
}

v1::EvalResult JobEndedWithoutResult(const v1::EvaluationJob& job, const std::string& why) {
  v1::EvalResult result;
  result.set_candidate_id(job.candidate().id());
  result.set_task_name(job.task().name());
  result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
  result.set_failure_detail(why);
  return result;
}

}  // namespace sparseditto
