// The seam between the search loop and whatever evaluates its candidates: evaluations are jobs
// (proto/services.proto EvaluationJob, evaluation_job.h) the loop submits and later awaits, and takers
// pull from a job queue (coordinator/jobs/job_queue.h). Embedded mode's takers are threads over local
// evaluators (local_pipeline.h); in distributed mode an evaluator node is one more taker.
//
// The loop keeps up to Slots() jobs outstanding, submitted in its window's order, and awaits them in
// that same order, so the sequence of results it commits (and so every choice it makes) does not
// depend on which taker finished first.
// Thread-safety: implementations say. The loop calls from one thread, except that while a model's
// calls are in flight it awaits an evaluation on a helper thread and hints and submits from its own
// meanwhile (task_loop.h AwaitServing): Await must be safe to call concurrently with the other
// methods (LocalEvaluationPipeline's and EvaluationWork's are).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "services.pb.h"
#include "task.pb.h"

namespace sparseditto {

class EvaluationPipeline {
 public:
  virtual ~EvaluationPipeline() = default;
  // How many jobs its takers can run at once: more outstanding jobs than this only wait in the queue.
  // At least 1.
  virtual int Slots() const = 0;
  // Queues `job` for the takers under a job id of the pipeline's making (unique for its lifetime,
  // whoever submits: one pipeline may serve many calls of the loop), and returns the job as queued,
  // for Await. FailedPrecondition: the pipeline is closing. Nothing is queued on error.
  virtual absl::StatusOr<v1::EvaluationJob> Submit(v1::EvaluationJob job) = 0;
  // Submits each of `jobs`, in order, and answers each as Submit would: one answer per job, in the
  // same order (an error queues nothing of that job). A pipeline that makes its jobs durable may do so
  // for the whole batch at once (EvaluationWork: one synced journal write, so that a failed write fails
  // every job of the batch); this default submits them one by one.
  virtual std::vector<absl::StatusOr<v1::EvaluationJob>> SubmitAll(std::vector<v1::EvaluationJob> jobs) {
    std::vector<absl::StatusOr<v1::EvaluationJob>> answers;
    answers.reserve(jobs.size());
    for (v1::EvaluationJob& job : jobs) answers.push_back(Submit(std::move(job)));
    return answers;
  }
  // The candidates likely to be submitted next, in order, so that takers may prepare them (compile
  // them). Never changes a result; may be ignored.
  virtual void Hint(const v1::Task& task, const std::vector<v1::Candidate>& candidates) = 0;
  // Blocks until the submitted job `job_id` ends and returns its result; a job that ended without one
  // (its takers were lost too often, it was cancelled, the pipeline closed, an unknown id) gives an
  // INTERNAL failure result saying why (evaluation_job.h JobEndedWithoutResult), never a score.
  virtual v1::EvalResult Await(const v1::EvaluationJob& job) = 0;
};

}  // namespace sparseditto
