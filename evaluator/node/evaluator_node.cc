#include "evaluator/node/evaluator_node.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "common/deterministic_bytes.h"
#include "coordinator/search/evaluation_job.h"
#include "fmt/format.h"
#include "rpc/status_conversion.h"

namespace sparseditto {
namespace {

// Calls the coordinator refuses for good: retrying them cannot help.
// Tries of the final flush when draining, a fixed wait apart: a coordinator that is gone for good must
// not keep a draining worker (a Kubernetes pod in its grace period) for ever.
constexpr int kDrainFlushTries = 5;

}  // namespace

EvaluatorNode::EvaluatorNode(CoordinatorLink* link, CandidateEvaluator* evaluator, ResultSpool* spool,
                             EvaluatorNodeOptions options)
    : link_(link),
      evaluator_(evaluator),
      spool_(spool),
      options_(std::move(options)),
      worker_(options_.worker),
      backoff_(options_.initial_backoff),
      jitter_(options_.jitter_seed != 0 ? options_.jitter_seed : std::random_device()()) {
  worker_.set_kind(v1::WORKER_KIND_EVALUATOR);
  worker_.set_slots(1);
}

EvaluatorNode::~EvaluatorNode() = default;

void EvaluatorNode::RequestDrain() {
  if (!drain_requested_.exchange(true)) drain_.Notify();
}

void EvaluatorNode::Drain() { RequestDrain(); }

EvaluatorNodeCounts EvaluatorNode::counts() const {
  absl::MutexLock lock(&mutex_);
  return counts_;
}

std::string EvaluatorNode::session() const {
  absl::MutexLock lock(&mutex_);
  return session_id_;
}

void EvaluatorNode::Backoff() {
  std::uniform_int_distribution<int64_t> draw(absl::ToInt64Microseconds(backoff_) / 2,
                                              absl::ToInt64Microseconds(backoff_));
  drain_.WaitForNotificationWithTimeout(absl::Microseconds(draw(jitter_)));
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
}

void EvaluatorNode::ResetBackoff() { backoff_ = options_.initial_backoff; }

absl::Status EvaluatorNode::RegisterLoop() {
  while (!draining()) {
    v1::RegisterWorkerRequest request;
    *request.mutable_worker() = worker_;
    request.set_previous_session_id(spool_->Session());
    absl::StatusOr<v1::RegisterWorkerResponse> reply = link_->Register(request);
    if (reply.ok()) {
      {
        absl::MutexLock lock(&mutex_);
        session_id_ = reply->session_id();
        heartbeat_interval_ = std::max(absl::Milliseconds(reply->heartbeat_interval_ms()), absl::Milliseconds(1));
        session_lost_ = false;
        ++counts_.registrations;
      }
      if (absl::Status s = spool_->SaveSession(reply->session_id()); !s.ok() && options_.on_event) {
        options_.on_event(std::string(s.message()));
      }
      if (options_.on_event) {
        options_.on_event(request.previous_session_id() == reply->session_id() ? "registered again (same session)"
                                                                               : "registered (new session)");
      }
      ResetBackoff();
      return absl::OkStatus();
    }
    if (absl::IsInvalidArgument(reply.status()) && !request.previous_session_id().empty()) {
      (void)spool_->SaveSession("");  // an id this coordinator does not take: start a new session
      continue;
    }
    if (absl::IsFailedPrecondition(reply.status())) {  // the coordinator is draining: nothing to do here
      RequestDrain();
      return absl::OkStatus();
    }
    if (rpc::IsPermanentRefusal(reply.status())) return reply.status();
    {
      absl::MutexLock lock(&mutex_);
      ++counts_.unreachable;
    }
    if (options_.on_event) options_.on_event(fmt::format("coordinator unreachable: {}", std::string(reply.status().message())));
    Backoff();
  }
  return absl::OkStatus();
}

void EvaluatorNode::HeartbeatLoop() {
  for (;;) {
    absl::Duration interval;
    std::string id;
    {
      absl::MutexLock lock(&mutex_);
      interval = heartbeat_interval_;
      id = session_id_;
    }
    if (stop_heartbeats_.WaitForNotificationWithTimeout(interval)) return;
    v1::HeartbeatRequest request;
    request.set_session_id(id);
    {
      absl::MutexLock lock(&mutex_);
      if (!running_job_.empty()) request.add_holding_job_ids(running_job_);
    }
    for (const v1::ReportEvaluationRequest& pending : spool_->Pending()) request.add_holding_job_ids(pending.job_id());
    absl::StatusOr<v1::HeartbeatResponse> reply = link_->Heartbeat(request);
    if (!reply.ok()) {
      if (absl::IsNotFound(reply.status())) {
        absl::MutexLock lock(&mutex_);
        session_lost_ = true;
      }
      continue;  // unreachable: the leases outlast several missed heartbeats
    }
    {
      absl::MutexLock lock(&mutex_);
      for (const std::string& stop : reply->stop_job_ids()) {
        if (stop == running_job_) stop_running_job_ = true;
      }
    }
    if (reply->draining()) RequestDrain();
  }
}

bool EvaluatorNode::FlushReports() {
  for (v1::ReportEvaluationRequest report : spool_->Pending()) {
    report.set_session_id(session());
    absl::StatusOr<v1::ReportEvaluationResponse> reply = link_->Report(report);
    if (absl::IsNotFound(reply.status())) {
      absl::MutexLock lock(&mutex_);
      session_lost_ = true;
      return false;
    }
    if (absl::IsInvalidArgument(reply.status())) {  // refused for good: keeping it would block the rest
      if (options_.on_event) options_.on_event(fmt::format("result of {} refused: {}", report.job_id(), std::string(reply.status().message())));
      spool_->Remove(report.job_id(), report.attempt());
      continue;
    }
    if (!reply.ok()) {
      absl::MutexLock lock(&mutex_);
      ++counts_.unreachable;
      return false;
    }
    spool_->Remove(report.job_id(), report.attempt());
    absl::MutexLock lock(&mutex_);
    switch (reply->outcome()) {
      case v1::REPORT_OUTCOME_ACCEPTED: ++counts_.accepted; break;
      case v1::REPORT_OUTCOME_DUPLICATE: ++counts_.duplicate; break;
      case v1::REPORT_OUTCOME_STALE: ++counts_.stale; break;
      default: ++counts_.not_held; break;
    }
  }
  return true;
}

void EvaluatorNode::TellDeviceFacts() {
  const DeviceFacts facts = evaluator_->Device();
  v1::DeviceFactsProto device;
  device.set_sm_count(facts.sm_count);
  device.set_smem_per_block(facts.smem_per_block);
  device.set_smem_per_sm(facts.smem_per_sm);
  device.set_arch(facts.arch);
  if (facts == DeviceFacts{} || device.SerializeAsString() == worker_.device().SerializeAsString()) return;
  *worker_.mutable_device() = device;
  v1::RegisterWorkerRequest request;
  *request.mutable_worker() = worker_;
  request.set_previous_session_id(session());
  (void)link_->Register(request);  // the same session, now with its facts; a failure only leaves them unknown
}

void EvaluatorNode::RunGrant(const v1::EvaluationGrant& grant) {
  const v1::EvaluationJob& job = grant.job();
  {
    absl::MutexLock lock(&mutex_);
    running_job_ = job.job_id();
    stop_running_job_ = false;
  }
  v1::EvalResult result;
  const std::string task_key = DeterministicBytes(job.task());
  absl::Status set_up = absl::OkStatus();
  if (task_key != set_up_task_) {
    set_up = evaluator_->SetUp(job.task());
    set_up_task_ = set_up.ok() ? task_key : "";
    if (set_up.ok()) TellDeviceFacts();
  }
  result = set_up.ok() ? RunEvaluationJob(*evaluator_, job)
                       : JobEndedWithoutResult(job, fmt::format("evaluator {} could not set up task {}: {}",
                                                                options_.worker.name(), job.task().name(),
                                                                std::string(set_up.message())));
  bool stopped = false;
  {
    absl::MutexLock lock(&mutex_);
    running_job_.clear();
    stopped = stop_running_job_;
    ++counts_.jobs_run;
    if (stopped) ++counts_.discarded;
  }
  if (stopped) return;  // cancelled, or its lease ran out and it went to another worker
  v1::ReportEvaluationRequest report;
  report.set_session_id(session());
  report.set_job_id(job.job_id());
  report.set_attempt(grant.attempt());
  *report.mutable_result() = std::move(result);
  if (absl::Status s = spool_->Put(report); !s.ok() && options_.on_event) options_.on_event(std::string(s.message()));
  FlushReports();
}

absl::Status EvaluatorNode::Run() {
  if (absl::Status s = RegisterLoop(); !s.ok()) return s;
  std::thread heartbeats([this] { HeartbeatLoop(); });
  absl::Status ended = absl::OkStatus();
  while (!draining()) {
    bool lost;
    {
      absl::MutexLock lock(&mutex_);
      lost = session_lost_;
    }
    if (lost) {
      if (ended = RegisterLoop(); !ended.ok()) break;
      continue;
    }
    if (!FlushReports()) {
      Backoff();
      continue;
    }
    v1::PullEvaluationJobsRequest request;
    request.set_session_id(session());
    request.set_max_jobs(1);
    request.set_wait_ms(absl::ToInt64Milliseconds(options_.pull_wait));
    absl::StatusOr<v1::PullEvaluationJobsResponse> reply = link_->Pull(request);
    if (!reply.ok()) {
      if (absl::IsNotFound(reply.status())) {
        absl::MutexLock lock(&mutex_);
        session_lost_ = true;
        continue;
      }
      if (rpc::IsPermanentRefusal(reply.status())) {
        ended = reply.status();
        break;
      }
      {
        absl::MutexLock lock(&mutex_);
        ++counts_.unreachable;
      }
      if (options_.on_event) options_.on_event(fmt::format("coordinator unreachable: {}", std::string(reply.status().message())));
      Backoff();
      continue;
    }
    ResetBackoff();
    if (reply->draining()) RequestDrain();
    if (reply->prefetch_size() > 0) {  // the search's window: compiled ahead, as in embedded mode
      evaluator_->Prefetch(reply->prefetch_task(), {reply->prefetch().begin(), reply->prefetch().end()});
    }
    for (const v1::EvaluationGrant& grant : reply->grants()) {
      if (draining()) {  // not started: give it back so another worker takes it at once
        v1::ReleaseEvaluationRequest release;
        release.set_session_id(session());
        release.set_job_id(grant.job().job_id());
        release.set_attempt(grant.attempt());
        (void)link_->Release(release);
        continue;
      }
      RunGrant(grant);
    }
  }
  for (int i = 0; i < kDrainFlushTries && !FlushReports(); ++i) absl::SleepFor(options_.initial_backoff);
  stop_heartbeats_.Notify();
  heartbeats.join();
  return ended;
}

}  // namespace sparseditto
