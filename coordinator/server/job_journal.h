// The coordinator's durable record of its evaluation jobs: a RocksDB database in a folder of its own
// (runs/<run>/jobs), one record per job (job_journal.proto). EvaluationWork writes a job before it can be
// pulled, each grant (its attempt and holder) before the grant is sent, and an accepted result before
// the worker's report is answered; every write is synced. After a coordinator restart (kill -9
// included) the records are read back and the queue is restored from them, every leased job with a
// fresh lease window (DESIGN.md §3.7), so that running workers can still report.
// Thread-safety: every method may be called from any thread (RocksDB's own locking).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job_journal.pb.h"

namespace rocksdb {
class DB;
}

namespace sparseditto {

class JobJournal {
 public:
  // Opens (making it when missing) the journal in `dir`. Unavailable: another process has it open (a
  // second coordinator on one run); Internal / DataLoss: it cannot be opened or is damaged.
  static absl::StatusOr<std::unique_ptr<JobJournal>> Open(const std::string& dir);
  ~JobJournal();
  JobJournal(const JobJournal&) = delete;
  JobJournal& operator=(const JobJournal&) = delete;

  // Writes (replaces) the record of record.job_id(), synced to disk before it returns.
  absl::Status Write(const v1::JournalJob& record);
  // Every record, in submission order (sequence). DataLoss names a record that does not parse.
  absl::StatusOr<std::vector<v1::JournalJob>> ReadAll() const;

 private:
  JobJournal(std::string dir, rocksdb::DB* db);
  const std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace sparseditto
