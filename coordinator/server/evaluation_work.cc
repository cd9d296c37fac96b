#include "coordinator/server/evaluation_work.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/ascii.h"
#include "coordinator/search/evaluation_job.h"
#include "coordinator/server/session_ids.h"
#include "fmt/format.h"
#include "task/arch_populations.h"

namespace sparseditto {

EvaluationWork::EvaluationWork(EvaluationWorkOptions options, const jobs::MonotonicClock* clock)
    : options_(std::move(options)),
      own_clock_(clock == nullptr ? std::make_unique<jobs::SteadyMonotonicClock>() : nullptr),
      clock_(clock != nullptr ? clock : own_clock_.get()),
      queue_(std::make_unique<Queue>(
          jobs::JobQueueOptions{.lease = options_.lease, .max_lost_attempts = options_.max_lost_attempts}, clock_)) {}

EvaluationWork::~EvaluationWork() { Close(); }

void EvaluationWork::Close() {
  {
    absl::MutexLock lock(&mutex_);
    closed_ = true;
  }
  queue_->Close();
}

std::string EvaluationWork::NewSessionIdLocked() {
  return NewSessionId([this](const std::string& id) ABSL_NO_THREAD_SAFETY_ANALYSIS { return sessions_.contains(id); });
}

absl::StatusOr<v1::RegisterWorkerResponse> EvaluationWork::Register(const v1::RegisterWorkerRequest& request) {
  const v1::WorkerInfo& worker = request.worker();
  if (worker.kind() != v1::WORKER_KIND_EVALUATOR) {
    return absl::InvalidArgumentError("worker.kind: this coordinator serves evaluation work to evaluators only");
  }
  if (worker.slots() < 1) return absl::InvalidArgumentError(fmt::format("worker.slots {} < 1", worker.slots()));
  if (worker.arch().empty()) return absl::InvalidArgumentError("worker.arch is empty (read it from the device)");
  const std::string& previous = request.previous_session_id();
  if (!previous.empty() && !WellFormedSessionId(previous)) {
    return absl::InvalidArgumentError("previous_session_id is not a session id this coordinator gives");
  }
  absl::MutexLock lock(&mutex_);
  if (closed_) return absl::FailedPreconditionError("the coordinator is draining: no new workers");
  const absl::Duration now = clock_->Now();
  ExpireSessionsLocked(now);
  // A reconnecting worker keeps its id, so the leases it holds stay its own and its reports count.
  const std::string id = previous.empty() ? NewSessionIdLocked() : previous;
  auto [it, inserted] = sessions_.try_emplace(id);
  if (inserted) it->second.order = next_order_++;
  if (options_.on_event && (inserted || it->second.worker.device().SerializeAsString() == worker.device().SerializeAsString())) {
    options_.on_event(fmt::format("evaluator {} ({}, {}, nvcc {}) {}", worker.name(), worker.gpu_name(), worker.arch(),
                                  worker.nvcc_version(), !inserted ? "is back" : previous.empty() ? "joined" : "joined again"));
  }
  it->second.worker = worker;
  it->second.platform = EvaluationPlatform(worker.arch(), worker.gpu_name());
  SeeLocked(it->first, it->second, now);
  // Served again: should it go, its absence is told again.
  told_.erase(it->second.platform);
  told_.erase(DeviceArchOf(worker.arch()));
  told_.erase("");  // a wait for a worker of any arch
  v1::RegisterWorkerResponse response;
  response.set_session_id(id);
  response.set_session_ttl_ms(Milliseconds(options_.session_ttl));
  response.set_heartbeat_interval_ms(Milliseconds(options_.heartbeat_interval));
  return response;
}

void EvaluationWork::SeeLocked(const std::string& id, Session& session, absl::Duration now) {
  if (session.seen) by_last_seen_.erase({session.last_seen, id});
  session.last_seen = now;
  session.seen = true;
  by_last_seen_.insert({now, id});
}

void EvaluationWork::ExpireSessionsLocked(absl::Duration now) {
  // Least recently seen first, and only those past the ttl: a call costs O(log sessions), not a walk
  // over every session (with thousands of workers that walk was a quarter of the server's CPU).
  while (!by_last_seen_.empty() && now - by_last_seen_.begin()->first >= options_.session_ttl) {
    const std::string id = by_last_seen_.begin()->second;
    by_last_seen_.erase(by_last_seen_.begin());
    auto it = sessions_.find(id);
    if (it == sessions_.end()) continue;
    // Its jobs' leases run out by themselves; only the jobs no one else may take must end now.
    if (auto pinned = pinned_jobs_.find(it->first); pinned != pinned_jobs_.end()) {
      for (const std::string& job_id : pinned->second) queue_->Cancel(job_id);
      pinned_jobs_.erase(pinned);
    }
    if (confirmation_session_ == it->first) confirmation_session_.clear();
    if (options_.on_event) {
      options_.on_event(fmt::format("evaluator {} gone (no call for {}); its jobs go to others when their leases end",
                                    it->second.worker.name(), absl::FormatDuration(options_.session_ttl)));
    }
    const std::string platform = it->second.platform;
    sessions_.erase(it);
    for (const auto& [population, its_platform] : population_platforms_) {
      if (its_platform == platform) {
        TellIfUnservedLocked(platform, "the jobs of its populations");
        break;
      }
    }
  }
}

absl::StatusOr<EvaluationWork::Session*> EvaluationWork::TouchLocked(const std::string& session_id) {
  const absl::Duration now = clock_->Now();
  ExpireSessionsLocked(now);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) {
    return absl::NotFoundError("unknown or ended session: register again (with previous_session_id to keep it)");
  }
  SeeLocked(it->first, it->second, now);
  return &it->second;
}

