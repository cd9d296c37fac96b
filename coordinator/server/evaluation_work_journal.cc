// EvaluationWork's durable side (evaluation_work.h, job_journal.h): the journal's records written as
// jobs change, and a coordinator's queue restored from them after a restart.
#include <utility>

#include "coordinator/server/evaluation_work.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

jobs::JobState FromJournal(v1::JournalJobState state) {
  switch (state) {
    case v1::JOURNAL_JOB_STATE_LEASED: return jobs::JobState::kLeased;
    case v1::JOURNAL_JOB_STATE_DONE: return jobs::JobState::kDone;
    case v1::JOURNAL_JOB_STATE_LOST: return jobs::JobState::kLost;
    case v1::JOURNAL_JOB_STATE_CANCELLED: return jobs::JobState::kCancelled;
    default: return jobs::JobState::kPending;
  }
}

}  // namespace

absl::Status EvaluationWork::Journal(const std::string& job_id, const std::function<void(v1::JournalJob&)>& change) {
  return JournalAll({job_id}, [&](size_t, v1::JournalJob& r) { change(r); });
}

absl::Status EvaluationWork::JournalAll(const std::vector<std::string>& job_ids,
                                        const std::function<void(size_t, v1::JournalJob&)>& change) {
  if (journal_ == nullptr) return absl::OkStatus();
  std::vector<v1::JournalJob> records;
  {
    absl::MutexLock lock(&mutex_);
    for (size_t i = 0; i < job_ids.size(); ++i) {
      auto it = records_.find(job_ids[i]);
      if (it == records_.end()) continue;  // not a job of ours (a forged id): nothing to keep
      change(i, it->second);
      records.push_back(it->second);
    }
  }
  return journal_->WriteAll(records);  // outside mutex_: the sync takes milliseconds
}

absl::StatusOr<std::unique_ptr<EvaluationWork>> EvaluationWork::Restore(EvaluationWorkOptions options,
                                                                        JobJournal* journal,
                                                                        const jobs::MonotonicClock* clock) {
  absl::StatusOr<std::vector<v1::JournalJob>> records = journal->ReadAll();
  if (!records.ok()) return records.status();
  auto work = std::make_unique<EvaluationWork>(options, clock);
  std::vector<Queue::Record> restored;
  {
    absl::MutexLock lock(&work->mutex_);
    // The populations' platforms, from their jobs: a restarted coordinator keeps each on its GPU model.
    for (const v1::JournalJob& r : *records) {
      if (r.platform().empty() || r.platform()[0] == jobs::kPinnedToTaker) continue;
      work->population_platforms_[PopulationKey(r.job().run(), r.job().task().name())] = r.platform();
    }
    for (v1::JournalJob& r : *records) {
      // Sessions do not survive a restart: a job pinned to one goes to any worker of its population's
      // platform (any worker at all when it has none).
      if (!r.platform().empty() && r.platform()[0] == jobs::kPinnedToTaker) {
        r.set_platform(work->PlatformOfLocked(r.job().run(), r.job().task().name()));
      }
      Queue::Record q{.job_id = r.job_id(),
                      .platform = r.platform(),
                      .job = r.job(),
                      .state = FromJournal(r.state()),
                      .attempt = r.attempt(),
                      .lost_count = r.lost_count(),
                      .holders = {r.holders().begin(), r.holders().end()},
                      .result = std::nullopt};
      if (q.state == jobs::JobState::kDone) q.result = r.result();
      restored.push_back(std::move(q));
      work->job_subjects_[r.job_id()] = {.candidate_id = r.job().candidate().id(), .task_name = r.job().task().name()};
      work->next_sequence_ = std::max(work->next_sequence_, r.sequence() + 1);
      work->records_[r.job_id()] = std::move(r);
    }
  }
  absl::StatusOr<std::unique_ptr<Queue>> queue = Queue::Restore(
      std::move(restored), {.lease = options.lease, .max_lost_attempts = options.max_lost_attempts}, work->clock_);
  if (!queue.ok()) {
    return absl::DataLossError(fmt::format("the job journal holds what the queue cannot take: {}", queue.status().message()));
  }
  work->queue_ = *std::move(queue);
  work->journal_ = journal;
  return work;
}

}  // namespace sparseditto
