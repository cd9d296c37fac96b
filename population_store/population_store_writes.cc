// PopulationStore's writes: each checks what it refers to, builds ONE WriteBatch and writes it with
// sync=true, all under the write mutex.
#include <map>
#include <set>

#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "population_store/population_store_internal.h"
#include "population_store/write_ledger.h"
#include "population_store/rocksdb_status.h"
#include "rocksdb/write_batch.h"

namespace sparseditto {
namespace {

namespace layout = store_layout;

void Put(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* column_family, const std::string& key,
         const std::string& value) {
  // WriteBatch::Put fails only for keys or values over 4 GiB.
  batch.Put(column_family, key, value).PermitUncheckedError();
}

}  // namespace

bool SameTaskContent(const v1::Task& a, const v1::Task& b) {
  v1::Task a_content = a;
  v1::Task b_content = b;
  for (v1::Task* t : {&a_content, &b_content}) {
    t->clear_source_file();
    t->clear_source_line();
  }
  return google::protobuf::util::MessageDifferencer::Equals(a_content, b_content);
}

absl::Status PopulationStore::CheckWritable(std::string_view operation) const {
  if (options_.read_only) {
    return absl::FailedPreconditionError(
        fmt::format("{}: the store at {} is open read-only", operation, path_));
  }
  return absl::OkStatus();
}

absl::Status PopulationStore::Write(std::string_view operation, rocksdb::WriteBatch& batch) {
  if (options_.before_write) SD_RETURN_IF_ERROR(options_.before_write(operation));
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  SD_RETURN_IF_ERROR(FromRocksDb(handles_->db->Write(write_options, &batch),
                                 fmt::format("{}: cannot write to the store at {}", operation, path_)));
  // The write is durable; the ledger lets a later open tell if the log loses it (write_ledger.h).
  return ledger_->Record(handles_->db->GetLatestSequenceNumber());
}

absl::Status PopulationStore::CreateRun(const store::RunRecord& run) {
  SD_RETURN_IF_ERROR(CheckWritable("CreateRun"));
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run.run_id()));
  const std::string bytes = run.SerializeAsString();
  std::lock_guard lock(write_mu_);
  SD_ASSIGN_OR_RETURN(std::optional<std::string> stored, ReadRaw(layout::kRuns, run.run_id()));
  if (stored) {
    if (*stored == bytes) return absl::OkStatus();
    return absl::AlreadyExistsError(
        fmt::format("run {} is stored in {} already, with a different record", run.run_id(), path_));
  }
  rocksdb::WriteBatch batch;
  Put(batch, Cf(layout::kRuns), run.run_id(), bytes);
  return Write("CreateRun", batch);
}

absl::Status PopulationStore::PutTask(std::string_view run_id, const v1::Task& task) {
  SD_RETURN_IF_ERROR(CheckWritable("PutTask"));
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  SD_RETURN_IF_ERROR(layout::CheckId("task name", task.name()));
  const std::string bytes = task.SerializeAsString();
  const std::string key = layout::Key({run_id, task.name()});
  std::lock_guard lock(write_mu_);
  SD_ASSIGN_OR_RETURN(std::optional<std::string> run, ReadRaw(layout::kRuns, std::string(run_id)));
  if (!run) {
    return absl::FailedPreconditionError(
        fmt::format("PutTask {}: run {} is not stored; CreateRun first", task.name(), run_id));
  }
  SD_ASSIGN_OR_RETURN(std::optional<std::string> stored, ReadRaw(layout::kTasks, key));
  if (stored) {
    SD_ASSIGN_OR_RETURN(v1::Task stored_task, ParseRecord<v1::Task>(*stored, "task " + task.name()));
    if (SameTaskContent(stored_task, task)) return absl::OkStatus();
    return absl::AlreadyExistsError(
        fmt::format("task {} is stored in run {} already, with different content", task.name(), run_id));
  }
  rocksdb::WriteBatch batch;
  Put(batch, Cf(layout::kTasks), key, bytes);
  return Write("PutTask", batch);
}

