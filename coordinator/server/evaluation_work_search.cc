// EvaluationWork's search side (evaluation_work.h): the CandidateEvaluator and EvaluationPipeline that
// the embedded search code runs over when its evaluators are remote workers.
#include <algorithm>
#include <utility>

#include "common/deterministic_bytes.h"
#include "common/sha256.h"
#include "coordinator/search/evaluation_job.h"
#include "coordinator/server/evaluation_work.h"
#include "fmt/format.h"
#include "task/arch_populations.h"


namespace sparseditto {
namespace {

// How often an Await looks at the sessions: a pinned job whose worker went away is cancelled within
// about this long after its session ends, even when no worker calls in.
constexpr absl::Duration kAwaitPoll = absl::Seconds(1);

// 16 hex digits of the SHA-256 of the job's deterministic serialisation (its id cleared).
std::string ContentKey(const v1::EvaluationJob& job) { return Sha256Hex(DeterministicBytes(job)).substr(0, 16); }

}  // namespace

absl::Status EvaluationWork::SetUp(const v1::Task& task) {
  absl::ReleasableMutexLock lock(&mutex_);
  const std::string fixed = PlatformOfLocked(run_, task.name());
  // Told once per platform, or per device arch while none is fixed (Register forgets both).
  const std::string arch = task.arch().empty() ? "" : DeviceArchOf(task.arch(0));
  const std::string wanted = !fixed.empty() ? DescribePlatform(fixed) : arch.empty() ? "any arch" : arch;
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return closed_ || !OldestServingLocked(task).empty(); };
  if (!ready()) {
    TellOnceLocked(fixed.empty() ? arch : fixed,
                   fmt::format("no evaluator of {} is registered: task {} waits for one", wanted, task.name()));
  }
  if (!mutex_.AwaitWithTimeout(absl::Condition(&ready), options_.wait_for_workers)) {
    return absl::UnavailableError(fmt::format("task {}: no evaluator of {} registered within {}", task.name(), wanted,
                                              absl::FormatDuration(options_.wait_for_workers)));
  }
  if (closed_) return absl::FailedPreconditionError(fmt::format("task {}: the coordinator is draining", task.name()));
  if (fixed.empty()) {
    // The population's first set-up: its platform is that of the oldest worker that serves it.
    current_platform_ = sessions_.at(OldestServingLocked(task)).platform;
    population_platforms_[PopulationKey(run_, task.name())] = current_platform_;
    if (options_.on_event) {
      options_.on_event(fmt::format("task {}: evaluated on {} only (its jobs go to evaluators of that GPU model)",
                                    task.name(), DescribePlatform(current_platform_)));
    }
  } else {
    current_platform_ = fixed;
  }
  lock.Release();
  // A set-up job: the worker that takes it sets the task up (its baselines timed on its GPU) and tells
  // its device facts (by registering again) before answering, so that Device() knows them after.
  absl::StatusOr<v1::EvaluationJob> queued = SubmitOn(MakeEvaluationJob(task, v1::Candidate(), 0, EvaluationKind::kFull), "");
  if (!queued.ok()) return queued.status();
  const v1::EvalResult result = Await(*queued);
  if (result.failure() != v1::FAILURE_CATEGORY_NONE) {
    return absl::InternalError(fmt::format("task {}: set-up on an evaluator: {}", task.name(), result.failure_detail()));
  }
  return absl::OkStatus();
}

DeviceFacts EvaluationWork::Device() const {
  absl::MutexLock lock(&mutex_);
  const Session* oldest = nullptr;  // the oldest that knows its facts (they come with its first set-up)
  for (const auto& [id, session] : sessions_) {
    if (session.worker.device().sm_count() == 0) continue;
    if (!current_platform_.empty() && session.platform != current_platform_) continue;
    if (oldest == nullptr || session.order < oldest->order) oldest = &session;
  }
  if (oldest == nullptr) return {};
  const v1::DeviceFactsProto& d = oldest->worker.device();
  return {.sm_count = d.sm_count(), .smem_per_block = d.smem_per_block(), .smem_per_sm = d.smem_per_sm(),
          .arch = d.arch()};
}

