// PopulationStore's reads: point lookups, and listings through one snapshot.
#include <cstring>
#include <functional>

#include "common/status_macros.h"
#include "population_store/population_store_internal.h"
#include "population_store/rocksdb_status.h"

namespace sparseditto {
namespace {

namespace layout = store_layout;

bool StartsWith(const rocksdb::Slice& key, const std::string& prefix) {
  return key.size() >= prefix.size() && std::memcmp(key.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

rocksdb::ColumnFamilyHandle* PopulationStore::Cf(int column_family) const {
  return handles_->ours[column_family];
}

absl::StatusOr<std::optional<std::string>> PopulationStore::ReadRaw(int column_family, const std::string& key,
                                                                    const rocksdb::Snapshot* snapshot) const {
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot;
  std::string value;
  const rocksdb::Status status = handles_->db->Get(read_options, Cf(column_family), key, &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  SD_RETURN_IF_ERROR(FromRocksDb(status, fmt::format("cannot read the store at {}", path_)));
  return std::optional<std::string>(std::move(value));
}

namespace {

// Calls `visit(key, value)` for every key of `column_family` starting with `prefix`, in key order.
absl::Status ScanPrefix(
    rocksdb::DB* db, rocksdb::ColumnFamilyHandle* column_family, const rocksdb::Snapshot* snapshot,
    const std::string& prefix, const std::string& path,
    const std::function<absl::Status(const rocksdb::Slice&, const rocksdb::Slice&)>& visit) {
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(read_options, column_family));
  for (it->Seek(prefix); it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
    SD_RETURN_IF_ERROR(visit(it->key(), it->value()));
  }
  return FromRocksDb(it->status(), fmt::format("cannot read the store at {}", path));
}

}  // namespace

absl::StatusOr<store::RunRecord> PopulationStore::GetRun(std::string_view run_id) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes, ReadRaw(layout::kRuns, std::string(run_id)));
  if (!bytes) return absl::NotFoundError(fmt::format("run {} is not stored in {}", run_id, path_));
  return ParseRecord<store::RunRecord>(*bytes, fmt::format("run {}", run_id));
}

absl::StatusOr<std::vector<store::RunRecord>> PopulationStore::ListRuns() const {
  std::vector<store::RunRecord> runs;
  SD_RETURN_IF_ERROR(ScanPrefix(handles_->db.get(), Cf(layout::kRuns), nullptr, "", path_,
                                [&](const rocksdb::Slice& key, const rocksdb::Slice& value) -> absl::Status {
                                  SD_ASSIGN_OR_RETURN(store::RunRecord run,
                                                      ParseRecord<store::RunRecord>(value.ToString(),
                                                                                    "run " + key.ToString()));
                                  runs.push_back(std::move(run));
                                  return absl::OkStatus();
                                }));
  return runs;
}

absl::StatusOr<v1::Task> PopulationStore::GetTask(std::string_view run_id, std::string_view task_name) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("task name", task_name));
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                      ReadRaw(layout::kTasks, layout::Key({run_id, task_name})));
  if (!bytes) {
    return absl::NotFoundError(fmt::format("task {} is not stored in run {}", task_name, run_id));
  }
  return ParseRecord<v1::Task>(*bytes, fmt::format("task {} of run {}", task_name, run_id));
}

absl::StatusOr<std::vector<v1::Task>> PopulationStore::ListTasks(std::string_view run_id) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  std::vector<v1::Task> tasks;
  SD_RETURN_IF_ERROR(ScanPrefix(
      handles_->db.get(), Cf(layout::kTasks), nullptr, layout::Prefix({run_id}), path_,
      [&](const rocksdb::Slice&, const rocksdb::Slice& value) -> absl::Status {
        SD_ASSIGN_OR_RETURN(v1::Task task,
                            ParseRecord<v1::Task>(value.ToString(), fmt::format("a task of run {}", run_id)));
        tasks.push_back(std::move(task));
        return absl::OkStatus();
      }));
  return tasks;
}

absl::StatusOr<v1::Candidate> PopulationStore::GetCandidate(std::string_view run_id,
                                                            std::string_view candidate_id) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("candidate id", candidate_id));
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                      ReadRaw(layout::kCandidates, layout::Key({run_id, candidate_id})));
  if (!bytes) {
    return absl::NotFoundError(fmt::format("candidate {} is not stored in run {}", candidate_id, run_id));
  }
  return ParseRecord<v1::Candidate>(*bytes, fmt::format("candidate {} of run {}", candidate_id, run_id));
}