absl::Status PopulationStore::CheckRunState(std::string_view run_id, const store::RunState& state,
                                            const std::vector<v1::Candidate>* batch) const {
  SD_RETURN_IF_ERROR(layout::CheckId("task name of the run state", state.task_name()));
  SD_ASSIGN_OR_RETURN(std::optional<std::string> task,
                      ReadRaw(layout::kTasks, layout::Key({run_id, state.task_name()})));
  if (!task) {
    return absl::FailedPreconditionError(fmt::format("run state of task {}: task {} is not stored in run {}",
                                                     state.task_name(), state.task_name(), run_id));
  }
  const std::string& in_flight = state.in_flight_candidate_id();
  if (in_flight.empty()) return absl::OkStatus();
  SD_RETURN_IF_ERROR(layout::CheckId("in-flight candidate id", in_flight));
  std::string in_flight_task;
  bool found = false;
  if (batch != nullptr) {
    for (const v1::Candidate& candidate : *batch) {
      if (candidate.id() == in_flight) {
        in_flight_task = candidate.task_name();
        found = true;
      }
    }
  }
  if (!found) {
    SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                        ReadRaw(layout::kCandidates, layout::Key({run_id, in_flight})));
    if (bytes) {
      SD_ASSIGN_OR_RETURN(v1::Candidate candidate, ParseRecord<v1::Candidate>(*bytes, "candidate " + in_flight));
      in_flight_task = candidate.task_name();
      found = true;
    }
  }
  if (!found || in_flight_task != state.task_name()) {
    return absl::FailedPreconditionError(
        fmt::format("run state of task {}: in-flight candidate {} is not a stored candidate of the task",
                    state.task_name(), in_flight));
  }
  return absl::OkStatus();
}

absl::Status PopulationStore::PutCandidate(std::string_view run_id, const v1::Candidate& candidate) {
  return CommitCandidates(run_id, {candidate}, std::nullopt);
}

absl::Status PopulationStore::CommitCandidates(std::string_view run_id,
                                               const std::vector<v1::Candidate>& candidates,
                                               const std::optional<store::RunState>& new_state) {
  SD_RETURN_IF_ERROR(CheckWritable("CommitCandidates"));
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  std::lock_guard lock(write_mu_);
  SD_ASSIGN_OR_RETURN(std::optional<std::string> run, ReadRaw(layout::kRuns, std::string(run_id)));
  if (!run) {
    return absl::FailedPreconditionError(
        fmt::format("CommitCandidates: run {} is not stored; CreateRun first", run_id));
  }
  rocksdb::WriteBatch batch;
  uint64_t sequence = next_sequence_;
  std::set<std::string> ids_in_batch;
  std::set<std::string> tasks_seen;
  std::set<std::string> hash_keys_in_batch;
  for (const v1::Candidate& candidate : candidates) {
    const std::string& id = candidate.id();
    SD_RETURN_IF_ERROR(layout::CheckId("candidate id", id));
    SD_RETURN_IF_ERROR(layout::CheckId(fmt::format("task name of candidate {}", id), candidate.task_name()));
    if (!ids_in_batch.insert(id).second) {
      return absl::InvalidArgumentError(fmt::format("candidate {} appears twice in one commit", id));
    }
    const std::string bytes = candidate.SerializeAsString();
    const std::string key = layout::Key({run_id, id});
    SD_ASSIGN_OR_RETURN(std::optional<std::string> stored, ReadRaw(layout::kCandidates, key));
    if (stored) {
      if (*stored == bytes) continue;  // a replayed write
      return absl::AlreadyExistsError(
          fmt::format("candidate {} is stored in run {} already, with different content", id, run_id));
    }
    if (!tasks_seen.contains(candidate.task_name())) {
      SD_ASSIGN_OR_RETURN(std::optional<std::string> task,
                          ReadRaw(layout::kTasks, layout::Key({run_id, candidate.task_name()})));
      if (!task) {
        return absl::FailedPreconditionError(
            fmt::format("candidate {}: task {} is not stored in run {}", id, candidate.task_name(), run_id));
      }
      tasks_seen.insert(candidate.task_name());
    }
    const std::string encoded_sequence = layout::EncodeSequence(sequence++);
    for (const std::string& parent : candidate.parent_ids()) {
      SD_RETURN_IF_ERROR(layout::CheckId(fmt::format("parent id of candidate {}", id), parent));
      if (parent == id) {
        return absl::InvalidArgumentError(fmt::format("candidate {} names itself as a parent", id));
      }
      if (!ids_in_batch.contains(parent)) {
        SD_ASSIGN_OR_RETURN(std::optional<std::string> stored_parent,
                            ReadRaw(layout::kCandidates, layout::Key({run_id, parent})));
        if (!stored_parent) {
          return absl::FailedPreconditionError(
              fmt::format("candidate {}: parent {} is not stored in run {}", id, parent, run_id));
        }
      }
      Put(batch, Cf(layout::kLineage), layout::Key({run_id, parent, encoded_sequence}), id);
    }
    Put(batch, Cf(layout::kCandidates), key, bytes);
    Put(batch, Cf(layout::kCreationOrder), layout::Key({run_id, candidate.task_name(), encoded_sequence}),
        id);
    if (!candidate.source_hash().empty()) {
      const std::string hash_key = layout::Key({run_id, candidate.task_name(), candidate.source_hash()});
      SD_ASSIGN_OR_RETURN(std::optional<std::string> first, ReadRaw(layout::kSourceHashes, hash_key));
      if (!first && hash_keys_in_batch.insert(hash_key).second) {
        Put(batch, Cf(layout::kSourceHashes), hash_key, id);
      }
    }
  }
  if (new_state) {
    SD_RETURN_IF_ERROR(CheckRunState(run_id, *new_state, &candidates));
    Put(batch, Cf(layout::kRunStates), layout::Key({run_id, new_state->task_name()}),
        new_state->SerializeAsString());
  }
  if (batch.Count() == 0) return absl::OkStatus();
  if (sequence != next_sequence_) {
    Put(batch, Cf(layout::kMeta), std::string(layout::kMetaNextSequenceKey),
        layout::EncodeSequence(sequence));
  }
  SD_RETURN_IF_ERROR(Write("CommitCandidates", batch));
  next_sequence_ = sequence;
  return absl::OkStatus();
}