absl::StatusOr<v1::PullEvaluationJobsResponse> EvaluationWork::Pull(const v1::PullEvaluationJobsRequest& request) {
  if (request.max_jobs() < 1) return absl::InvalidArgumentError(fmt::format("max_jobs {} < 1", request.max_jobs()));
  if (request.wait_ms() < 0) return absl::InvalidArgumentError(fmt::format("wait_ms {} < 0", request.wait_ms()));
  std::string platform;
  {
    absl::MutexLock lock(&mutex_);
    absl::StatusOr<Session*> session = TouchLocked(request.session_id());
    if (!session.ok()) return session.status();
    platform = (*session)->platform;
  }
  const int max_jobs = std::min(request.max_jobs(), options_.max_jobs_per_pull);
  const absl::Duration wait = std::min(absl::Milliseconds(request.wait_ms()), options_.max_pull_wait);
  absl::StatusOr<std::vector<jobs::JobQueue<v1::EvaluationJob, v1::EvalResult>::Grant>> grants =
      queue_->Take(request.session_id(), platform, max_jobs, wait);
  if (!grants.ok()) return grants.status();
  // The grants are durable before they are sent (after a restart their holder still holds them): all
  // of this pull's in one synced write. Should it fail, they go back to the queue and none is sent.
  std::vector<std::string> granted;
  for (const auto& grant : *grants) granted.push_back(grant.job_id);
  absl::Status written = JournalAll(granted, [&](size_t i, v1::JournalJob& r) {
    r.set_state(v1::JOURNAL_JOB_STATE_LEASED);
    r.set_attempt((*grants)[i].attempt);
    r.add_holders(request.session_id());
  });
  if (!written.ok()) {
    for (const auto& grant : *grants) (void)queue_->Release(request.session_id(), grant.job_id, grant.attempt);
    return absl::UnavailableError(std::string(written.message()));
  }
  v1::PullEvaluationJobsResponse response;
  {
    absl::MutexLock lock(&mutex_);
    // The long poll counted as the worker's presence; a session that ended meanwhile (it cannot while
    // its own call is held for less than the ttl) would leave these grants to expire.
    if (auto it = sessions_.find(request.session_id()); it != sessions_.end()) {
      SeeLocked(it->first, it->second, clock_->Now());
      if (it->second.hint_seen < hint_generation_ && (hint_platform_.empty() || hint_platform_ == it->second.platform)) {
        it->second.hint_seen = hint_generation_;
        *response.mutable_prefetch_task() = hint_task_;
        for (const v1::Candidate& c : hint_) *response.add_prefetch() = c;
      }
    }
    response.set_draining(closed_);
  }
  for (auto& grant : *grants) {
    v1::EvaluationGrant* out = response.add_grants();
    *out->mutable_job() = std::move(grant.job);
    out->set_attempt(grant.attempt);
    out->set_lease_ms(Milliseconds(grant.lease));
  }
  return response;
}

