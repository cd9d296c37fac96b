// An evaluation as a job (proto/services.proto EvaluationJob): what the search loop's evaluator asks
// for, carried by the job queue (coordinator/jobs/job_queue.h) to whatever takes it, and run there on
// a CandidateEvaluator. One function each way, shared by every taker (the local pipeline's thread,
// local_pipeline.h; an evaluator node in distributed mode), so a job means the same wherever it runs.
// Thread-safety: pure functions; RunEvaluationJob is as thread-safe as the evaluator it is given.
#pragma once

#include <cstdint>
#include <string>

#include "candidate.pb.h"
#include "coordinator/search/candidate_evaluator.h"
#include "eval_result.pb.h"
#include "runner.pb.h"
#include "services.pb.h"
#include "task.pb.h"

namespace sparseditto {

// What a job asks for: the whole cascade timed in full, with the timing screen against a bar, or with
// the finalist checks.
enum class EvaluationKind { kFull, kScreened, kFinalist };

// The job for `candidate` of `task`, with no id yet (the pipeline gives it one); `bar` is read only
// for kScreened.
v1::EvaluationJob MakeEvaluationJob(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                                    EvaluationKind kind, const v1::ScreenBar* bar = nullptr);

// Runs `job` on `evaluator`: EvaluateFinalist (finalist), EvaluateScreened (a screen bar) or Evaluate,
// after RetimeBaselines when the job asks (its failure is the job's INTERNAL result). A job with no
// candidate evaluates nothing: an empty result, failure NONE (a distributed set-up or re-timing job;
// the worker sets the task up before any job of it).
// The result names the job's candidate and task whatever the evaluator set.
v1::EvalResult RunEvaluationJob(CandidateEvaluator& evaluator, const v1::EvaluationJob& job);

// The result of a job that ended without one (its takers were lost, or it was cancelled): an INTERNAL
// failure of the job's candidate, `why` as its detail. Not the candidate's fault, and so never a score.
v1::EvalResult JobEndedWithoutResult(const v1::EvaluationJob& job, const std::string& why);

}  // namespace sparseditto