absl::Status EvaluationWork::RetimeBaselines(const v1::Task& task) {
  std::string chosen;
  {
    absl::MutexLock lock(&mutex_);
    ExpireSessionsLocked(clock_->Now());
    // Of the population's platform: the candidates are compared on the GPU model they were searched on.
    chosen = OldestServingLocked(task);
    if (chosen.empty()) {
      const std::string platform = PlatformOfLocked(run_, task.name());
      return absl::UnavailableError(fmt::format("task {}: no evaluator of {} to re-time the baselines on", task.name(),
                                                platform.empty() ? "its arch" : DescribePlatform(platform)));
    }
    confirmation_session_ = chosen;
  }
  v1::EvaluationJob job = MakeEvaluationJob(task, v1::Candidate(), 0, EvaluationKind::kFull);
  job.set_retime_baselines(true);
  absl::StatusOr<v1::EvaluationJob> queued = SubmitOn(std::move(job), chosen);
  if (!queued.ok()) return queued.status();
  const v1::EvalResult result = Await(*queued);
  if (result.failure() != v1::FAILURE_CATEGORY_NONE) {
    return absl::InternalError(fmt::format("task {}: {}", task.name(), result.failure_detail()));
  }
  return absl::OkStatus();
}

v1::EvalResult EvaluationWork::EvaluateDirect(v1::EvaluationJob job) {
  std::string session;
  {
    absl::MutexLock lock(&mutex_);
    session = confirmation_session_;
  }
  absl::StatusOr<v1::EvaluationJob> queued = SubmitOn(job, session);
  if (!queued.ok()) return JobEndedWithoutResult(job, std::string(queued.status().message()));
  return Await(*queued);
}

v1::EvalResult EvaluationWork::Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) {
  return EvaluateDirect(MakeEvaluationJob(task, candidate, check_seed, EvaluationKind::kFull));
}

v1::EvalResult EvaluationWork::EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate,
                                                uint64_t check_seed, const v1::ScreenBar& bar) {
  return EvaluateDirect(MakeEvaluationJob(task, candidate, check_seed, EvaluationKind::kScreened, &bar));
}

v1::EvalResult EvaluationWork::EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate,
                                                uint64_t check_seed) {
  return EvaluateDirect(MakeEvaluationJob(task, candidate, check_seed, EvaluationKind::kFinalist));
}

int EvaluationWork::Slots() const {
  absl::MutexLock lock(&mutex_);
  int slots = 0;
  for (const auto& [id, session] : sessions_) {
    if (current_platform_.empty() || session.platform == current_platform_) slots += session.worker.slots();
  }
  return std::max(slots, 1);
}

void EvaluationWork::SetRun(const std::string& run) {
  absl::MutexLock lock(&mutex_);
  run_ = run;
}

absl::StatusOr<v1::EvaluationJob> EvaluationWork::Submit(v1::EvaluationJob job) { return SubmitOn(std::move(job), ""); }

std::vector<absl::StatusOr<v1::EvaluationJob>> EvaluationWork::SubmitAll(std::vector<v1::EvaluationJob> jobs) {
  return SubmitAllOn(std::move(jobs), "");
}

absl::StatusOr<v1::EvaluationJob> EvaluationWork::SubmitOn(v1::EvaluationJob job, const std::string& session_id) {
  std::vector<v1::EvaluationJob> one;
  one.push_back(std::move(job));
  return std::move(SubmitAllOn(std::move(one), session_id).front());
}