absl::StatusOr<std::vector<v1::Candidate>> PopulationStore::ListCandidates(std::string_view run_id,
                                                                           std::string_view task_name) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("task name", task_name));
  const ScopedSnapshot snapshot(handles_->db.get());
  std::vector<v1::Candidate> candidates;
  SD_RETURN_IF_ERROR(ScanPrefix(
      handles_->db.get(), Cf(layout::kCreationOrder), snapshot.get(), layout::Prefix({run_id, task_name}),
      path_, [&](const rocksdb::Slice&, const rocksdb::Slice& id) -> absl::Status {
        SD_ASSIGN_OR_RETURN(
            std::optional<std::string> bytes,
            ReadRaw(layout::kCandidates, layout::Key({run_id, id.ToStringView()}), snapshot.get()));
        if (!bytes) {
          return absl::DataLossError(fmt::format(
              "the creation order of task {} lists candidate {}, which is not stored; the store at {} "
              "is corrupt",
              task_name, id.ToStringView(), path_));
        }
        SD_ASSIGN_OR_RETURN(v1::Candidate candidate,
                            ParseRecord<v1::Candidate>(*bytes, "candidate " + id.ToString()));
        candidates.push_back(std::move(candidate));
        return absl::OkStatus();
      }));
  return candidates;
}

absl::StatusOr<std::optional<v1::Candidate>> PopulationStore::FindBySourceHash(
    std::string_view run_id, std::string_view task_name, std::string_view source_hash) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("task name", task_name));
  if (source_hash.empty()) return std::optional<v1::Candidate>();
  const ScopedSnapshot snapshot(handles_->db.get());
  SD_ASSIGN_OR_RETURN(
      std::optional<std::string> id,
      ReadRaw(layout::kSourceHashes, layout::Key({run_id, task_name, source_hash}), snapshot.get()));
  if (!id) return std::optional<v1::Candidate>();
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                      ReadRaw(layout::kCandidates, layout::Key({run_id, *id}), snapshot.get()));
  if (!bytes) {
    return absl::DataLossError(fmt::format(
        "the source-hash index of task {} names candidate {}, which is not stored; the store at {} is "
        "corrupt",
        task_name, *id, path_));
  }
  SD_ASSIGN_OR_RETURN(v1::Candidate candidate, ParseRecord<v1::Candidate>(*bytes, "candidate " + *id));
  return std::optional<v1::Candidate>(std::move(candidate));
}

absl::StatusOr<std::vector<std::string>> PopulationStore::Children(std::string_view run_id,
                                                                   std::string_view candidate_id) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("candidate id", candidate_id));
  std::vector<std::string> children;
  SD_RETURN_IF_ERROR(ScanPrefix(handles_->db.get(), Cf(layout::kLineage), nullptr,
                                layout::Prefix({run_id, candidate_id}), path_,
                                [&](const rocksdb::Slice&, const rocksdb::Slice& child) {
                                  children.push_back(child.ToString());
                                  return absl::OkStatus();
                                }));
  return children;
}

absl::StatusOr<v1::EvalResult> PopulationStore::GetEvaluation(std::string_view run_id,
                                                              std::string_view candidate_id) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("candidate id", candidate_id));
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                      ReadRaw(layout::kEvaluations, layout::Key({run_id, candidate_id})));
  if (!bytes) {
    return absl::NotFoundError(
        fmt::format("no evaluation of candidate {} is stored in run {}", candidate_id, run_id));
  }
  return ParseRecord<v1::EvalResult>(
      *bytes, fmt::format("the evaluation of candidate {} of run {}", candidate_id, run_id));
}

absl::StatusOr<store::RunState> PopulationStore::GetRunState(std::string_view run_id,
                                                             std::string_view task_name) const {
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("task name", task_name));
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                      ReadRaw(layout::kRunStates, layout::Key({run_id, task_name})));
  if (!bytes) {
    return absl::NotFoundError(fmt::format("no run state of task {} is stored in run {}", task_name, run_id));
  }
  return ParseRecord<store::RunState>(*bytes,
                                      fmt::format("the run state of task {} of run {}", task_name, run_id));
}

}  // namespace sparseditto
