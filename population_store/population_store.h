// PopulationStore: the search's durable store, one RocksDB database in a directory (DESIGN.md §2).
//
// It holds, per run: the run record, the tasks (v1::Task by name), the candidates (v1::Candidate by id,
// listed in creation order, with an index by (task, source_hash) for duplicate detection and a
// parent -> children index for lineage), the evaluations (v1::EvalResult by candidate id) and the state
// of each task's search (store::RunState: status, attempts, the candidate in flight, and the
// coordinator's state as opaque bytes, which alone holds budgets spent, best and RNG position). It stores;
// it never selects, judges novelty or calls an LLM (coordinator/ does).
//
// Durability: every method that writes makes ONE RocksDB WriteBatch with sync=true, so each logical write
// is atomic and, once the method returns OK, survives a kill -9 or a power cut. A write refused by its
// checks has changed nothing. One that fails in RocksDB's I/O is not visible in this process, but its
// record may have reached the log before the failure and then appear, whole, after a reopen: treat its
// outcome as unknown, reopen and read. Replaying a write is harmless (identical records are accepted).
// After each write the store records RocksDB's sequence in its ledger (write_ledger.h), so an open that
// finds fewer records than were acknowledged (a damaged write-ahead log) fails with kDataLoss instead of
// going on without them. The key layout is in store_layout.h.
//
// Errors are absl::Status, never exceptions. Codes the methods return:
//   kInvalidArgument      an id is empty, longer than 1024 bytes or holds a NUL byte; a message is
//                         inconsistent with the call (e.g. a RunState for another task)
//   kNotFound             Get*: no such record
//   kFailedPrecondition   a write on a store opened read-only; a record refers to one that is not stored
//                         (a task of an unknown run, a candidate of an unknown task or parent, ...)
//   kAlreadyExists        a run, task or candidate is stored already with different content
//   kDataLoss             a stored value does not parse, or RocksDB reports corruption
//   kUnavailable, kResourceExhausted, kInternal   RocksDB I/O failures (rocksdb_status.h); after a
//                         failed write RocksDB may refuse further writes until the store is reopened
//
// Thread-safety: a PopulationStore may be used from any number of threads at once; every method is
// safe to call concurrently with every other. Writes are serialised by an internal mutex (their checks
// and their batch are atomic with respect to each other); reads take no lock, and each read sees one
// consistent point in time (List* and Children read through a snapshot). Only one process may have a
// store open for writing; any number may open it read-only alongside.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "store.pb.h"
#include "task.pb.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Env;
class Snapshot;
class WriteBatch;
}  // namespace rocksdb

namespace sparseditto {

class WriteLedger;

struct PopulationStoreOptions {
  // Make a new, empty store when `path` does not exist (or, with error_if_exists too, is an empty
  // directory: an empty store folder that is opened to resume is a store whose files were removed, and
  // is refused). Creation is atomic: the store is built in a sibling directory and renamed into place,
  // so `path` never holds half a store.
  bool create_if_missing = false;
  // With create_if_missing: fail with kAlreadyExists when `path` holds a store already.
  bool error_if_exists = false;
  // Open for reading only: every write returns kFailedPrecondition. The store shows what was durable
  // when it was opened (later writes by another process are not seen; reopen to see them). Works while
  // another process has the store open for writing.
  bool read_only = false;
  // RocksDB's memtable size in bytes; 0 keeps RocksDB's default (64 MiB). Small values flush often.
  size_t memtable_bytes = 0;

  // Test seams; leave unset in production.
  // Called once per logical write with the method's name ("CommitEvaluation", ...) after its batch is
  // built and before it is written; a non-OK status aborts the write and is returned by the method.
  std::function<absl::Status(std::string_view operation)> before_write;
  // The RocksDB environment (file system, clock); null: rocksdb::Env::Default(). Not owned; must
  // outlive the store.
  rocksdb::Env* env = nullptr;
};

// True when `a` and `b` ask for the same search: equal in every field but source_file and source_line
// (where the loader read them). Thread-safe.
bool SameTaskContent(const v1::Task& a, const v1::Task& b);

class PopulationStore {
 public:
  // Opens the store in directory `path`. Errors:
  //   kInvalidArgument     `path` is empty
  //   kNotFound            `path` does not exist or is an empty directory, and !create_if_missing or
  //                        read_only (a read-only open never creates)
  //   kAlreadyExists       create_if_missing && error_if_exists and `path` holds a store
  //   kFailedPrecondition  `path` is not a directory; a non-empty directory that is not a RocksDB
  //                        database; an empty directory opened with create_if_missing but not
  //                        error_if_exists (an emptied store is not replaced by a new one); a RocksDB
  //                        database that is not a population store; a store with a schema version this
  //                        build cannot read (the message names both versions)
  //   kPermissionDenied    the folder or its files cannot be read or locked by this user (said as such,
  //                        never as "not a store" or "open elsewhere")
  //   kUnavailable         another process (or this one) has the store open for writing
  //   kDataLoss            the store is corrupt: RocksDB's words (a damaged CURRENT, MANIFEST or table
  //                        file, a missing file), a missing column family, an unreadable meta record;
  //                        or acknowledged writes are missing (its write-ahead log was damaged,
  //                        truncated or removed: write_ledger.h), read-only opens included
  //   kInternal            the file system failed (creating the folder, renaming the new store)
  static absl::StatusOr<std::unique_ptr<PopulationStore>> Open(const std::string& path,
                                                               const PopulationStoreOptions& options);
  // Makes a new store at `path` (absent or an empty directory; missing parent folders are made) and
  // opens it for writing: Open with create_if_missing and error_if_exists.
  static absl::StatusOr<std::unique_ptr<PopulationStore>> Create(const std::string& path);
  // Opens an existing store read-only (`sparseditto status`).
  static absl::StatusOr<std::unique_ptr<PopulationStore>> OpenReadOnly(const std::string& path);

