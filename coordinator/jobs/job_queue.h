// JobQueue<Job, Result>: the jobs that evaluators and mutators take, under leases. Embedded mode (an
// evaluator thread per GPU) and distributed mode (remote workers over gRPC) take from the same queue.
//
// The protocol (a lease scheduler like those of Bazel's remote execution):
//   submitter: Submit(id, platform, job) ... Await(id) -> the result, or lost, or cancelled
//   worker:    Take(me, my platform, n, long poll) -> grants (id, attempt, job, lease length)
//              every few seconds: Heartbeat(me, what I hold) -> renews those leases; which jobs to stop; closing
//              Report(me, id, attempt, result) -> accepted / duplicate / stale / not held
//              when draining: Release(me, id, attempt)
// A job is pending, leased to one taker, or terminal (done, lost, cancelled; see JobState). Leases are
// durations on the queue's own monotonic clock (monotonic_clock.h); a worker is told the length, never
// a point in time, so no clock is compared across machines. Every method first reclaims expired
// leases: the job goes back to pending in its submission place with its lost count +1, or becomes lost
// once that count reaches max_lost_attempts. So a report arriving after the lease ran out is stale even
// if no one has taken the job again yet, and the first accepted result is the only one ever recorded.
//
// Job and Result are copyable (protobuf messages, typically). The queue copies a Job into every grant
// and snapshot, a Result into every Await answer and snapshot, always outside its lock.
// Ownership: the queue borrows `clock` (nullptr: a steady clock of its own), which must outlive it.
// Every job's record (and its result) is kept until the queue is destroyed: ids are never reused.
// Thread-safety: every method may be called from any thread; the blocking ones (Take, Await) wait on a
// condition, bounded in real time, and are woken by Close.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "coordinator/jobs/job_queue_types.h"
#include "coordinator/jobs/monotonic_clock.h"
#include "coordinator/jobs/untyped_job_queue.h"

namespace sparseditto::jobs {

template <typename Job, typename Result>
class JobQueue {
 public:
  using Grant = BasicGrant<Job>;
  // result holds the Result exactly when kind == kResult; a lost or cancelled job has none.
  using Outcome = BasicJobOutcome<std::optional<Result>>;
  // result holds the Result exactly when state == kDone.
  using Record = BasicJobRecord<Job, std::optional<Result>>;

  // Invalid options read as their defaults (see JobQueueOptions).
  explicit JobQueue(JobQueueOptions options = {}, const MonotonicClock* clock = nullptr)
      : core_(options, clock) {}
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // A queue holding `records` (from Snapshot(), in their order), every leased job with a fresh lease
  // of now + lease so its running worker can still heartbeat and report. Terminal jobs keep their
  // outcome; attempts, lost counts and holders carry over, so reports are judged as before.
  // InvalidArgument for an empty or repeated id, attempt != holders.size(), a leased job never
  // granted, or a result present exactly when not done.
  static absl::StatusOr<std::unique_ptr<JobQueue>> Restore(std::vector<Record> records,
                                                           JobQueueOptions options = {},
                                                           const MonotonicClock* clock = nullptr) {
    std::vector<UntypedJobQueue::Record> untyped;
    untyped.reserve(records.size());
    for (Record& r : records) {
      untyped.push_back({.job_id = std::move(r.job_id),
                         .platform = std::move(r.platform),
                         .job = Share(std::move(r.job)),
                         .state = r.state,
                         .attempt = r.attempt,
                         .lost_count = r.lost_count,
                         .holders = std::move(r.holders),
                         .result = r.result.has_value() ? Share(*std::move(r.result)) : nullptr});
    }
    auto queue = std::make_unique<JobQueue>(options, clock);
    SD_RETURN_IF_ERROR(queue->core_.Restore(std::move(untyped)));
    return queue;
  }

  // Queues `job` as pending, after every job submitted before it. A taker gets it only if `platform`
  // is empty, equals the taker's platform (e.g. "sm_90a"), or is PinnedTo(its taker id): a job for
  // that one taker (whatever its platform), e.g. the confirmation stage's, which compares candidates
  // on one GPU.
  // InvalidArgument: empty id. AlreadyExists: the id was submitted before, in any state (nothing
  // changes). FailedPrecondition: the queue is closed.
  absl::Status Submit(std::string job_id, std::string platform, Job job) {
    return core_.Submit(std::move(job_id), std::move(platform), Share(std::move(job)));
  }

  // A long poll: grants up to `max_jobs` pending jobs whose platform matches `platform`, oldest
  // submission first (a job that came back from an expired lease or a Release keeps its original
  // place, ahead of every later submission). Each grant is the job's next attempt, leased to
  // `taker_id` until now + lease. When none matches, waits up to `wait` of real time (not the queue's
  // clock) for one to appear and returns as soon as at least one is granted; an empty vector when none
  // came, and at once once the queue is closed. A taker with an empty platform matches only jobs with
  // an empty platform. InvalidArgument: empty taker id, max_jobs < 1.
  absl::StatusOr<std::vector<Grant>> Take(const std::string& taker_id, const std::string& platform,
                                          int max_jobs, absl::Duration wait) {
    SD_ASSIGN_OR_RETURN(std::vector<UntypedJobQueue::Grant> untyped,
                        core_.Take(taker_id, platform, max_jobs, wait));
    std::vector<Grant> grants;
    grants.reserve(untyped.size());
    for (UntypedJobQueue::Grant& g : untyped) {
      grants.push_back({.job_id = std::move(g.job_id),
                        .attempt = g.attempt,
                        .job = Unshare<Job>(g.job),
                        .lease_end = g.lease_end,
                        .lease = g.lease});
    }
    return grants;
  }

