#include "coordinator/jobs/untyped_job_queue.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sparseditto::jobs {
namespace {

const MonotonicClock& OwnSteadyClock() {
  static const SteadyMonotonicClock clock;
  return clock;
}

// The shortest wait between two tries of a blocking call that waits for a lease to end: an expiry is
// noticed at most this late by a waiter nobody wakes.
constexpr absl::Duration kShortestWait = absl::Milliseconds(1);

// The real time that bounds a wait, whatever clock the leases are judged on (a fake one in tests).
absl::Duration RealNow() { return OwnSteadyClock().Now(); }

JobQueueOptions WithDefaultsForInvalid(JobQueueOptions options) {
  const JobQueueOptions defaults;
  if (options.lease <= absl::ZeroDuration()) options.lease = defaults.lease;
  options.max_lost_attempts = std::max(options.max_lost_attempts, 1);
  return options;
}

// For absl::StrCat, whose absl::string_view is not std::string_view on every absl build.
std::string StateName(JobState state) { return std::string(JobStateName(state)); }

}  // namespace

UntypedJobQueue::UntypedJobQueue(JobQueueOptions options, const MonotonicClock* clock)
    : options_(WithDefaultsForInvalid(options)), clock_(clock != nullptr ? clock : &OwnSteadyClock()) {}

absl::Duration UntypedJobQueue::NowAndReclaimLocked(absl::Duration read) {
  last_now_ = std::max(last_now_, read);
  ReclaimExpiredLocked(last_now_);
  return last_now_;
}

bool UntypedJobQueue::PollUntil(absl::Duration wait, absl::CondVar* wake,
                                absl::FunctionRef<bool(absl::Duration now)> try_once) {
  const absl::Duration real_deadline = RealNow() + std::max(wait, absl::ZeroDuration());
  while (true) {
    const absl::Duration read = clock_->Now();
    absl::MutexLock lock(&mutex_);
    const absl::Duration now = NowAndReclaimLocked(read);
    if (try_once(now)) return true;
    const absl::Duration remaining = real_deadline - RealNow();
    if (remaining <= absl::ZeroDuration()) return false;
    // Reclaiming left earliest_lease_end_ after now (or infinite). The floor keeps a lease that ends
    // a hair later on a clock that does not move (a fake one) from turning this into a spin.
    const absl::Duration until_a_lease_ends = std::max(earliest_lease_end_ - now, kShortestWait);
    wake->WaitWithTimeout(&mutex_, std::min(remaining, until_a_lease_ends));
  }
}

absl::Status UntypedJobQueue::Submit(std::string job_id, std::string platform, Payload job) {
  if (job_id.empty()) return absl::InvalidArgumentError("job id is empty");
  absl::MutexLock lock(&mutex_);
  if (closed_) return absl::FailedPreconditionError(absl::StrCat("job queue closed; job '", job_id, "' not queued"));
  auto [it, inserted] = jobs_.try_emplace(std::move(job_id));
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat("job '", it->first, "' was submitted before (now ",
                                                 StateName(it->second.state), ")"));
  }
  Entry& entry = it->second;
  entry.platform = std::move(platform);
  entry.sequence = next_sequence_++;
  entry.job = std::move(job);
  in_submission_order_.push_back(&*it);
  pending_.emplace(entry.sequence, &*it);
  WakeTakersForLocked(entry);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<UntypedJobQueue::Grant>> UntypedJobQueue::Take(const std::string& taker_id,
                                                                          const std::string& platform,
                                                                          int max_jobs, absl::Duration wait) {
  if (taker_id.empty()) return absl::InvalidArgumentError("taker id is empty");
  if (max_jobs < 1) return absl::InvalidArgumentError(absl::StrCat("max_jobs ", max_jobs, " < 1"));
  std::vector<Grant> grants;
  PollUntil(wait, &work_arrived_, [&](absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (closed_) return true;
    grants = GrantLocked(taker_id, platform, max_jobs, now);
    return !grants.empty();
  });
  return grants;
}

