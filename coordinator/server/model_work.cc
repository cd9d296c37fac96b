#include "coordinator/server/model_work.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/status_format.h"
#include "coordinator/server/session_ids.h"
#include "fmt/format.h"
#include "llm_mutator/chat_wire.h"

namespace sparseditto {
namespace {

std::string PlatformOf(const std::string& model) { return "model:" + model; }

llm::ChatResult Failed(llm::ChatOutcome outcome, std::string message) {
  llm::ChatResult r;
  r.outcome = outcome;
  r.message = std::move(message);
  return r;
}

// A model's client: its attempts go through the services of the model.
class RemoteModelClient final : public llm::ChatClient {
 public:
  RemoteModelClient(ModelWork* work, llm::ModelOptions model) : work_(work), model_(std::move(model)) {}
  llm::ChatResult Complete(const llm::ChatRequest& request) override {
    return work_->Complete(model_.name, request, absl::Seconds(model_.timeout_seconds));
  }

 private:
  ModelWork* work_;
  const llm::ModelOptions model_;
};

}  // namespace

ModelWork::ModelWork(ModelWorkOptions options, const jobs::MonotonicClock* clock)
    : options_(std::move(options)),
      own_clock_(clock == nullptr ? std::make_unique<jobs::SteadyMonotonicClock>() : nullptr),
      clock_(clock != nullptr ? clock : own_clock_.get()),
      queue_(std::make_unique<jobs::JobQueue<v1::ChatJob, v1::ChatAnswer>>(
          jobs::JobQueueOptions{.lease = options_.lease, .max_lost_attempts = options_.max_lost_attempts}, clock_)) {}

ModelWork::~ModelWork() { Close(); }

void ModelWork::Close() {
  {
    absl::MutexLock lock(&mutex_);
    closed_ = true;
  }
  queue_->Close();
}

void ModelWork::ExpireSessionsLocked(absl::Duration now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_seen < options_.session_ttl) {
      ++it;
      continue;
    }
    if (options_.on_event) {
      options_.on_event(fmt::format("mutator service {} for model {} gone (no call for {})", it->second.worker.name(),
                                    it->second.worker.model(), absl::FormatDuration(options_.session_ttl)));
    }
    it = sessions_.erase(it);
  }
}

absl::StatusOr<ModelWork::Session*> ModelWork::TouchLocked(const std::string& session_id) {
  const absl::Duration now = clock_->Now();
  ExpireSessionsLocked(now);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) {
    return absl::NotFoundError("unknown or ended session: register again (with previous_session_id to keep it)");
  }
  it->second.last_seen = now;
  return &it->second;
}

absl::StatusOr<v1::RegisterWorkerResponse> ModelWork::Register(const v1::RegisterWorkerRequest& request) {
  const v1::WorkerInfo& worker = request.worker();
  if (worker.kind() != v1::WORKER_KIND_MUTATOR) {
    return absl::InvalidArgumentError("worker.kind: this service takes mutator services only");
  }
  if (worker.model().empty()) return absl::InvalidArgumentError("worker.model is empty (the model it answers for)");
  if (worker.model().size() > 128) return absl::InvalidArgumentError("worker.model is longer than 128 bytes");
  if (worker.slots() < 1) return absl::InvalidArgumentError(fmt::format("worker.slots {} < 1", worker.slots()));
  const std::string& previous = request.previous_session_id();
  if (!previous.empty() && !WellFormedSessionId(previous)) {
    return absl::InvalidArgumentError("previous_session_id is not a session id this coordinator gives");
  }
  absl::MutexLock lock(&mutex_);
  if (closed_) return absl::FailedPreconditionError("the coordinator is draining: no new services");
  const absl::Duration now = clock_->Now();
  ExpireSessionsLocked(now);
  // A previous id is kept only while it is live: chat jobs are not journaled, so no lease outlives a
  // coordinator, and an unknown id gets a new one.
  const bool back = !previous.empty() && sessions_.contains(previous);
  const std::string id =
      back ? previous
           : NewSessionId([this](const std::string& s) ABSL_NO_THREAD_SAFETY_ANALYSIS { return sessions_.contains(s); });
  Session& session = sessions_[id];
  if (!back) session.order = next_order_++;
  session.worker = worker;
  session.last_seen = now;
  if (options_.on_event && !back) {
    options_.on_event(fmt::format("mutator service {} joined for model {} ({} at once)", worker.name(), worker.model(),
                                  worker.slots()));
  }
  v1::RegisterWorkerResponse response;
  response.set_session_id(id);
  response.set_session_ttl_ms(Milliseconds(options_.session_ttl));
  response.set_heartbeat_interval_ms(Milliseconds(options_.heartbeat_interval));
  return response;
}

