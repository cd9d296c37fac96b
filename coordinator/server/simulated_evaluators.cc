#include "coordinator/server/simulated_evaluators.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "evaluator/node/grpc_coordinator_link.h"
#include "fmt/format.h"
#include "grpcpp/create_channel.h"
#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"

namespace sparseditto {
namespace {

constexpr absl::Duration kCallTimeout = absl::Seconds(10);  // as GrpcCoordinatorLinkOptions' default
constexpr auto kRetryAfter = std::chrono::milliseconds(100);
constexpr int kRegisterThreads = 4;

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The submit time a load job's candidate id carries ("bench-<n>-<steady ns>"); nullopt for another id.
std::optional<std::chrono::steady_clock::time_point> SubmitTime(const std::string& candidate_id) {
  int64_t ns = 0;
  const size_t dash = candidate_id.rfind('-');
  if (dash == std::string::npos || !absl::SimpleAtoi(candidate_id.substr(dash + 1), &ns)) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

std::unique_ptr<grpc::ClientContext> Context(const std::string& token, absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  rpc::AttachToken(*context, token);
  rpc::SetDeadline(*context, timeout);
  return context;
}

// One call in flight: its context, request and response live until its callback has run.
template <typename Request, typename Response>
struct Call {
  std::unique_ptr<grpc::ClientContext> context;
  Request request;
  Response response;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

}  // namespace

struct SimulatedEvaluators::Sim {
  int index = 0;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::WorkerService::Stub> stub;
  std::string session_id;
  std::chrono::milliseconds heartbeat_interval{10000};

  absl::Mutex mutex;
  std::mt19937_64 rng ABSL_GUARDED_BY(mutex);
  bool killed ABSL_GUARDED_BY(mutex) = false;
  bool done ABSL_GUARDED_BY(mutex) = false;  // told draining, or its session is gone
  bool holding ABSL_GUARDED_BY(mutex) = false;
  int64_t generation ABSL_GUARDED_BY(mutex) = 0;  // +1 for each job taken
  int64_t reported ABSL_GUARDED_BY(mutex) = 0;    // the generation whose report was last sent
  v1::EvaluationGrant grant ABSL_GUARDED_BY(mutex);
  Clock::time_point renewed ABSL_GUARDED_BY(mutex);  // when the lease was last granted or renewed
  std::chrono::milliseconds lease{0};
  grpc::ClientContext* pull ABSL_GUARDED_BY(mutex) = nullptr;  // the long poll in flight
};

SimulatedEvaluators::SimulatedEvaluators(SimulatedEvaluatorsOptions options) : options_(std::move(options)) {}

SimulatedEvaluators::~SimulatedEvaluators() { Stop(); }

absl::Status SimulatedEvaluators::Start() {
  for (int i = 0; i < options_.count; ++i) {
    auto sim = std::make_unique<Sim>();
    sim->index = i;
    grpc::ChannelArguments args = rpc::MakeChannelArguments({});
    args.SetInt("sparseditto.simulated_evaluator", i);  // a channel (and connection) of its own
    sim->channel = grpc::CreateCustomChannel(options_.address, grpc::InsecureChannelCredentials(), args);
    sim->stub = v1::WorkerService::NewStub(sim->channel);
    absl::MutexLock lock(&sim->mutex);
    sim->rng.seed(options_.seed * 1000003 + static_cast<uint64_t>(i));
    sims_.push_back(std::move(sim));
  }
  absl::Mutex error_mutex;
  absl::Status first_error;
  std::vector<std::thread> registrars;
  for (int t = 0; t < kRegisterThreads; ++t) {
    registrars.emplace_back([&, t] {
      for (size_t i = t; i < sims_.size(); i += kRegisterThreads) {
        Sim& sim = *sims_[i];
        GrpcCoordinatorLink link(sim.channel, {.token = options_.token});
        v1::RegisterWorkerRequest request;
        request.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR);
        request.mutable_worker()->set_name(fmt::format("sim-{}", i));
        request.mutable_worker()->set_arch("sm_90");
        request.mutable_worker()->set_slots(1);
        absl::StatusOr<v1::RegisterWorkerResponse> response = link.Register(request);
        if (!response.ok()) {
          absl::MutexLock lock(&error_mutex);
          if (first_error.ok()) first_error = response.status();
          continue;
        }
        sim.session_id = response->session_id();
        sim.heartbeat_interval = std::chrono::milliseconds(std::max<int64_t>(response->heartbeat_interval_ms(), 10));
      }
    });
  }
  for (std::thread& t : registrars) t.join();
  if (!first_error.ok()) return first_error;
  timer_ = std::thread([this] { TimerLoop(); });
  std::mt19937_64 spread(options_.seed);
  for (auto& sim : sims_) {
    // The first heartbeat somewhere in the interval, so that N workers do not beat in step.
    std::uniform_int_distribution<int64_t> offset(0, sim->heartbeat_interval.count());
    Schedule({Clock::now() + std::chrono::milliseconds(offset(spread)), sim->index, EventKind::kHeartbeat, 0});
    StartPull(*sim);
  }
  return absl::OkStatus();
}

void SimulatedEvaluators::Schedule(Event event) {
  absl::MutexLock lock(&timer_mutex_);
  events_.push_back(event);
  std::push_heap(events_.begin(), events_.end(), std::greater<>());
}

void SimulatedEvaluators::TimerLoop() {
  for (;;) {
    std::vector<Event> due;
    {
      absl::MutexLock lock(&timer_mutex_);
      if (stopping_) return;
      const Clock::time_point now = Clock::now();
      while (!events_.empty() && events_.front().at <= now) {
        std::pop_heap(events_.begin(), events_.end(), std::greater<>());
        due.push_back(events_.back());
        events_.pop_back();
      }
      if (due.empty()) {
        const auto wait = events_.empty() ? std::chrono::milliseconds(10)
                                          : std::min<Clock::duration>(events_.front().at - now, std::chrono::milliseconds(10));
        timer_mutex_.AwaitWithTimeout(absl::Condition(&stopping_), absl::FromChrono(wait));
        continue;
      }
    }
    for (const Event& event : due) Dispatch(event);
  }
}

void SimulatedEvaluators::Dispatch(const Event& event) {
  Sim& sim = *sims_[event.sim];
  switch (event.kind) {
    case EventKind::kHeartbeat: return StartHeartbeat(sim);
    case EventKind::kPull: return StartPull(sim);
    case EventKind::kEvaluationDone:
    case EventKind::kReport: return StartReport(sim, event.generation);
  }
}

bool SimulatedEvaluators::Stopping() {
  absl::MutexLock lock(&timer_mutex_);
  return stopping_;
}

void SimulatedEvaluators::CallEnded() {
  absl::MutexLock lock(&timer_mutex_);
  --in_flight_;
}

void SimulatedEvaluators::CountError(const char* call, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::CANCELLED && Stopping()) return;  // Stop's own cancels
  absl::MutexLock lock(&stats_mutex_);
  ++counts_.rpc_errors;
  ++counts_.errors[fmt::format("{} {}", call, static_cast<int>(status.error_code()))];
}

void SimulatedEvaluators::StartPull(Sim& sim) {
  using PullCall = Call<v1::PullEvaluationJobsRequest, v1::PullEvaluationJobsResponse>;
  auto* call = new PullCall;
  call->context = Context(options_.token, options_.pull_wait + kCallTimeout);
  call->request.set_session_id(sim.session_id);
  call->request.set_max_jobs(1);
  call->request.set_wait_ms(absl::ToInt64Milliseconds(options_.pull_wait));
  {
    absl::MutexLock lock(&timer_mutex_);
    if (stopping_) return delete call;
    ++in_flight_;
  }
  {
    absl::MutexLock lock(&sim.mutex);
    // stopping_ again under the sim's lock: Stop cancels every sim.pull it sees after setting it (a
    // context cancelled before its call starts cancels the call as it starts).
    if (sim.killed || sim.done || Stopping()) {
      CallEnded();
      return delete call;
    }
    sim.pull = call->context.get();
  }
  sim.stub->async()->PullEvaluationJobs(call->context.get(), &call->request, &call->response,
                                         [this, &sim, call](grpc::Status status) {
    const Clock::time_point now = Clock::now();
    std::unique_ptr<PullCall> owned(call);
    bool pull_again = false;
    {
      absl::MutexLock lock(&sim.mutex);
      sim.pull = nullptr;
      if (!status.ok()) {
        CountError("Pull", status);
        if (status.error_code() == grpc::StatusCode::NOT_FOUND) sim.done = true;
        if (!sim.done) Schedule({now + kRetryAfter, sim.index, EventKind::kPull, 0});
      } else if (call->response.grants().empty()) {
        if (call->response.draining()) sim.done = true;
        pull_again = !sim.done;
        absl::MutexLock stats(&stats_mutex_);
        ++counts_.empty_pulls;
      } else {
        sim.grant = call->response.grants(0);
        sim.holding = true;
        sim.renewed = now;
        sim.lease = std::chrono::milliseconds(sim.grant.lease_ms());
        const int64_t generation = ++sim.generation;
        const double median_s = absl::ToDoubleSeconds(options_.median_evaluation);
        std::lognormal_distribution<double> evaluation(std::log(std::max(median_s, 1e-6)), options_.sigma);
        const auto busy = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(evaluation(sim.rng)));
        Schedule({now + busy, sim.index, EventKind::kEvaluationDone, generation});
        absl::MutexLock stats(&stats_mutex_);
        ++counts_.grants;
        if (auto killed = killed_lease_end_.find(sim.grant.job().job_id()); killed != killed_lease_end_.end()) {
          relet_ms_.push_back(Ms(now - killed->second));
          killed_lease_end_.erase(killed);
        } else if (sim.grant.attempt() == 1) {
          const auto submitted = SubmitTime(sim.grant.job().candidate().id());
          const Clock::time_point available = submitted ? std::max(*submitted, call->started) : call->started;
          if (submitted && *submitted > call->started) ++counts_.waited_grants;
          pull_ms_.push_back(Ms(now - available));
        }
      }
    }
    if (pull_again) StartPull(sim);
    CallEnded();
  });
}

