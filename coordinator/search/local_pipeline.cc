#include "coordinator/search/local_pipeline.h"

#include "fmt/format.h"

namespace sparseditto {
namespace {

// How long one Take waits before its taker looks again whether the queue closed (Close wakes it anyway).
constexpr absl::Duration kTakeWait = absl::Seconds(1);

jobs::JobQueueOptions LocalQueueOptions() {
  jobs::JobQueueOptions options;
  options.lease = absl::Hours(24);  // threads of this process: see the header
  return options;
}

std::string TakerId(size_t taker) { return fmt::format("local-{}", taker); }

}  // namespace

LocalEvaluationPipeline::LocalEvaluationPipeline(std::vector<CandidateEvaluator*> evaluators)
    : evaluators_(std::move(evaluators)), queue_(LocalQueueOptions()) {
  for (size_t i = 0; i < evaluators_.size(); ++i) takers_.emplace_back([this, i] { Take(i); });
}

LocalEvaluationPipeline::~LocalEvaluationPipeline() {
  queue_.Close();
  for (std::thread& taker : takers_) taker.join();
}

absl::StatusOr<v1::EvaluationJob> LocalEvaluationPipeline::Submit(v1::EvaluationJob job) {
  job.set_job_id(fmt::format("{}/{}", job.candidate().id(), ++jobs_submitted_));
  if (absl::Status s = queue_.Submit(job.job_id(), "", job); !s.ok()) return s;
  return job;
}

void LocalEvaluationPipeline::Hint(const v1::Task& task, const std::vector<v1::Candidate>& candidates) {
  absl::MutexLock lock(&hints_mutex_);
  hints_.emplace_back(task, candidates);
}

void LocalEvaluationPipeline::HandOverHints() {
  std::vector<std::pair<v1::Task, std::vector<v1::Candidate>>> hints;
  {
    absl::MutexLock lock(&hints_mutex_);
    hints.swap(hints_);
  }
  for (const auto& [task, candidates] : hints) evaluators_[0]->Prefetch(task, candidates);
}

void LocalEvaluationPipeline::Take(size_t taker) {
  const std::string me = TakerId(taker);
  while (true) {
    absl::StatusOr<std::vector<EvaluationQueue::Grant>> grants = queue_.Take(me, "", 1, kTakeWait);
    if (taker == 0) HandOverHints();  // before the job: its own compile may be among them
    if (!grants.ok()) return;  // not with these arguments
    if (grants->empty()) {
      if (queue_.Heartbeat(me).closing) return;
      continue;
    }
    for (EvaluationQueue::Grant& grant : *grants) {
      v1::EvalResult result = RunEvaluationJob(*evaluators_[taker], grant.job);
      // Leases outlast any evaluation here: accepted, or the job was cancelled (then a duplicate).
      (void)queue_.Report(me, grant.job_id, grant.attempt, std::move(result));
    }
  }
}

v1::EvalResult LocalEvaluationPipeline::Await(const v1::EvaluationJob& job) {
  absl::StatusOr<EvaluationQueue::Outcome> outcome = queue_.Await(job.job_id(), absl::InfiniteDuration());
  if (!outcome.ok()) {
    return JobEndedWithoutResult(job, fmt::format("evaluation job {}: {}", job.job_id(),
                                                  std::string(outcome.status().message())));
  }
  if (outcome->kind != jobs::OutcomeKind::kResult || !outcome->result.has_value()) {
    return JobEndedWithoutResult(job, outcome->message);
  }
  return *std::move(outcome->result);
}

}  // namespace sparseditto
