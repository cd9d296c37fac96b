// The engine behind JobQueue<Job, Result> (job_queue.h): the lease protocol over opaque payloads
// (std::shared_ptr<const void>). The contract of every method, its errors and the state each outcome
// implies is written once, in job_queue.h; use JobQueue, which types the payloads. This class exists
// so the protocol is compiled and read once, not once per instantiation.
//
// Ownership: the queue borrows its clock (must outlive it; nullptr: a steady clock of its own). It
// shares the payloads it is given and hands them out shared; it never reads them.
// Thread-safety: every method may be called from any thread. One mutex guards the state; the clock is
// read before the mutex is taken, and nothing outside the queue is called while it is held.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/jobs/job_queue_types.h"
#include "coordinator/jobs/monotonic_clock.h"

namespace sparseditto::jobs {

class UntypedJobQueue {
 public:
  using Payload = std::shared_ptr<const void>;
  using Grant = BasicGrant<Payload>;
  using Outcome = BasicJobOutcome<Payload>;
  using Record = BasicJobRecord<Payload, Payload>;

  explicit UntypedJobQueue(JobQueueOptions options = {}, const MonotonicClock* clock = nullptr);
  UntypedJobQueue(const UntypedJobQueue&) = delete;
  UntypedJobQueue& operator=(const UntypedJobQueue&) = delete;

  absl::Status Submit(std::string job_id, std::string platform, Payload job);
  absl::StatusOr<std::vector<Grant>> Take(const std::string& taker_id, const std::string& platform,
                                          int max_jobs, absl::Duration wait);
  HeartbeatReply Heartbeat(const std::string& taker_id, const std::set<std::string>* holding);
  ReportOutcome Report(const std::string& taker_id, const std::string& job_id, int attempt,
                       Payload result);
  absl::Status Release(const std::string& taker_id, const std::string& job_id, int attempt);
  void Cancel(const std::string& job_id);
  absl::StatusOr<Outcome> Await(const std::string& job_id, absl::Duration timeout);
  void ReclaimExpired();
  void RenewAllLeases();
  void Close();
  JobQueueStats Stats();
  std::vector<Record> Snapshot();
  // Loads `records` into this queue, which must be empty (FailedPrecondition otherwise), and gives
  // every leased job a fresh lease. InvalidArgument (and nothing loaded) for a record that
  // contradicts itself or repeats an id.
  absl::Status Restore(std::vector<Record> records);

  const JobQueueOptions& options() const { return options_; }

 private:
  struct Entry {
    std::string platform;
    uint64_t sequence = 0;  // submission order
    Payload job;
    JobState state = JobState::kPending;
    int attempt = 0;
    int lost_count = 0;
    std::vector<std::string> holders;  // holders[k - 1] was granted attempt k
    absl::Duration lease_end;          // when kLeased, on the queue's clock
    Payload result;                    // when kDone
  };
  // A job's node in jobs_: its id and entry, at an address that never moves.
  using JobSlot = std::pair<const std::string, Entry>;
  using BySequence = std::map<uint64_t, JobSlot*>;
  struct Taker {
    BySequence held;                      // the jobs it holds a current lease on
    std::vector<std::string> cancelled;  // notices for the next heartbeat
    std::vector<std::string> revoked;
  };

  // The queue's view of now: `read` (the clock, read before the lock) never behind a time already
  // seen, so concurrent callers never see the queue's time go back. Reclaims the leases expired by
  // then, so every method judges leases after reclaiming.
  absl::Duration NowAndReclaimLocked(absl::Duration read) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Reads the clock, takes the lock, reclaims expired leases and runs `try_once(now)` until it
  // returns true (then true) or `wait` of real time has passed (then false), sleeping on `wake`
  // in between, never past the earliest lease end (which may free work or end a job).
  bool PollUntil(absl::Duration wait, absl::CondVar* wake,
                 absl::FunctionRef<bool(absl::Duration now)> try_once) ABSL_LOCKS_EXCLUDED(mutex_);
  void ReclaimExpiredLocked(absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  std::vector<Grant> GrantLocked(const std::string& taker_id, const std::string& platform,
                                 int max_jobs, absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes the job off its holder's leases (the job must be kLeased); the caller sets its new state.
  void EndLeaseLocked(JobSlot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void ReturnToPendingLocked(JobSlot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Wakes the waiting Takes a job that became pending can serve (one, when any taker can).
  void WakeTakersForLocked(const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void EndJobLocked(JobSlot* slot, JobState terminal) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RenewAllLeasesLocked(absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  Outcome OutcomeLocked(const JobSlot& slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const JobQueueOptions options_;
  const MonotonicClock* const clock_;

  mutable absl::Mutex mutex_;
  absl::CondVar work_arrived_;  // a job became pending, or the queue closed
  absl::CondVar job_ended_;     // a job became terminal, or the queue closed
  absl::node_hash_map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mutex_);
  std::vector<JobSlot*> in_submission_order_ ABSL_GUARDED_BY(mutex_);
  BySequence pending_ ABSL_GUARDED_BY(mutex_);
  BySequence leased_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, Taker> takers_ ABSL_GUARDED_BY(mutex_);
  // No lease ends before this (it may be earlier than the earliest: renewals only extend leases).
  absl::Duration earliest_lease_end_ ABSL_GUARDED_BY(mutex_) = absl::InfiniteDuration();
  absl::Duration last_now_ ABSL_GUARDED_BY(mutex_) = -absl::InfiniteDuration();
  uint64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t done_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t lost_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t cancelled_ ABSL_GUARDED_BY(mutex_) = 0;
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace sparseditto::jobs
