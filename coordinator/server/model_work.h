// The coordinator's side of the mutator services (issue 25 item 3, DESIGN.md §3.7): the search's LLM
// mutator asks its models through them, so the API keys and endpoints live only where the services
// run (`sparseditto mutator --models FILE`), and the coordinator never calls a model or runs a command
// itself. A model is known by its MutatorSpec name: a task names it, a service's models file says what
// it is.
//
// A service registers one session per model (WorkerInfo.kind MUTATOR, .model, .slots = the requests it
// runs at once). Each attempt of a chat request is a job on the platform of its model; a session
// pulls its model's jobs (a long poll), heartbeats (renewing the leases of the jobs it names) and
// reports the answer; the first report of an attempt in its lease wins, as for evaluation jobs.
// In memory only: a request in flight when the coordinator dies is one the resumed search asks again
// (an LLM mutation is not replayable, so nothing was recorded of it).
//
// Search side: Factory() gives the LLM mutator (llm_mutator.h) its model clients. A client's Complete
// fails at once (kConnectionFailed, naming the model) when no live session serves the model, so that a
// search without services for a model spends nothing waiting on it; else it waits for the answer up
// to the model's timeout plus pickup_wait.
// Ownership: borrows `clock` (nullptr: a steady clock of its own), which must outlive it.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/jobs/job_queue.h"
#include "coordinator/jobs/monotonic_clock.h"
#include "llm_mutator/llm_mutator.h"
#include "services.pb.h"

namespace sparseditto {

struct ModelWorkOptions {
  // A grant's lease, renewed by heartbeats: 60 s, as for evaluation jobs (a model's answer takes
  // seconds to minutes; the service heartbeats every heartbeat_interval while it waits).
  absl::Duration lease = absl::Seconds(60);
  // Lease expiries after which a request fails (kConnectionFailed): 2, since a request that outlives
  // two services is the model's problem, not the network's, and the search's retry layer decides next.
  int max_lost_attempts = 2;
  absl::Duration session_ttl = absl::Seconds(60);
  absl::Duration heartbeat_interval = absl::Seconds(10);
  absl::Duration max_pull_wait = absl::Seconds(20);
  // How long a request may wait for a busy service of its model to take it, beyond the model's own
  // timeout: 60 s (a service runs ModelOptions.concurrency requests at once; the rest wait here).
  absl::Duration pickup_wait = absl::Seconds(60);
  // Told each service's arrival and departure, for the coordinator's log; under the object's lock.
  std::function<void(const std::string&)> on_event;
};

class ModelWork {
 public:
  explicit ModelWork(ModelWorkOptions options = {}, const jobs::MonotonicClock* clock = nullptr);
  ~ModelWork();  // Close()
  ModelWork(const ModelWork&) = delete;
  ModelWork& operator=(const ModelWork&) = delete;

  // ---- Service side (the gRPC face is MutatorWorkServiceImpl). Errors: InvalidArgument naming the
  // field (not a mutator, no model, slots < 1, a malformed session id), NotFound for an unknown or
  // ended session ("register again"), FailedPrecondition once closed (Register only).
  absl::StatusOr<v1::RegisterWorkerResponse> Register(const v1::RegisterWorkerRequest& request);
  absl::StatusOr<v1::PullChatJobsResponse> Pull(const v1::PullChatJobsRequest& request);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request);
  absl::StatusOr<v1::ReportChatResponse> Report(const v1::ReportChatRequest& request);

  // ---- Search side.
  // One attempt of `request` to the model named `model`, through one of its services.
  llm::ChatResult Complete(const std::string& model, const llm::ChatRequest& request, absl::Duration timeout);
  // Clients for the LLM mutator: each model's client is Complete for ModelOptions.name and
  // .timeout_seconds (the options' endpoint, key variable and command are not used here).
  llm::ClientFactory Factory();

  // The live sessions' services, oldest first.
  std::vector<v1::WorkerInfo> LiveServices();
  // No more registrations or grants; services are told to drain; waiting requests end. Idempotent.
  void Close();

 private:
  struct Session {
    v1::WorkerInfo worker;
    int64_t order = 0;
    absl::Duration last_seen;
  };
  void ExpireSessionsLocked(absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::StatusOr<Session*> TouchLocked(const std::string& session_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const ModelWorkOptions options_;
  std::unique_ptr<jobs::MonotonicClock> own_clock_;
  const jobs::MonotonicClock* clock_;
  std::unique_ptr<jobs::JobQueue<v1::ChatJob, v1::ChatAnswer>> queue_;

  absl::Mutex mutex_;
  std::map<std::string, Session> sessions_ ABSL_GUARDED_BY(mutex_);
  int64_t next_order_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t next_job_ ABSL_GUARDED_BY(mutex_) = 0;
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace sparseditto
