// The plain types of the job queue (job_queue.h): its options, the states of a job, what a report,
// a heartbeat and an await answer, and the records a snapshot is made of. The Basic* templates take
// the payload types, so the typed JobQueue<Job, Result> and its untyped core share one definition.
// Thread-safety: plain values; none of their own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"

namespace sparseditto::jobs {

struct JobQueueOptions {
  // How long a grant lasts without a heartbeat (Heartbeat renews every lease of its taker to now +
  // lease). 30 s: a worker heartbeats every few seconds, so a lease survives several lost heartbeats
  // (a slow network, a paused process), yet the job of a worker that died is granted again within
  // half a minute. A non-positive value reads as this default.
  absl::Duration lease = absl::Seconds(30);
  // A job whose lease expired this many times ends as lost (OutcomeKind::kLost) instead of being
  // granted again: a job that kills or hangs every worker it reaches must not circle for ever. 3: one
  // unlucky worker death (a preempted machine, a restart) is retried twice before the job fails.
  // Releases (Release) are not losses and do not count. A value below 1 reads as 1.
  int max_lost_attempts = 3;
};

// A job's platform that names one taker: PinnedTo("worker-7") is "@worker-7", granted only to the
// taker with that id (JobQueue::Submit). Platforms proper (an arch such as "sm_90a") never start so.
inline constexpr char kPinnedToTaker = '@';
inline std::string PinnedTo(std::string_view taker_id) { return std::string(1, kPinnedToTaker) + std::string(taker_id); }

// Where a job is. kDone, kLost and kCancelled are terminal: the job never changes again.
enum class JobState {
  kPending,    // waiting for a taker, in submission order
  kLeased,     // granted to one taker whose lease (on the queue's clock) has not expired
  kDone,       // a result was accepted
  kLost,       // its lease expired max_lost_attempts times
  kCancelled,  // the submitter cancelled it before a result was accepted
};
// "pending", "leased", "done", "lost", "cancelled".
std::string_view JobStateName(JobState state);
inline bool IsTerminal(JobState state) {
  return state == JobState::kDone || state == JobState::kLost || state == JobState::kCancelled;
}

// What JobQueue::Report did with a result; see Report in job_queue.h for the state each implies.
enum class ReportOutcome {
  kAccepted,   // recorded: the job is now kDone with this result
  kDuplicate,  // the job had already ended; nothing changed
  kStale,      // the reporter's attempt is over (expired, released, or a later attempt is granted);
               // not recorded, nothing changed
  kNotHeld,    // unknown job, or the reporter was never granted this attempt; nothing changed
};
// "accepted", "duplicate", "stale", "not_held".
std::string_view ReportOutcomeName(ReportOutcome outcome);

// How a job ended.
enum class OutcomeKind { kResult, kLost, kCancelled };

struct HeartbeatReply {
  // Jobs of this taker that the submitter cancelled since its last heartbeat: stop them (a report
  // for them is kDuplicate).
  std::vector<std::string> cancelled_job_ids;
  // Jobs whose lease this taker lost since its last heartbeat (it expired before being renewed):
  // stop them; the job is pending again or lost, and a report for it is kStale or kDuplicate.
  std::vector<std::string> revoked_job_ids;
  int leases_renewed = 0;      // leases this heartbeat renewed
  int leases_not_renewed = 0;  // leases of the taker's that it did not name as held: left to run out
  bool closing = false;    // the queue is closed: take no more work, finish or Release what is held
};

// Counts of jobs by state.
struct JobQueueStats {
  int64_t pending = 0;
  int64_t leased = 0;
  int64_t done = 0;
  int64_t lost = 0;
  int64_t cancelled = 0;
  int64_t total() const { return pending + leased + done + lost + cancelled; }
  int64_t ended() const { return done + lost + cancelled; }
};

// One job granted to a taker by Take.
template <typename JobPayload>
struct BasicGrant {
  std::string job_id;
  int attempt = 0;  // 1 for the job's first grant, +1 for every later one
  JobPayload job;
  // When the lease ends, on the queue's clock (for tests and the owner's logs): a remote worker is
  // told `lease`, the length, never this point in time.
  absl::Duration lease_end;
  absl::Duration lease;  // the lease's length; heartbeat well within it
};

// How a job ended (Await).
template <typename ResultPayload>
struct BasicJobOutcome {
  OutcomeKind kind = OutcomeKind::kResult;
  ResultPayload result;   // the accepted result for kResult; empty otherwise
  int lost_attempts = 0;  // leases that expired on this job (max_lost_attempts for kLost)
  // For kLost: "job j7 lost its worker 3 times (lease 30s)"; for kCancelled: "job j7 was cancelled";
  // empty for kResult.
  std::string message;
};

// One job as Snapshot() saw it and Restore() takes it back.
template <typename JobPayload, typename ResultPayload>
struct BasicJobRecord {
  std::string job_id;
  std::string platform;
  JobPayload job;
  JobState state = JobState::kPending;
  int attempt = 0;     // grants so far: the current attempt when kLeased, the last one otherwise
  int lost_count = 0;  // leases that expired
  // holders[k - 1] is the taker granted attempt k (so holders.size() == attempt); the holder of a
  // leased job is holders.back(). Kept so a report after a restore is judged as before it.
  std::vector<std::string> holders;
  ResultPayload result;  // the accepted result when kDone; empty otherwise
};

}  // namespace sparseditto::jobs