absl::StatusOr<v1::PullChatJobsResponse> ModelWork::Pull(const v1::PullChatJobsRequest& request) {
  if (request.max_jobs() < 1) return absl::InvalidArgumentError(fmt::format("max_jobs {} < 1", request.max_jobs()));
  if (request.wait_ms() < 0) return absl::InvalidArgumentError(fmt::format("wait_ms {} < 0", request.wait_ms()));
  std::string platform;
  int slots = 1;
  {
    absl::MutexLock lock(&mutex_);
    absl::StatusOr<Session*> session = TouchLocked(request.session_id());
    if (!session.ok()) return session.status();
    platform = PlatformOf((*session)->worker.model());
    slots = (*session)->worker.slots();
  }
  const absl::Duration wait = std::min(absl::Milliseconds(request.wait_ms()), options_.max_pull_wait);
  auto grants = queue_->Take(request.session_id(), platform, std::min(request.max_jobs(), slots), wait);
  if (!grants.ok()) return grants.status();
  v1::PullChatJobsResponse response;
  {
    absl::MutexLock lock(&mutex_);
    if (auto it = sessions_.find(request.session_id()); it != sessions_.end()) it->second.last_seen = clock_->Now();
    response.set_draining(closed_);
  }
  for (auto& grant : *grants) {
    v1::ChatGrant* out = response.add_grants();
    *out->mutable_job() = std::move(grant.job);
    out->set_attempt(grant.attempt);
    out->set_lease_ms(Milliseconds(grant.lease));
  }
  return response;
}

absl::StatusOr<v1::HeartbeatResponse> ModelWork::Heartbeat(const v1::HeartbeatRequest& request) {
  {
    absl::MutexLock lock(&mutex_);
    if (absl::StatusOr<Session*> session = TouchLocked(request.session_id()); !session.ok()) return session.status();
  }
  return RenewHeldLeases(*queue_, request, options_.lease);
}

absl::StatusOr<v1::ReportChatResponse> ModelWork::Report(const v1::ReportChatRequest& request) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id is empty");
  {
    absl::MutexLock lock(&mutex_);
    if (absl::StatusOr<Session*> session = TouchLocked(request.session_id()); !session.ok()) return session.status();
  }
  v1::ReportChatResponse response;
  response.set_outcome(
      ReportOutcomeProto(queue_->Report(request.session_id(), request.job_id(), request.attempt(), request.answer())));
  return response;
}

llm::ChatResult ModelWork::Complete(const std::string& model, const llm::ChatRequest& request, absl::Duration timeout) {
  v1::ChatJob job;
  {
    absl::MutexLock lock(&mutex_);
    ExpireSessionsLocked(clock_->Now());
    const bool served = std::any_of(sessions_.begin(), sessions_.end(),
                                    [&](const auto& s) { return s.second.worker.model() == model; });
    if (!served) {
      return Failed(llm::ChatOutcome::kConnectionFailed,
                    fmt::format("no mutator service answers for model {} (start one: sparseditto mutator --coordinator "
                                "HOST:PORT --models FILE naming it)",
                                model));
    }
    job.set_job_id(fmt::format("chat-{}", next_job_++));
  }
  job.set_model(model);
  job.set_system(request.system);
  job.set_user(request.user);
  job.set_timeout_seconds(absl::ToDoubleSeconds(timeout));
  const std::string id = job.job_id();
  if (absl::Status s = queue_->Submit(id, PlatformOf(model), std::move(job)); !s.ok()) {
    return Failed(llm::ChatOutcome::kConnectionFailed, fmt::format("model {}: {}", model, s.message()));
  }
  auto outcome = queue_->Await(id, timeout + options_.pickup_wait);
  if (!outcome.ok()) {
    queue_->Cancel(id);
    return Failed(llm::ChatOutcome::kTimeout,
                  fmt::format("no answer from a mutator service of model {} within {}", model,
                              absl::FormatDuration(timeout + options_.pickup_wait)));
  }
  if (outcome->kind != jobs::OutcomeKind::kResult || !outcome->result.has_value()) {
    return Failed(llm::ChatOutcome::kConnectionFailed, fmt::format("model {}: {}", model, outcome->message));
  }
  return llm::ChatResultOf(*outcome->result);
}

llm::ClientFactory ModelWork::Factory() {
  return [this](const llm::ModelOptions& model) -> std::unique_ptr<llm::ChatClient> {
    return std::make_unique<RemoteModelClient>(this, model);
  };
}

std::vector<v1::WorkerInfo> ModelWork::LiveServices() {
  absl::MutexLock lock(&mutex_);
  ExpireSessionsLocked(clock_->Now());
  std::vector<std::pair<int64_t, v1::WorkerInfo>> ordered;
  for (const auto& [id, s] : sessions_) ordered.emplace_back(s.order, s.worker);
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<v1::WorkerInfo> out;
  for (auto& [order, w] : ordered) out.push_back(std::move(w));
  return out;
}

}  // namespace sparseditto
