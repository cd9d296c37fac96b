// UntypedJobQueue::Snapshot and Restore: the queue as plain records and back.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "coordinator/jobs/untyped_job_queue.h"

namespace sparseditto::jobs {
namespace {

absl::Status CheckRecord(const UntypedJobQueue::Record& record) {
  const std::string where = absl::StrCat("snapshot record of job '", record.job_id, "': ");
  if (record.job_id.empty()) return absl::InvalidArgumentError("snapshot record with an empty job id");
  if (record.job == nullptr) return absl::InvalidArgumentError(where + "no job payload");
  if (record.attempt < 0 || record.lost_count < 0) {
    return absl::InvalidArgumentError(where + "negative attempt or lost count");
  }
  if (static_cast<size_t>(record.attempt) != record.holders.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "attempt ", record.attempt, " but ",
                                                   record.holders.size(), " holders"));
  }
  if (record.state == JobState::kLeased && record.attempt < 1) {
    return absl::InvalidArgumentError(where + "leased but never granted");
  }
  if ((record.state == JobState::kDone) != (record.result != nullptr)) {
    return absl::InvalidArgumentError(where + "a result must be present exactly when done");
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<UntypedJobQueue::Record> UntypedJobQueue::Snapshot() {
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  NowAndReclaimLocked(read);
  std::vector<Record> records;
  records.reserve(in_submission_order_.size());
  for (const JobSlot* slot : in_submission_order_) {
    const Entry& entry = slot->second;
    records.push_back(Record{.job_id = slot->first,
                             .platform = entry.platform,
                             .job = entry.job,
                             .state = entry.state,
                             .attempt = entry.attempt,
                             .lost_count = entry.lost_count,
                             .holders = entry.holders,
                             .result = entry.result});
  }
  return records;
}

absl::Status UntypedJobQueue::Restore(std::vector<Record> records) {
  absl::flat_hash_set<std::string> ids;
  for (const Record& record : records) {
    if (absl::Status checked = CheckRecord(record); !checked.ok()) return checked;
    if (!ids.insert(record.job_id).second) {
      return absl::InvalidArgumentError(absl::StrCat("snapshot repeats job '", record.job_id, "'"));
    }
  }
  const absl::Duration read = clock_->Now();
  absl::MutexLock lock(&mutex_);
  if (!jobs_.empty()) return absl::FailedPreconditionError("Restore into a job queue that already has jobs");
  for (Record& record : records) {
    auto [it, inserted] = jobs_.try_emplace(std::move(record.job_id));
    JobSlot* slot = &*it;
    Entry& entry = it->second;
    entry = Entry{.platform = std::move(record.platform),
                  .sequence = next_sequence_++,
                  .job = std::move(record.job),
                  .state = record.state,
                  .attempt = record.attempt,
                  .lost_count = record.lost_count,
                  .holders = std::move(record.holders),
                  .lease_end = absl::ZeroDuration(),  // RenewAllLeasesLocked below
                  .result = std::move(record.result)};
    in_submission_order_.push_back(slot);
    if (entry.state == JobState::kPending) pending_.emplace(entry.sequence, slot);
    if (entry.state == JobState::kLeased) {
      leased_.emplace(entry.sequence, slot);
      takers_[entry.holders.back()].held.emplace(entry.sequence, slot);
    }
    if (IsTerminal(entry.state)) EndJobLocked(slot, entry.state);
  }
  last_now_ = std::max(last_now_, read);
  RenewAllLeasesLocked(last_now_);
  work_arrived_.SignalAll();
  return absl::OkStatus();
}

}  // namespace sparseditto::jobs
