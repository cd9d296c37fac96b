// Embedded mode's EvaluationPipeline (evaluation_pipeline.h): a JobQueue (coordinator/jobs/job_queue.h)
// and one taker thread per local evaluator, each pulling jobs and running them on its evaluator
// (RunEvaluationJob, evaluation_job.h), the way an evaluator node pulls from the coordinator in
// distributed mode. With one evaluator (one GPU) one job runs at a time; with k, k run at once and
// Slots() is k.
//
// Hints go to the first evaluator only, on its taker's thread before its next job: the evaluators of
// one machine share the compile cache on disk, so what the first compiles ahead the others find
// (a job another taker reaches before that compile ends is compiled there too: the same result).
//
// The takers are threads of this process, so their lease is long (one day): a taker cannot vanish
// while the process lives, and a shorter lease would only hand a long finalist evaluation to another
// taker while the first still runs it.
//
// Ownership: the evaluators are borrowed and must outlive this object; each is used by its taker's
// thread only (so none need be thread-safe), and by no one else while this object lives.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/jobs/job_queue.h"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/evaluation_job.h"
#include "coordinator/search/evaluation_pipeline.h"

namespace sparseditto {

using EvaluationQueue = jobs::JobQueue<v1::EvaluationJob, v1::EvalResult>;

class LocalEvaluationPipeline final : public EvaluationPipeline {
 public:
  // Starts one taker thread per evaluator. REQUIRES: at least one, none null.
  explicit LocalEvaluationPipeline(std::vector<CandidateEvaluator*> evaluators);
  // Closes the queue and joins the takers (each after the job it is running, if any; results not yet
  // awaited are dropped).
  ~LocalEvaluationPipeline() override;
  LocalEvaluationPipeline(const LocalEvaluationPipeline&) = delete;
  LocalEvaluationPipeline& operator=(const LocalEvaluationPipeline&) = delete;

  int Slots() const override { return static_cast<int>(evaluators_.size()); }
  // The job id is "<candidate id>/<jobs submitted so far>".
  absl::StatusOr<v1::EvaluationJob> Submit(v1::EvaluationJob job) override;
  void Hint(const v1::Task& task, const std::vector<v1::Candidate>& candidates) override;
  v1::EvalResult Await(const v1::EvaluationJob& job) override;

  // The queue's counts (every job submitted stays there: ended ones included).
  jobs::JobQueueStats QueueStats() { return queue_.Stats(); }

 private:
  void Take(size_t taker);  // taker thread `taker`'s loop, until the queue closes
  void HandOverHints();     // the first taker's, before each job

  const std::vector<CandidateEvaluator*> evaluators_;
  EvaluationQueue queue_;
  std::atomic<int64_t> jobs_submitted_{0};
  absl::Mutex hints_mutex_;
  std::vector<std::pair<v1::Task, std::vector<v1::Candidate>>> hints_ ABSL_GUARDED_BY(hints_mutex_);
  std::vector<std::thread> takers_;  // last: started once the rest is made, joined before it goes
};

}  // namespace sparseditto
