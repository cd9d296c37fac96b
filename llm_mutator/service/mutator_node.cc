#include "llm_mutator/service/mutator_node.h"

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "common/status_format.h"
#include "fmt/format.h"
#include "llm_mutator/chat_wire.h"
#include "rpc/role_tokens.h"
#include "rpc/status_conversion.h"

namespace sparseditto::llm {
namespace {

constexpr int kReportTries = 5;

}  // namespace

MutatorNode::MutatorNode(std::shared_ptr<grpc::Channel> channel, ChatClient* client, MutatorNodeOptions options)
    : stub_(v1::MutatorWorkService::NewStub(std::move(channel))), client_(client), options_(std::move(options)) {}

std::unique_ptr<grpc::ClientContext> MutatorNode::Context(absl::Duration timeout) const {
  auto context = std::make_unique<grpc::ClientContext>();
  rpc::AttachToken(*context, options_.token);
  context->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return context;
}

void MutatorNode::Backoff(int* failures) {
  const absl::Duration base = std::min(options_.initial_backoff * (1 << std::min(*failures, 16)), options_.max_backoff);
  ++*failures;
  std::mt19937_64 rng(options_.jitter_seed * 1000003 + jitter_.fetch_add(1));
  const double share = 0.5 + std::uniform_real_distribution<double>(0, 0.5)(rng);  // 50-100%: no herd
  draining_.WaitForNotificationWithTimeout(base * share);
}

std::string MutatorNode::Session() const {
  absl::MutexLock lock(&mutex_);
  return session_id_;
}

absl::Status MutatorNode::Register() {
  absl::MutexLock one(&register_mutex_);
  {
    absl::MutexLock lock(&mutex_);
    if (!session_lost_ && !session_id_.empty()) return absl::OkStatus();  // another thread did it
  }
  int failures = 0;
  while (!draining()) {
    v1::RegisterWorkerRequest request;
    v1::WorkerInfo* worker = request.mutable_worker();
    worker->set_kind(v1::WORKER_KIND_MUTATOR);
    worker->set_name(options_.name);
    worker->set_model(options_.model);
    worker->set_slots(options_.concurrency);
    request.set_previous_session_id(Session());
    v1::RegisterWorkerResponse response;
    auto context = Context(options_.call_timeout);
    const absl::Status status = rpc::FromGrpcStatus(stub_->RegisterMutator(context.get(), request, &response));
    if (status.ok()) {
      absl::MutexLock lock(&mutex_);
      session_id_ = response.session_id();
      heartbeat_interval_ = std::max(absl::Milliseconds(response.heartbeat_interval_ms()), absl::Milliseconds(10));
      session_lost_ = false;
      ++counts_.registrations;
      return absl::OkStatus();
    }
    if (absl::IsInvalidArgument(status) && !request.previous_session_id().empty()) {
      absl::MutexLock lock(&mutex_);
      session_id_.clear();
      continue;
    }
    if (absl::IsFailedPrecondition(status)) {  // the coordinator is draining
      Drain();
      return absl::OkStatus();
    }
    if (rpc::IsPermanentRefusal(status)) return status;
    if (options_.on_event) options_.on_event(fmt::format("coordinator unreachable: {}", status.message()));
    Backoff(&failures);
  }
  return absl::OkStatus();
}

void MutatorNode::Report(const v1::ChatGrant& grant, const ChatResult& result) {
  v1::ReportChatRequest request;
  request.set_job_id(grant.job().job_id());
  request.set_attempt(grant.attempt());
  *request.mutable_answer() = ChatAnswerOf(result);
  int failures = 0;
  for (int tries = 0; tries < kReportTries; ++tries) {
    request.set_session_id(Session());
    v1::ReportChatResponse response;
    auto context = Context(options_.call_timeout);
    const absl::Status status = rpc::FromGrpcStatus(stub_->ReportChat(context.get(), request, &response));
    if (status.ok()) {
      absl::MutexLock lock(&mutex_);
      ++(response.outcome() == v1::REPORT_OUTCOME_ACCEPTED ? counts_.accepted : counts_.not_taken);
      return;
    }
    if (absl::IsNotFound(status)) {  // the coordinator restarted: the job is gone with it
      absl::MutexLock lock(&mutex_);
      session_lost_ = true;
      break;
    }
    if (rpc::IsPermanentRefusal(status)) break;
    Backoff(&failures);
  }
  absl::MutexLock lock(&mutex_);
  ++counts_.dropped;
}

void MutatorNode::Work() {
  int failures = 0;
  while (!draining()) {
    bool lost;
    {
      absl::MutexLock lock(&mutex_);
      lost = session_lost_;
    }
    if (lost) {
      if (absl::Status s = Register(); !s.ok()) {
        {
          absl::MutexLock lock(&mutex_);
          refused_ = s;
        }
        Drain();
        return;
      }
      continue;
    }
    v1::PullChatJobsRequest request;
    request.set_session_id(Session());
    request.set_max_jobs(1);
    request.set_wait_ms(absl::ToInt64Milliseconds(options_.pull_wait));
    v1::PullChatJobsResponse response;
    auto context = Context(options_.pull_wait + options_.call_timeout);
    {
      absl::MutexLock lock(&mutex_);
      if (draining()) break;
      polls_.insert(context.get());
    }
    const absl::Status status = rpc::FromGrpcStatus(stub_->PullChatJobs(context.get(), request, &response));
    {
      absl::MutexLock lock(&mutex_);
      polls_.erase(context.get());
    }
    if (draining() && !status.ok()) break;
    if (!status.ok()) {
      if (absl::IsNotFound(status)) {
        absl::MutexLock lock(&mutex_);
        session_lost_ = true;
        continue;
      }
      if (rpc::IsPermanentRefusal(status)) {
        {
          absl::MutexLock lock(&mutex_);
          refused_ = status;
        }
        Drain();
        return;
      }
      Backoff(&failures);
      continue;
    }
    failures = 0;
    for (const v1::ChatGrant& grant : response.grants()) {
      {
        absl::MutexLock lock(&mutex_);
        holding_.insert(grant.job().job_id());
      }
      const ChatResult result = client_->Complete({.system = grant.job().system(), .user = grant.job().user()});
      {
        absl::MutexLock lock(&mutex_);
        ++counts_.asked;
      }
      Report(grant, result);
      absl::MutexLock lock(&mutex_);
      holding_.erase(grant.job().job_id());
    }
    if (response.draining()) Drain();
  }
}

void MutatorNode::Heartbeats() {
  for (;;) {
    absl::Duration interval;
    v1::HeartbeatRequest request;
    {
      absl::MutexLock lock(&mutex_);
      interval = heartbeat_interval_;
    }
    if (draining_.WaitForNotificationWithTimeout(interval)) return;
    {
      absl::MutexLock lock(&mutex_);
      request.set_session_id(session_id_);
      for (const std::string& id : holding_) request.add_holding_job_ids(id);
    }
    v1::HeartbeatResponse response;
    auto context = Context(options_.call_timeout);
    const absl::Status status = rpc::FromGrpcStatus(stub_->HeartbeatMutator(context.get(), request, &response));
    if (absl::IsNotFound(status)) {
      absl::MutexLock lock(&mutex_);
      session_lost_ = true;
    }
    if (status.ok() && response.draining()) Drain();
  }
}

absl::Status MutatorNode::Run() {
  if (absl::Status s = Register(); !s.ok()) return s;
  if (options_.on_event) options_.on_event(fmt::format("answering for model {} ({} at once)", options_.model, options_.concurrency));
  std::thread heartbeats([this] { Heartbeats(); });
  std::vector<std::thread> workers;
  for (int i = 0; i < std::max(options_.concurrency, 1); ++i) workers.emplace_back([this] { Work(); });
  for (std::thread& t : workers) t.join();
  Drain();  // every puller stopped: stop the heartbeats too
  heartbeats.join();
  absl::MutexLock lock(&mutex_);
  return refused_;
}

void MutatorNode::Drain() {
  std::call_once(drain_once_, [this] { draining_.Notify(); });
  absl::MutexLock lock(&mutex_);
  for (grpc::ClientContext* poll : polls_) poll->TryCancel();  // a long poll would hold the drain for its wait
}

MutatorNodeCounts MutatorNode::counts() const {
  absl::MutexLock lock(&mutex_);
  return counts_;
}

}  // namespace sparseditto::llm