void SimulatedEvaluators::StartReport(Sim& sim, int64_t generation) {
  using ReportCall = Call<v1::ReportEvaluationRequest, v1::ReportEvaluationResponse>;
  auto* call = new ReportCall;
  call->context = Context(options_.token, kCallTimeout);
  {
    absl::MutexLock lock(&sim.mutex);
    if (sim.killed || !sim.holding || sim.generation != generation) return delete call;  // killed, or told to stop
    sim.reported = generation;
    call->request.set_session_id(sim.session_id);
    call->request.set_job_id(sim.grant.job().job_id());
    call->request.set_attempt(sim.grant.attempt());
    v1::EvalResult* result = call->request.mutable_result();
    result->set_candidate_id(sim.grant.job().candidate().id());
    result->set_task_name(sim.grant.job().task().name());
    result->set_failure(v1::FAILURE_CATEGORY_NONE);
    result->set_fitness(1.0);
  }
  {
    absl::MutexLock lock(&timer_mutex_);
    if (stopping_) return delete call;
    ++in_flight_;
  }
  sim.stub->async()->ReportEvaluation(call->context.get(), &call->request, &call->response,
                                       [this, &sim, call, generation](grpc::Status status) {
    const Clock::time_point now = Clock::now();
    std::unique_ptr<ReportCall> owned(call);
    if (!status.ok()) {  // kept, and reported again (as a node's spool does)
      CountError("Report", status);
      Schedule({now + kRetryAfter, sim.index, EventKind::kReport, generation});
      return CallEnded();
    }
    {
      absl::MutexLock lock(&sim.mutex);
      if (sim.generation == generation) sim.holding = false;
    }
    {
      absl::MutexLock stats(&stats_mutex_);
      report_ms_.push_back(Ms(now - call->started));
      switch (call->response.outcome()) {
        case v1::REPORT_OUTCOME_ACCEPTED:
          ++counts_.accepted;
          if (options_.track_jobs) ++accepted_counts_[call->request.job_id()];
          // Sent before its worker was killed: the job is done and will not be re-leased.
          if (killed_lease_end_.erase(call->request.job_id()) > 0) ++killed_after_report_;
          break;
        case v1::REPORT_OUTCOME_DUPLICATE: ++counts_.duplicate; break;
        case v1::REPORT_OUTCOME_STALE: ++counts_.stale; break;
        default: ++counts_.not_held; break;
      }
    }
    StartPull(sim);
    CallEnded();
  });
}