std::vector<UntypedJobQueue::Grant> UntypedJobQueue::GrantLocked(const std::string& taker_id,
                                                                 const std::string& platform, int max_jobs,
                                                                 absl::Duration now) {
  std::vector<Grant> grants;
  for (auto it = pending_.begin(); it != pending_.end() && static_cast<int>(grants.size()) < max_jobs;) {
    JobSlot* slot = it->second;
    Entry& entry = slot->second;
    const bool pinned_here = entry.platform.size() == taker_id.size() + 1 && entry.platform[0] == kPinnedToTaker &&
                             entry.platform.compare(1, std::string::npos, taker_id) == 0;
    if (!entry.platform.empty() && entry.platform != platform && !pinned_here) {
      ++it;
      continue;
    }
    it = pending_.erase(it);
    entry.state = JobState::kLeased;
    ++entry.attempt;
    entry.holders.push_back(taker_id);
    entry.lease_end = now + options_.lease;
    leased_.emplace(entry.sequence, slot);
    takers_[taker_id].held.emplace(entry.sequence, slot);
    earliest_lease_end_ = std::min(earliest_lease_end_, entry.lease_end);
    grants.push_back(Grant{.job_id = slot->first,
                           .attempt = entry.attempt,
                           .job = entry.job,
                           .lease_end = entry.lease_end,
                           .lease = options_.lease});
  }
  return grants;
}

void UntypedJobQueue::ReclaimExpiredLocked(absl::Duration now) {
  if (now < earliest_lease_end_) return;
  absl::Duration earliest = absl::InfiniteDuration();
  // Collected first: ending a lease erases from leased_.
  std::vector<JobSlot*> expired;
  for (const auto& [sequence, slot] : leased_) {
    if (slot->second.lease_end <= now) {
      expired.push_back(slot);
    } else {
      earliest = std::min(earliest, slot->second.lease_end);
    }
  }
  earliest_lease_end_ = earliest;
  for (JobSlot* slot : expired) {
    Entry& entry = slot->second;
    const std::string holder = entry.holders.back();
    EndLeaseLocked(slot);
    takers_[holder].revoked.push_back(slot->first);
    ++entry.lost_count;
    if (entry.lost_count >= options_.max_lost_attempts) {
      EndJobLocked(slot, JobState::kLost);
    } else {
      ReturnToPendingLocked(slot);
    }
  }
}

void UntypedJobQueue::EndLeaseLocked(JobSlot* slot) {
  const Entry& entry = slot->second;
  leased_.erase(entry.sequence);
  auto taker = takers_.find(entry.holders.back());
  if (taker == takers_.end()) return;
  taker->second.held.erase(entry.sequence);
  if (taker->second.held.empty() && taker->second.cancelled.empty() && taker->second.revoked.empty()) {
    takers_.erase(taker);
  }
}

void UntypedJobQueue::ReturnToPendingLocked(JobSlot* slot) {
  slot->second.state = JobState::kPending;
  pending_.emplace(slot->second.sequence, slot);
  WakeTakersForLocked(slot->second);
}

void UntypedJobQueue::WakeTakersForLocked(const Entry& entry) {
  // Any taker can take a job of no platform: wake one per job, not every waiting taker (with
  // thousands of long polls, waking them all for each job is thousands of lock hand-offs a job). A
  // job for one platform or one taker wakes them all, since the one woken might not match.
  if (entry.platform.empty()) {
    work_arrived_.Signal();
  } else {
    work_arrived_.SignalAll();
  }
}

void UntypedJobQueue::EndJobLocked(JobSlot* slot, JobState terminal) {
  slot->second.state = terminal;
  if (terminal == JobState::kDone) ++done_;
  if (terminal == JobState::kLost) ++lost_;
  if (terminal == JobState::kCancelled) ++cancelled_;
  job_ended_.SignalAll();
}

HeartbeatReply UntypedJobQueue::Heartbeat(const std::string& taker_id, const std::set<std::string>* holding) {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  const absl::Duration now = NowAndReclaimLocked(read);
  HeartbeatReply reply;
  reply.closing = closed_;
  auto taker = takers_.find(taker_id);
  if (taker == takers_.end()) return reply;
  for (const auto& [sequence, slot] : taker->second.held) {
    if (holding != nullptr && !holding->contains(slot->first)) {
      ++reply.leases_not_renewed;
      continue;
    }
    slot->second.lease_end = now + options_.lease;
    ++reply.leases_renewed;
  }
  reply.cancelled_job_ids.swap(taker->second.cancelled);
  reply.revoked_job_ids.swap(taker->second.revoked);
  if (taker->second.held.empty()) takers_.erase(taker);
  return reply;
}

ReportOutcome UntypedJobQueue::Report(const std::string& taker_id, const std::string& job_id, int attempt,
                                      Payload result) {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  NowAndReclaimLocked(read);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return ReportOutcome::kNotHeld;
  Entry& entry = it->second;
  if (attempt < 1 || attempt > static_cast<int>(entry.holders.size()) || entry.holders[attempt - 1] != taker_id) {
    return ReportOutcome::kNotHeld;
  }
  if (IsTerminal(entry.state)) return ReportOutcome::kDuplicate;
  // Held by this taker once; current only while leased to it for this attempt (reclaimed above, so
  // a lease still here has not expired).
  if (entry.state != JobState::kLeased || attempt != entry.attempt) return ReportOutcome::kStale;
  EndLeaseLocked(&*it);
  entry.result = std::move(result);
  EndJobLocked(&*it, JobState::kDone);
  return ReportOutcome::kAccepted;
}