std::vector<absl::StatusOr<v1::EvaluationJob>> EvaluationWork::SubmitAllOn(std::vector<v1::EvaluationJob> jobs,
                                                                          const std::string& session_id) {
  std::string run;
  {
    absl::MutexLock lock(&mutex_);
    run = run_;
  }
  std::vector<std::string> contents;  // outside the lock: a hash of each job's bytes
  contents.reserve(jobs.size());
  for (v1::EvaluationJob& job : jobs) {
    job.clear_job_id();
    job.set_run(run);
    contents.push_back(ContentKey(job));
  }
  std::vector<absl::StatusOr<v1::EvaluationJob>> answers(jobs.size(), absl::UnknownError("not submitted"));
  std::vector<size_t> to_queue;           // indexes of the jobs to write and queue
  std::vector<v1::JournalJob> records;    // their records, in the same order
  {
    absl::MutexLock lock(&mutex_);
    for (size_t i = 0; i < jobs.size(); ++i) {
      v1::EvaluationJob& job = jobs[i];
      const std::string& candidate_id = job.candidate().id();
      const std::string label = !candidate_id.empty() ? candidate_id : job.retime_baselines() ? "baselines" : "setup";
      job.set_job_id(fmt::format("{}/{}.{}", label, contents[i], occurrences_[contents[i]]++));
      if (records_.contains(job.job_id())) {  // restored from the journal: take it over
        answers[i] = job;
        continue;
      }
      // Under mutex_, so that the session cannot end between this look and the pinning below.
      if (!session_id.empty() && !sessions_.contains(session_id)) {
        answers[i] = absl::UnavailableError("the evaluator chosen for the confirmation has gone");
        continue;
      }
      v1::JournalJob& record = records.emplace_back();
      record.set_sequence(next_sequence_++);
      record.set_job_id(job.job_id());
      // A population's jobs go to its platform's workers only; a pinned job to its one session.
      record.set_platform(session_id.empty() ? PlatformOfLocked(job.run(), job.task().name())
                                             : jobs::PinnedTo(session_id));
      *record.mutable_job() = job;
      if (journal_ != nullptr) records_[job.job_id()] = record;
      to_queue.push_back(i);
    }
  }
  // Durable before any of them can be pulled: the whole batch in one synced write, outside mutex_.
  if (journal_ != nullptr) {
    if (absl::Status s = journal_->WriteAll(records); !s.ok()) {
      absl::MutexLock lock(&mutex_);
      for (size_t k = 0; k < to_queue.size(); ++k) {
        records_.erase(records[k].job_id());
        answers[to_queue[k]] = absl::UnavailableError(std::string(s.message()));
      }
      return answers;
    }
  }
  absl::MutexLock lock(&mutex_);
  for (size_t k = 0; k < to_queue.size(); ++k) {
    v1::EvaluationJob& job = jobs[to_queue[k]];
    absl::StatusOr<v1::EvaluationJob>& answer = answers[to_queue[k]];
    if (!session_id.empty() && !sessions_.contains(session_id)) {
      answer = absl::UnavailableError("the evaluator chosen for the confirmation has gone");
      continue;
    }
    if (absl::Status s = queue_->Submit(job.job_id(), records[k].platform(), job); !s.ok()) {
      answer = s;
      continue;
    }
    if (session_id.empty()) TellIfUnservedLocked(records[k].platform(), fmt::format("the jobs of task {}", job.task().name()));
    job_subjects_[job.job_id()] = {.candidate_id = job.candidate().id(), .task_name = job.task().name()};
    if (!session_id.empty()) pinned_jobs_[session_id].insert(job.job_id());
    answer = std::move(job);
  }
  return answers;
}

v1::EvalResult EvaluationWork::Await(const v1::EvaluationJob& job) {
  for (;;) {
    absl::StatusOr<jobs::JobQueue<v1::EvaluationJob, v1::EvalResult>::Outcome> outcome =
        queue_->Await(job.job_id(), kAwaitPoll);
    if (absl::IsDeadlineExceeded(outcome.status())) {
      absl::MutexLock lock(&mutex_);
      ExpireSessionsLocked(clock_->Now());
      continue;
    }
    {
      absl::MutexLock lock(&mutex_);
      for (auto& [session, ids] : pinned_jobs_) ids.erase(job.job_id());
    }
    if (!outcome.ok()) {
      return JobEndedWithoutResult(job, absl::IsCancelled(outcome.status()) ? "the coordinator is draining"
                                                                            : std::string(outcome.status().message()));
    }
    if (outcome->kind == jobs::OutcomeKind::kResult && outcome->result.has_value()) return *outcome->result;
    (void)Journal(job.job_id(), [&](v1::JournalJob& r) {  // so that a restart does not run it again
      r.set_state(outcome->kind == jobs::OutcomeKind::kLost ? v1::JOURNAL_JOB_STATE_LOST
                                                            : v1::JOURNAL_JOB_STATE_CANCELLED);
      r.set_message(outcome->message);
    });
    return JobEndedWithoutResult(job, outcome->message);
  }
}

}  // namespace sparseditto
