// The evaluator half of the capacity test (issue 25 item 7; capacity_bench.cc, capacity_test.cc): N
// simulated evaluator workers, each on its OWN channel (a distinct channel argument, so that gRPC's
// global subchannel pool cannot share one connection among them: ConnectionsTo counts them), speaking
// WorkerService as evaluator/node/ does: register (GrpcCoordinatorLink, the node's own client), long-poll
// PullEvaluationJobs for one job, "evaluate" by waiting a time drawn from a lognormal distribution,
// report with the grant's attempt (retrying on an RPC error, as a node keeps its result until answered),
// and heartbeat on the interval the coordinator gives.
//
// Threads: gRPC's callback client API, so N workers need no thread each: the calls' completions run on
// gRPC's own few threads, and one timer thread here ends evaluations and starts heartbeats. (The
// synchronous API would hold a thread per worker in its long poll: 2048 threads for 2048 workers.)
//
// Measured (Stats, for the window since StartWindow): grants and report outcomes; pull latency from the
// moment the job became available (the later of the call's start and the job's submit time, which its
// candidate id carries, load_coordinator.h), so a long poll's wait for work is never counted; report and
// heartbeat latency from call to answer; the re-lease time of the jobs of killed workers (Kill), from the
// lease's end (the killed worker's last renewal as it saw it, plus the lease) to the job's next grant.
//
// Ownership: owns its channels and threads. Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/server/load_measures.h"
#include "services.grpc.pb.h"

namespace sparseditto {

struct SimulatedEvaluatorsOptions {
  std::string address;  // "127.0.0.1:<port>"
  std::string token;
  int count = 64;
  // Evaluation times: lognormal with this median and shape sigma (mean = median * exp(sigma^2 / 2)).
  absl::Duration median_evaluation = absl::Seconds(1);
  double sigma = 0.5;
  absl::Duration pull_wait = absl::Seconds(10);
  uint64_t seed = 1;
  bool track_jobs = false;  // keep how often each job id was accepted (AcceptedCounts)
};

struct SimulatedEvaluatorsStats {
  int64_t grants = 0;
  int64_t waited_grants = 0;  // grants of jobs submitted after their pull started (a long poll woken)
  int64_t empty_pulls = 0;
  int64_t accepted = 0;
  int64_t duplicate = 0;
  int64_t stale = 0;
  int64_t not_held = 0;
  int64_t stopped = 0;        // jobs a heartbeat said to stop
  int64_t rpc_errors = 0;
  std::map<std::string, int64_t> errors;  // "Pull DEADLINE_EXCEEDED" -> how many
  LatencySummary pull;
  LatencySummary report;
  LatencySummary heartbeat;
  // Since the last Kill, not the window: re-leased jobs of killed workers, and kills still waiting.
  LatencySummary relet;
  int64_t relet_waiting = 0;
  // Killed workers whose report was already on its way and was accepted: their job ended, so it is
  // never re-leased (neither re-leased nor waiting).
  int64_t killed_after_report = 0;
};

class SimulatedEvaluators {
 public:
  explicit SimulatedEvaluators(SimulatedEvaluatorsOptions options);
  // Stop().
  ~SimulatedEvaluators();
  SimulatedEvaluators(const SimulatedEvaluators&) = delete;
  SimulatedEvaluators& operator=(const SimulatedEvaluators&) = delete;

  // Makes the channels, registers every worker (a few threads), and starts them pulling and
  // heartbeating. The first registration's error, if any.
  absl::Status Start();
  // Clears the window's counters and samples.
  void StartWindow();
  SimulatedEvaluatorsStats Stats();
  // Kills round(fraction * count) (at least 1) of the workers that hold a job, those still evaluating
  // (no report sent) before those reporting: they never heartbeat, report or pull again, as a process
  // killed mid-job (a report already sent still lands: its job is then not waited for,
  // killed_after_report). Returns how many.
  int Kill(double fraction);
  // No new calls; cancels the long polls and waits for every call in flight to end.
  void Stop();
  // Job id -> accepted reports (track_jobs only).
  std::map<std::string, int> AcceptedCounts();

 private:
  using Clock = std::chrono::steady_clock;
  struct Sim;
  enum class EventKind { kEvaluationDone, kHeartbeat, kPull, kReport };
  struct Event {
    Clock::time_point at;
    int sim;
    EventKind kind;
    int64_t generation;  // of the sim's job, for kEvaluationDone and kReport
    bool operator>(const Event& other) const { return at > other.at; }
  };

  void Schedule(Event event);
  void TimerLoop();
  void Dispatch(const Event& event);
  void StartPull(Sim& sim);
  void StartReport(Sim& sim, int64_t generation);
  void StartHeartbeat(Sim& sim);
  void CallEnded();
  bool Stopping();
  void CountError(const char* call, const grpc::Status& status);

  const SimulatedEvaluatorsOptions options_;
  std::vector<std::unique_ptr<Sim>> sims_;

  absl::Mutex timer_mutex_;
  std::vector<Event> events_ ABSL_GUARDED_BY(timer_mutex_);  // a min-heap on `at`
  bool stopping_ ABSL_GUARDED_BY(timer_mutex_) = false;
  int64_t in_flight_ ABSL_GUARDED_BY(timer_mutex_) = 0;
  std::thread timer_;

  absl::Mutex stats_mutex_;
  SimulatedEvaluatorsStats counts_ ABSL_GUARDED_BY(stats_mutex_);
  std::vector<double> pull_ms_ ABSL_GUARDED_BY(stats_mutex_);
  std::vector<double> report_ms_ ABSL_GUARDED_BY(stats_mutex_);
  std::vector<double> heartbeat_ms_ ABSL_GUARDED_BY(stats_mutex_);
  std::vector<double> relet_ms_ ABSL_GUARDED_BY(stats_mutex_);
  std::map<std::string, Clock::time_point> killed_lease_end_ ABSL_GUARDED_BY(stats_mutex_);  // by job id
  int64_t killed_after_report_ ABSL_GUARDED_BY(stats_mutex_) = 0;
  std::map<std::string, int> accepted_counts_ ABSL_GUARDED_BY(stats_mutex_);
};

}  // namespace sparseditto
