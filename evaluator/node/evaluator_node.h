// An evaluator worker of distributed mode (`sparseditto evaluator --coordinator HOST:PORT`): one per
// GPU, it registers with the coordinator, pulls evaluation jobs (a long poll), runs each on its local
// CandidateEvaluator (the embedded evaluator: compile pool, sandbox, runner) exactly as embedded mode's
// taker does (RunEvaluationJob, coordinator/search/evaluation_job.h), and reports the result with the
// attempt it was granted. A heartbeat thread renews its session and leases and hears of cancels and
// drain. Each result waits in a ResultSpool (result_spool.h) until the coordinator has answered its
// report, so a worker cut off, or killed and restarted with the same spool, reports it later under
// the same session; the coordinator judges such late reports (duplicate, stale) by their attempt.
// While the coordinator is unreachable it retries with exponential backoff and jitter.
//
// Ownership: borrows `link`, `evaluator` and `spool`, which outlive it. The evaluator is used by Run's
// thread only. Thread-safety: Run on one thread; Drain and counts() from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "coordinator/search/candidate_evaluator.h"
#include "evaluator/node/coordinator_link.h"
#include "evaluator/node/result_spool.h"
#include "services.pb.h"

namespace sparseditto {

struct EvaluatorNodeOptions {
  // What the worker says it is (GPU, arch read from the device, versions). kind is set to evaluator and
  // slots to 1: a node runs one job at a time (one GPU; the runner serialises its timings anyway).
  v1::WorkerInfo worker;
  // The long poll's wait: 20 s (the coordinator holds a pull at most its own max_pull_wait).
  absl::Duration pull_wait = absl::Seconds(20);
  // Reconnection: the first wait 0.5 s, doubling up to 30 s, each drawn uniformly from [half, all] of
  // its step, so that many workers cut off together do not all come back at the same moment.
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Seconds(30);
  // Seeds the jitter; 0: from the OS's entropy.
  uint64_t jitter_seed = 0;
  // Told each event worth a log line ("registered as ...", "coordinator unreachable: ..."); never a
  // token. Called from Run's and the heartbeat thread. Null: silent.
  std::function<void(const std::string&)> on_event;
};

struct EvaluatorNodeCounts {
  int64_t jobs_run = 0;
  int64_t accepted = 0;
  int64_t duplicate = 0;
  int64_t stale = 0;
  int64_t not_held = 0;
  int64_t discarded = 0;    // results dropped because the coordinator said stop (cancelled, revoked)
  int64_t registrations = 0;
  int64_t unreachable = 0;  // calls that found the coordinator unreachable (each followed by a backoff)
};

class EvaluatorNode {
 public:
  EvaluatorNode(CoordinatorLink* link, CandidateEvaluator* evaluator, ResultSpool* spool, EvaluatorNodeOptions options);
  ~EvaluatorNode();
  EvaluatorNode(const EvaluatorNode&) = delete;
  EvaluatorNode& operator=(const EvaluatorNode&) = delete;

  // Works until drained (Drain, or the coordinator says draining), then reports what it finished
  // (a bounded number of tries) and returns OK. A registration refused for good (UNAUTHENTICATED,
  // PERMISSION_DENIED, INVALID_ARGUMENT) returns that error at once: retrying cannot help.
  absl::Status Run();
  // Finish the job running now, report it, pull no more. Any thread (not a signal handler).
  void Drain();
  EvaluatorNodeCounts counts() const;

 private:
  // Registers (again), with the spool's session as previous_session_id; retries while unreachable.
  absl::Status RegisterLoop();
  void HeartbeatLoop();
  // Reports every kept result; false when the coordinator could not be reached (try later).
  bool FlushReports();
  // Runs one granted job: sets its task up first when it is a new task.
  void RunGrant(const v1::EvaluationGrant& grant);
  // After a set-up: registers again (same session) with the device facts the evaluator read.
  void TellDeviceFacts();
  // Sleeps the next backoff step (returns early on Drain); reset by ResetBackoff after a success.
  void Backoff();
  void ResetBackoff();
  bool draining() const { return drain_.HasBeenNotified(); }
  std::string session() const;

  CoordinatorLink* const link_;
  CandidateEvaluator* const evaluator_;
  ResultSpool* const spool_;
  const EvaluatorNodeOptions options_;
  void RequestDrain();  // once: Notify may be called only once
  std::atomic<bool> drain_requested_{false};
  absl::Notification drain_;
  absl::Notification stop_heartbeats_;
  v1::WorkerInfo worker_;    // what it registers as (Run's thread)
  std::string set_up_task_;  // the serialised task the evaluator was last set up for (Run's thread)
  absl::Duration backoff_;   // Run's thread
  std::mt19937_64 jitter_;   // Run's thread

  mutable absl::Mutex mutex_;
  std::string session_id_ ABSL_GUARDED_BY(mutex_);
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mutex_) = absl::Seconds(10);
  bool session_lost_ ABSL_GUARDED_BY(mutex_) = false;  // a call said NOT_FOUND: register again
  std::string running_job_ ABSL_GUARDED_BY(mutex_);    // the job Run is evaluating now
  bool stop_running_job_ ABSL_GUARDED_BY(mutex_) = false;
  EvaluatorNodeCounts counts_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace sparseditto