  // Renews the leases `taker_id` holds to now + lease (one call renews them all; with `holding`, only
  // those of the jobs it names: a grant its taker never received, because the answer was lost on the
  // way or the coordinator died after granting it, is then not kept alive by a taker that does not
  // know it, and runs out), and hands over, once each, the ids of its jobs cancelled or revoked (lease
  // expired) since its last heartbeat, and whether the queue is closing. An unknown taker, or one
  // holding nothing, gets an empty reply.
  HeartbeatReply Heartbeat(const std::string& taker_id, const std::set<std::string>* holding = nullptr) {
    return core_.Heartbeat(taker_id, holding);
  }

  // A taker's result for attempt `attempt` of a job. In the order checked:
  //   kNotHeld   unknown job id, or `taker_id` was never granted this attempt of this job (a
  //              confused or hostile worker). Nothing changes.
  //   kDuplicate the job already ended (done, lost or cancelled). Nothing changes: the first terminal
  //              outcome wins.
  //   kStale     this attempt is over: its lease expired (the job is pending again, or granted to a
  //              later attempt), or the taker released it. Not recorded; nothing changes.
  //   kAccepted  the attempt is current (leased to this taker, lease not expired): the job is now
  //              done with `result`, the lease ends, Await answers with it.
  ReportOutcome Report(const std::string& taker_id, const std::string& job_id, int attempt, Result result) {
    return core_.Report(taker_id, job_id, attempt, Share(std::move(result)));
  }

  // A (draining) taker gives back attempt `attempt` of a job it holds: pending again in its
  // submission place, lost count unchanged (a release is not a loss); its next grant is attempt + 1.
  // NotFound: unknown job. FailedPrecondition: the taker does not hold that attempt (expired, ended,
  // another attempt or taker). Nothing changes on error.
  absl::Status Release(const std::string& taker_id, const std::string& job_id, int attempt) {
    return core_.Release(taker_id, job_id, attempt);
  }

  // The submitter no longer wants the job: a pending or leased job ends as cancelled at once; a leased
  // one's holder loses the lease and is told in its next heartbeat (its report is then kDuplicate).
  // Does nothing for an unknown or already ended job.
  void Cancel(const std::string& job_id) { core_.Cancel(job_id); }

  // Waits up to `timeout` of real time for the job to end and returns how: kResult with the accepted
  // Result, kLost (lost_attempts and a message such as "job j7 lost its worker 3 times (lease 30s)"),
  // or kCancelled. A zero timeout only looks. NotFound: unknown id. DeadlineExceeded: not ended in
  // time. Cancelled: the queue was closed before the job ended (returned at once after Close).
  absl::StatusOr<Outcome> Await(const std::string& job_id, absl::Duration timeout) {
    SD_ASSIGN_OR_RETURN(UntypedJobQueue::Outcome untyped, core_.Await(job_id, timeout));
    Outcome outcome{.kind = untyped.kind,
                    .result = std::nullopt,
                    .lost_attempts = untyped.lost_attempts,
                    .message = std::move(untyped.message)};
    if (untyped.result != nullptr) outcome.result = Unshare<Result>(untyped.result);
    return outcome;
  }

  // Reclaims the expired leases now (every other method does too, first). Waiting Takes and Awaits
  // are woken for what it frees or ends: with a FakeMonotonicClock, call it after Advance.
  void ReclaimExpired() { core_.ReclaimExpired(); }

  // Every leased job's lease ends at now + lease, even one already past its end and not yet
  // reclaimed: for the owner after a restart (Restore does it), so running workers can still report.
  void RenewAllLeases() { core_.RenewAllLeases(); }

  // Drain: from now on Take returns empty at once, Heartbeat says closing, Submit fails, and Await
  // of a job not yet ended returns Cancelled; every waiter wakes. Heartbeat, Report, Release and
  // Cancel work as before. Idempotent; there is no reopening.
  void Close() { core_.Close(); }

  // Jobs by state, after reclaiming.
  JobQueueStats Stats() { return core_.Stats(); }

  // Every job in submission order, after reclaiming. Not kept: lease ends (Restore gives fresh
  // ones) and heartbeat notices not yet delivered (after a restore, a worker running a job cancelled
  // before it learns so from its report, kDuplicate). Persist it, then Restore from it.
  std::vector<Record> Snapshot() {
    std::vector<UntypedJobQueue::Record> untyped = core_.Snapshot();
    std::vector<Record> records;
    records.reserve(untyped.size());
    for (UntypedJobQueue::Record& r : untyped) {
      records.push_back({.job_id = std::move(r.job_id),
                         .platform = std::move(r.platform),
                         .job = Unshare<Job>(r.job),
                         .state = r.state,
                         .attempt = r.attempt,
                         .lost_count = r.lost_count,
                         .holders = std::move(r.holders),
                         .result = std::nullopt});
      if (r.result != nullptr) records.back().result = Unshare<Result>(r.result);
    }
    return records;
  }

  const JobQueueOptions& options() const { return core_.options(); }

 private:
  template <typename T>
  static UntypedJobQueue::Payload Share(T value) {
    return std::make_shared<const T>(std::move(value));
  }
  // Only Share put payloads in core_, so each is the type its place says.
  template <typename T>
  static const T& Unshare(const UntypedJobQueue::Payload& payload) {
    return *static_cast<const T*>(payload.get());
  }

  UntypedJobQueue core_;
};

}  // namespace sparseditto::jobs
