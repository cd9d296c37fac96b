// The coordinator's durable record of its evaluation jobs: a RocksDB database in a folder of its own
// (runs/<run>/jobs), one record per job (job_journal.proto). EvaluationWork writes a job before it can be
// pulled, each grant (its attempt and holder) before the grant is sent, and an accepted result before
// the worker's report is answered; every write is synced. After a coordinator restart (kill -9
// included) the records are read back and the queue is restored from them, every leased job with a
// fresh lease window (DESIGN.md §3.7), so that running workers can still report.
//
// Group commit: each Write/WriteAll is one RocksDB write with sync, and RocksDB joins the writes of
// concurrent callers into one write group with one WAL sync (its leader syncs for all; each caller
// returns once the group holding its records is durable). A caller with many records at once (a batch
// of submitted jobs, the grants of one pull) passes them to one WriteAll: one WriteBatch, one sync,
// all or none of them written.
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
  // Writes (replaces) every record of `records` in one atomic, synced write: after a crash either all
  // of them are read back or none (a job id named twice: the later record). Nothing to write: OK at
  // once. Errors as Write, naming the first job and how many were in the batch.
  absl::Status WriteAll(const std::vector<v1::JournalJob>& records);
  // Every record, in submission order (sequence). DataLoss names a record that does not parse.
  absl::StatusOr<std::vector<v1::JournalJob>> ReadAll() const;

 private:
  JobJournal(std::string dir, rocksdb::DB* db);
  const std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace sparseditto