void SimulatedEvaluators::StartHeartbeat(Sim& sim) {
  using HeartbeatCall = Call<v1::HeartbeatRequest, v1::HeartbeatResponse>;
  {
    absl::MutexLock lock(&sim.mutex);
    if (sim.killed || sim.done) return;
  }
  auto* call = new HeartbeatCall;
  call->context = Context(options_.token, kCallTimeout);
  call->request.set_session_id(sim.session_id);
  {
    absl::MutexLock lock(&sim.mutex);
    if (sim.holding) call->request.add_holding_job_ids(sim.grant.job().job_id());
  }
  {
    absl::MutexLock lock(&timer_mutex_);
    if (stopping_) return delete call;
    ++in_flight_;
  }
  sim.stub->async()->Heartbeat(call->context.get(), &call->request, &call->response, [this, &sim, call](grpc::Status status) {
    const Clock::time_point now = Clock::now();
    std::unique_ptr<HeartbeatCall> owned(call);
    bool pull = false;
    if (!status.ok()) CountError("Heartbeat", status);
    {
      absl::MutexLock lock(&sim.mutex);
      absl::MutexLock stats(&stats_mutex_);
      if (status.ok()) {
        heartbeat_ms_.push_back(Ms(now - call->started));
        if (sim.holding) {
          sim.renewed = now;
          sim.lease = std::chrono::milliseconds(call->response.lease_ms());
          // A renewal that was on its way when the worker was killed moves its lease's end.
          if (auto k = killed_lease_end_.find(sim.grant.job().job_id()); sim.killed && k != killed_lease_end_.end()) {
            k->second = now + sim.lease;
          }
          const auto& stop = call->response.stop_job_ids();
          if (!sim.killed && std::find(stop.begin(), stop.end(), sim.grant.job().job_id()) != stop.end()) {
            sim.holding = false;
            ++counts_.stopped;
            pull = true;
          }
        }
      }
      if (!sim.killed && !sim.done) Schedule({now + sim.heartbeat_interval, sim.index, EventKind::kHeartbeat, 0});
    }
    if (pull) StartPull(sim);
    CallEnded();
  });
}

