// The coordinator half of the capacity test (issue 25 item 7; capacity_bench.cc, capacity_test.cc): the
// real WorkerService (WorkerServiceImpl over EvaluationWork, an evaluator token, rpc::ApplyServerOptions,
// the health service) on 127.0.0.1:0, and the search's side played by a submitter that keeps the queue
// fed and a few awaiters that collect the results, as the search loop does through EvaluationPipeline.
//
// Feeding: while feeding, the submitter keeps `outstanding` jobs pending or leased (2x the evaluators:
// one running on each, one pending for each, so that a pull never waits for work), submitting what is
// missing in batches of up to `max_batch` (one SubmitAll each, one journal sync per batch); paused,
// it submits nothing, so every evaluator ends in a long poll; trickling, it submits `trickle_per_second`
// jobs a second (with the outstanding bound), for the latency of waking a long poll. Each job is a
// MakeEvaluationJob of a tiny task and candidate; the candidate id carries the submit time on the
// steady clock ("bench-<n>-<steady ns>"), which is CLOCK_MONOTONIC, the same in every process of the
// machine, so an evaluator can measure a grant from the moment its job became available.
//
// Ownership: owns everything. Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/job_journal.h"
#include "coordinator/server/worker_service.h"
#include "grpcpp/grpcpp.h"
#include "rpc/role_tokens.h"

namespace sparseditto {

inline constexpr char kLoadEvaluatorToken[] = "capacity-evaluator-token-0123456789";

struct LoadCoordinatorOptions {
  EvaluationWorkOptions work;
  int outstanding = 128;   // jobs submitted and not yet ended (pending or leased), at most
  int awaiters = 4;        // threads awaiting results, each the oldest job not yet awaited
  // The most jobs submitted at once (EvaluationWork::SubmitAll: with a journal, one synced write for
  // all), as the search submits its window ahead in one batch; 1: one Submit (one sync) per job.
  int max_batch = 256;
  bool track_jobs = false; // count how often each job id ended (for the test; a map entry per job)
  // Set: every job, grant and accepted result is journaled there (RocksDB, synced writes: job_journal.h)
  // before it is pulled, sent or acknowledged, as `sparseditto coordinator` does. Empty: in memory.
  std::string journal_dir;
};

// What the coordinator's process did; cpu_seconds and the memory are the whole process's.
struct LoadCoordinatorStats {
  int64_t submitted = 0;
  int64_t results = 0;         // jobs awaited with a result (failure NONE, the job's candidate)
  int64_t without_result = 0;  // jobs awaited without one (lost, cancelled)
  jobs::JobQueueStats queue;
  double cpu_seconds = 0;      // user + system of this process (getrusage)
  int64_t rss_kib = 0;         // VmRSS
  int64_t peak_rss_kib = 0;    // VmHWM
  int64_t threads = 0;         // now
  int64_t peak_threads = 0;    // the most sampled (every 20 ms by the submitter)
  int64_t min_pending = -1;    // the fewest pending jobs sampled while feeding since ResetWindow; -1: none
};

class LoadCoordinator {
 public:
  enum class Feed { kFeeding, kPaused, kTrickle };

  explicit LoadCoordinator(LoadCoordinatorOptions options);
  // Closes the work, shuts the server down, joins the threads.
  ~LoadCoordinator();
  LoadCoordinator(const LoadCoordinator&) = delete;
  LoadCoordinator& operator=(const LoadCoordinator&) = delete;

  const std::string& address() const { return address_; }  // "127.0.0.1:<port>"
  bool ok() const { return work_ != nullptr && server_ != nullptr; }

  void SetFeed(Feed feed, double trickle_per_second = 0);
  // Restarts min_pending's sampling.
  void ResetWindow();
  // Waits until every submitted job has been awaited (feed it nothing first); false after `timeout`.
  bool WaitAllAwaited(absl::Duration timeout);
  LoadCoordinatorStats Stats();
  // Job id -> how many times an awaiter saw it end (track_jobs only).
  std::map<std::string, int> EndCounts();

 private:
  void SubmitLoop();
  void AwaitLoop();

  const LoadCoordinatorOptions options_;
  std::unique_ptr<JobJournal> journal_;  // null: in memory
  std::unique_ptr<EvaluationWork> work_;  // null: the journal did not open
  rpc::RoleTokens tokens_;
  WorkerServiceImpl service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  absl::Mutex mutex_;
  Feed feed_ ABSL_GUARDED_BY(mutex_) = Feed::kPaused;
  double trickle_per_second_ ABSL_GUARDED_BY(mutex_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::deque<v1::EvaluationJob> to_await_ ABSL_GUARDED_BY(mutex_);
  int64_t outstanding_ ABSL_GUARDED_BY(mutex_) = 0;  // submitted, not yet awaited
  int64_t submitted_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t results_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t without_result_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t peak_threads_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t min_pending_ ABSL_GUARDED_BY(mutex_) = -1;
  std::map<std::string, int> end_counts_ ABSL_GUARDED_BY(mutex_);

  std::thread submitter_;
  std::vector<std::thread> awaiters_;
};

}  // namespace sparseditto