  // Closes the database. Every acknowledged write is durable already; nothing needs flushing here.
  ~PopulationStore();
  PopulationStore(const PopulationStore&) = delete;
  PopulationStore& operator=(const PopulationStore&) = delete;

  const std::string& path() const { return path_; }
  bool read_only() const { return options_.read_only; }

  // --- Runs ---
  // Stores a new run. Storing an identical record again is OK; a different one under the same id is
  // kAlreadyExists.
  absl::Status CreateRun(const store::RunRecord& run);
  absl::StatusOr<store::RunRecord> GetRun(std::string_view run_id) const;
  // Every run, ordered by id.
  absl::StatusOr<std::vector<store::RunRecord>> ListRuns() const;

  // --- Tasks (the run must exist) ---
  // Idempotent for a task of the same content (SameTaskContent: where its file lives does not count, so
  // a run resumes from a moved task file; the record stored first is kept); kAlreadyExists when the
  // name is stored with other content.
  absl::Status PutTask(std::string_view run_id, const v1::Task& task);
  absl::StatusOr<v1::Task> GetTask(std::string_view run_id, std::string_view task_name) const;
  // The run's tasks ordered by name; empty for an unknown run.
  absl::StatusOr<std::vector<v1::Task>> ListTasks(std::string_view run_id) const;

  // --- Candidates ---
  // Stores candidates and, when given, the task's new run state, in one atomic write (a mutation's
  // children together with the advanced RNG state). Each candidate needs a non-empty id unique in the
  // run, a stored task (task_name), and parents that are stored or earlier in `candidates`; new_state
  // needs a stored task, and its in_flight_candidate_id, when set, may be one of `candidates`. A candidate
  // already stored with identical content is skipped (so a write replayed after a crash is harmless);
  // with other content it is kAlreadyExists. The first candidate stored with a given (task,
  // source_hash) is the one FindBySourceHash returns; an empty source_hash is not indexed.
  absl::Status CommitCandidates(std::string_view run_id, const std::vector<v1::Candidate>& candidates,
                                const std::optional<store::RunState>& new_state);
  // CommitCandidates({candidate}, std::nullopt).
  absl::Status PutCandidate(std::string_view run_id, const v1::Candidate& candidate);
  absl::StatusOr<v1::Candidate> GetCandidate(std::string_view run_id, std::string_view candidate_id) const;
  // A task's candidates in the order they were stored (not by created_unix_ms). Reads every source: on
  // a long run that is megabytes.
  absl::StatusOr<std::vector<v1::Candidate>> ListCandidates(std::string_view run_id,
                                                            std::string_view task_name) const;
  // The first candidate of `task_name` stored with `source_hash`, or nullopt.
  absl::StatusOr<std::optional<v1::Candidate>> FindBySourceHash(std::string_view run_id,
                                                                std::string_view task_name,
                                                                std::string_view source_hash) const;
  // Ids of the candidates naming `candidate_id` among their parents, in the order they were stored;
  // empty when there are none or the candidate is unknown.
  absl::StatusOr<std::vector<std::string>> Children(std::string_view run_id,
                                                    std::string_view candidate_id) const;

  // --- Evaluations and run state ---
  // One atomic write: the evaluation (replacing an earlier one of the same candidate, e.g. when a
  // finalist is re-evaluated under the sanitizers) and the task's new run state (status, the
  // coordinator's state), both computed by the caller. The candidate must be stored, and
  // result.task_name, the candidate's task and new_state.task_name must agree; a non-empty
  // new_state.in_flight_candidate_id must be a stored candidate of the task.
  absl::Status CommitEvaluation(std::string_view run_id, const v1::EvalResult& result,
                                const store::RunState& new_state);
  absl::StatusOr<v1::EvalResult> GetEvaluation(std::string_view run_id, std::string_view candidate_id) const;
  // kNotFound until a state is stored for the task.
  absl::StatusOr<store::RunState> GetRunState(std::string_view run_id, std::string_view task_name) const;
  // Replaces the task's run state (status changes, the candidate now in flight, ...). The task must be
  // stored; the same checks on in_flight_candidate_id as CommitEvaluation.
  absl::Status PutRunState(std::string_view run_id, const store::RunState& state);

 private:
  struct Handles;  // the DB and its column family handles
  PopulationStore(std::string path, PopulationStoreOptions options, std::unique_ptr<Handles> handles,
                  std::unique_ptr<WriteLedger> ledger, uint64_t next_sequence);

  rocksdb::ColumnFamilyHandle* Cf(int column_family) const;
  absl::Status CheckWritable(std::string_view operation) const;
  // Runs the test hook, then writes `batch` with sync=true.
  absl::Status Write(std::string_view operation, rocksdb::WriteBatch& batch);
  // The value at `key` (as of `snapshot`, or now when null), nullopt when absent.
  absl::StatusOr<std::optional<std::string>> ReadRaw(int column_family, const std::string& key,
                                                     const rocksdb::Snapshot* snapshot = nullptr) const;
  // Checks (write lock held) that `state` may be stored in `run_id`: its task is stored and its
  // in-flight candidate, if any, is a candidate of that task, stored or in `batch` (may be null).
  absl::Status CheckRunState(std::string_view run_id, const store::RunState& state,
                             const std::vector<v1::Candidate>* batch) const;

  const std::string path_;
  const PopulationStoreOptions options_;
  std::unique_ptr<Handles> handles_;
  std::unique_ptr<WriteLedger> ledger_;  // null when read-only; used under write_mu_
  std::mutex write_mu_;
  uint64_t next_sequence_;  // guarded by write_mu_
};

}  // namespace sparseditto