int SimulatedEvaluators::Kill(double fraction) {
  const int want = std::max(1, static_cast<int>(std::lround(fraction * options_.count)));
  std::vector<int> order(sims_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(options_.seed + 17));
  int killed = 0;
  // Workers still evaluating first: a worker whose report is already on its way leaves nothing to
  // re-lease, and on a loaded machine (CI) reports can be in flight for as long as evaluations take.
  for (const bool take_reporting : {false, true}) {
    for (int i : order) {
      if (killed == want) break;
      Sim& sim = *sims_[i];
      absl::MutexLock lock(&sim.mutex);
      if (sim.killed || !sim.holding) continue;
      if (!take_reporting && sim.reported == sim.generation) continue;
      sim.killed = true;
      ++killed;
      absl::MutexLock stats(&stats_mutex_);
      killed_lease_end_[sim.grant.job().job_id()] = sim.renewed + sim.lease;
    }
  }
  return killed;
}

void SimulatedEvaluators::StartWindow() {
  absl::MutexLock stats(&stats_mutex_);
  counts_ = {};
  pull_ms_.clear();
  report_ms_.clear();
  heartbeat_ms_.clear();
}

SimulatedEvaluatorsStats SimulatedEvaluators::Stats() {
  absl::MutexLock stats(&stats_mutex_);
  SimulatedEvaluatorsStats s = counts_;
  s.pull = Summarize(pull_ms_);
  s.report = Summarize(report_ms_);
  s.heartbeat = Summarize(heartbeat_ms_);
  s.relet = Summarize(relet_ms_);
  s.relet_waiting = static_cast<int64_t>(killed_lease_end_.size());
  s.killed_after_report = killed_after_report_;
  return s;
}

std::map<std::string, int> SimulatedEvaluators::AcceptedCounts() {
  absl::MutexLock stats(&stats_mutex_);
  return accepted_counts_;
}

void SimulatedEvaluators::Stop() {
  {
    absl::MutexLock lock(&timer_mutex_);
    if (stopping_ && in_flight_ == 0) return;
    stopping_ = true;
  }
  if (timer_.joinable()) timer_.join();
  for (auto& sim : sims_) {
    absl::MutexLock lock(&sim->mutex);
    if (sim->pull != nullptr) sim->pull->TryCancel();
  }
  absl::MutexLock lock(&timer_mutex_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(timer_mutex_) { return in_flight_ == 0; };
  timer_mutex_.Await(absl::Condition(&idle));
}

}  // namespace sparseditto