absl::StatusOr<v1::HeartbeatResponse> EvaluationWork::Heartbeat(const v1::HeartbeatRequest& request) {
  {
    absl::MutexLock lock(&mutex_);
    if (absl::StatusOr<Session*> session = TouchLocked(request.session_id()); !session.ok()) return session.status();
  }
  return RenewHeldLeases(*queue_, request, options_.lease);
}

absl::StatusOr<v1::ReportEvaluationResponse> EvaluationWork::Report(const v1::ReportEvaluationRequest& request) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id is empty");
  {
    absl::MutexLock lock(&mutex_);
    if (absl::StatusOr<Session*> session = TouchLocked(request.session_id()); !session.ok()) return session.status();
  }
  {
    // A result must be the job's: its candidate and task (the worker's RunEvaluationJob names them).
    absl::MutexLock lock(&mutex_);
    auto subject = job_subjects_.find(request.job_id());
    if (subject != job_subjects_.end() && (request.result().candidate_id() != subject->second.candidate_id ||
                                           request.result().task_name() != subject->second.task_name)) {
      return absl::InvalidArgumentError(fmt::format(
          "result names candidate '{}' of task '{}', but job {} is candidate '{}' of task '{}'",
          request.result().candidate_id(), request.result().task_name(), request.job_id(),
          subject->second.candidate_id, subject->second.task_name));
    }
  }
  const jobs::ReportOutcome outcome =
      queue_->Report(request.session_id(), request.job_id(), request.attempt(), request.result());
  if (outcome == jobs::ReportOutcome::kAccepted) {
    // Durable before the worker hears it was accepted (and drops its copy). Should the write fail,
    // the worker keeps the result and reports again (a duplicate then; the search has it already).
    absl::Status written = Journal(request.job_id(), [&](v1::JournalJob& r) {
      r.set_state(v1::JOURNAL_JOB_STATE_DONE);
      *r.mutable_result() = request.result();
    });
    if (!written.ok()) return absl::UnavailableError(std::string(written.message()));
  }
  v1::ReportEvaluationResponse response;
  response.set_outcome(ReportOutcomeProto(outcome));
  return response;
}

absl::Status EvaluationWork::Release(const v1::ReleaseEvaluationRequest& request) {
  {
    absl::MutexLock lock(&mutex_);
    if (absl::StatusOr<Session*> session = TouchLocked(request.session_id()); !session.ok()) return session.status();
  }
  if (absl::Status s = queue_->Release(request.session_id(), request.job_id(), request.attempt()); !s.ok()) return s;
  return Journal(request.job_id(), [](v1::JournalJob& r) { r.set_state(v1::JOURNAL_JOB_STATE_PENDING); });
}

void EvaluationWork::Hint(const v1::Task& task, const std::vector<v1::Candidate>& candidates) {
  absl::MutexLock lock(&mutex_);
  hint_task_ = task;
  hint_platform_ = PlatformOfLocked(run_, task.name());
  hint_ = candidates;
  ++hint_generation_;
}

std::vector<v1::WorkerInfo> EvaluationWork::LiveWorkers() {
  absl::MutexLock lock(&mutex_);
  ExpireSessionsLocked(clock_->Now());
  std::vector<const Session*> live;
  for (const auto& [id, session] : sessions_) live.push_back(&session);
  std::sort(live.begin(), live.end(), [](const Session* a, const Session* b) { return a->order < b->order; });
  std::vector<v1::WorkerInfo> workers;
  for (const Session* s : live) workers.push_back(s->worker);
  return workers;
}

}  // namespace sparseditto