absl::Status PopulationStore::CommitEvaluation(std::string_view run_id, const v1::EvalResult& result,
                                               const store::RunState& new_state) {
  SD_RETURN_IF_ERROR(CheckWritable("CommitEvaluation"));
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  const std::string& id = result.candidate_id();
  SD_RETURN_IF_ERROR(layout::CheckId("candidate id of the evaluation", id));
  if (result.task_name() != new_state.task_name()) {
    return absl::InvalidArgumentError(fmt::format(
        "CommitEvaluation of candidate {}: the evaluation is of task '{}' but the run state of task '{}'", id,
        result.task_name(), new_state.task_name()));
  }
  std::lock_guard lock(write_mu_);
  SD_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                      ReadRaw(layout::kCandidates, layout::Key({run_id, id})));
  if (!bytes) {
    return absl::FailedPreconditionError(
        fmt::format("CommitEvaluation: candidate {} is not stored in run {}; store it first", id, run_id));
  }
  SD_ASSIGN_OR_RETURN(v1::Candidate candidate, ParseRecord<v1::Candidate>(*bytes, "candidate " + id));
  if (candidate.task_name() != result.task_name()) {
    return absl::InvalidArgumentError(
        fmt::format("CommitEvaluation: the evaluation names task '{}' but candidate {} belongs to '{}'",
                    result.task_name(), id, candidate.task_name()));
  }
  SD_RETURN_IF_ERROR(CheckRunState(run_id, new_state, nullptr));
  rocksdb::WriteBatch batch;
  Put(batch, Cf(layout::kEvaluations), layout::Key({run_id, id}), result.SerializeAsString());
  Put(batch, Cf(layout::kRunStates), layout::Key({run_id, new_state.task_name()}),
      new_state.SerializeAsString());
  return Write("CommitEvaluation", batch);
}

absl::Status PopulationStore::PutRunState(std::string_view run_id, const store::RunState& state) {
  SD_RETURN_IF_ERROR(CheckWritable("PutRunState"));
  SD_RETURN_IF_ERROR(layout::CheckId("run id", run_id));
  std::lock_guard lock(write_mu_);
  SD_RETURN_IF_ERROR(CheckRunState(run_id, state, nullptr));
  rocksdb::WriteBatch batch;
  Put(batch, Cf(layout::kRunStates), layout::Key({run_id, state.task_name()}), state.SerializeAsString());
  return Write("PutRunState", batch);
}

}  // namespace sparseditto