absl::Status UntypedJobQueue::Release(const std::string& taker_id, const std::string& job_id, int attempt) {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  NowAndReclaimLocked(read);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job '", job_id, "'"));
  Entry& entry = it->second;
  if (entry.state != JobState::kLeased || entry.attempt != attempt || entry.holders.back() != taker_id) {
    return absl::FailedPreconditionError(absl::StrCat("taker '", taker_id, "' does not hold attempt ", attempt,
                                                      " of job '", job_id, "' (", StateName(entry.state),
                                                      ", attempt ", entry.attempt, ")"));
  }
  EndLeaseLocked(&*it);
  ReturnToPendingLocked(&*it);
  return absl::OkStatus();
}

void UntypedJobQueue::Cancel(const std::string& job_id) {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  NowAndReclaimLocked(read);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || IsTerminal(it->second.state)) return;
  Entry& entry = it->second;
  if (entry.state == JobState::kLeased) {
    const std::string holder = entry.holders.back();
    EndLeaseLocked(&*it);
    takers_[holder].cancelled.push_back(it->first);
  } else {
    pending_.erase(entry.sequence);
  }
  EndJobLocked(&*it, JobState::kCancelled);
}

absl::StatusOr<UntypedJobQueue::Outcome> UntypedJobQueue::Await(const std::string& job_id,
                                                                absl::Duration timeout) {
  std::optional<absl::StatusOr<Outcome>> answer;
  const bool answered =
      PollUntil(timeout, &job_ended_, [&](absl::Duration) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
        auto it = jobs_.find(job_id);
        if (it == jobs_.end()) {
          answer = absl::NotFoundError(absl::StrCat("no job '", job_id, "'"));
        } else if (IsTerminal(it->second.state)) {
          answer = OutcomeLocked(*it);
        } else if (closed_) {
          answer = absl::CancelledError(absl::StrCat("job queue closed before job '", job_id, "' ended (",
                                                     StateName(it->second.state), ")"));
        }
        return answer.has_value();
      });
  if (!answered) {
    return absl::DeadlineExceededError(
        absl::StrCat("job '", job_id, "' did not end within ", absl::FormatDuration(timeout)));
  }
  return *std::move(answer);
}

UntypedJobQueue::Outcome UntypedJobQueue::OutcomeLocked(const JobSlot& slot) const {
  const Entry& entry = slot.second;
  Outcome outcome;
  outcome.lost_attempts = entry.lost_count;
  switch (entry.state) {
    case JobState::kLost:
      outcome.kind = OutcomeKind::kLost;
      outcome.message = absl::StrCat("job ", slot.first, " lost its worker ", entry.lost_count, " times (lease ",
                                     absl::FormatDuration(options_.lease), ")");
      break;
    case JobState::kCancelled:
      outcome.kind = OutcomeKind::kCancelled;
      outcome.message = absl::StrCat("job ", slot.first, " was cancelled");
      break;
    default:
      outcome.kind = OutcomeKind::kResult;
      outcome.result = entry.result;
      break;
  }
  return outcome;
}

void UntypedJobQueue::ReclaimExpired() {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  NowAndReclaimLocked(read);
}

void UntypedJobQueue::RenewAllLeases() {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  // Renewed without reclaiming first: after a restart every lease deserves its window, even one that
  // ran out while the owner was down.
  last_now_ = std::max(last_now_, read);
  RenewAllLeasesLocked(last_now_);
}

void UntypedJobQueue::RenewAllLeasesLocked(absl::Duration now) {
  for (const auto& [sequence, slot] : leased_) slot->second.lease_end = now + options_.lease;
  if (!leased_.empty()) earliest_lease_end_ = now + options_.lease;
}

void UntypedJobQueue::Close() {
  absl::MutexLock lock(&mutex_);
  closed_ = true;
  work_arrived_.SignalAll();
  job_ended_.SignalAll();
}

JobQueueStats UntypedJobQueue::Stats() {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  NowAndReclaimLocked(read);
  return JobQueueStats{.pending = static_cast<int64_t>(pending_.size()),
                       .leased = static_cast<int64_t>(leased_.size()),
                       .done = done_,
                       .lost = lost_,
                       .cancelled = cancelled_};
}


}  // namespace sparseditto::jobs
