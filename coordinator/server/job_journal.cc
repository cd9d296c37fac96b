#include "coordinator/server/job_journal.h"

#include <algorithm>
#include <filesystem>

#include "fmt/format.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace sparseditto {
namespace {

absl::Status FromRocks(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = fmt::format("{}: {}", context, s.ToString());
  if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
    return absl::UnavailableError(message + " (is another coordinator running on this run?)");
  }
  if (s.IsCorruption()) return absl::DataLossError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobJournal>> JobJournal::Open(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::InternalError(fmt::format("job journal {}: cannot make it: {}", dir, error.message()));
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  rocksdb::DB* db = nullptr;
  if (absl::Status s = FromRocks(rocksdb::DB::Open(options, dir, &db), fmt::format("job journal {}", dir)); !s.ok()) {
    return s;
  }
  return std::unique_ptr<JobJournal>(new JobJournal(dir, db));
}

JobJournal::JobJournal(std::string dir, rocksdb::DB* db) : dir_(std::move(dir)), db_(db) {}

JobJournal::~JobJournal() = default;

absl::Status JobJournal::Write(const v1::JournalJob& record) {
  rocksdb::WriteOptions options;
  options.sync = true;  // durable before the caller answers anyone
  return FromRocks(db_->Put(options, record.job_id(), record.SerializeAsString()),
                   fmt::format("job journal {}: writing job {}", dir_, record.job_id()));
}

absl::Status JobJournal::WriteAll(const std::vector<v1::JournalJob>& records) {
  if (records.empty()) return absl::OkStatus();
  if (records.size() == 1) return Write(records.front());
  rocksdb::WriteBatch batch;
  for (const v1::JournalJob& record : records) {
    if (rocksdb::Status s = batch.Put(record.job_id(), record.SerializeAsString()); !s.ok()) {
      return FromRocks(s, fmt::format("job journal {}: batching job {}", dir_, record.job_id()));
    }
  }
  rocksdb::WriteOptions options;
  options.sync = true;  // durable, all of them, before the caller answers anyone
  return FromRocks(db_->Write(options, &batch), fmt::format("job journal {}: writing job {} and {} more", dir_,
                                                            records.front().job_id(), records.size() - 1));
}

absl::StatusOr<std::vector<v1::JournalJob>> JobJournal::ReadAll() const {
  std::vector<v1::JournalJob> records;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    v1::JournalJob record;
    if (!record.ParseFromString(it->value().ToString()) || record.job_id() != it->key().ToString()) {
      return absl::DataLossError(fmt::format("job journal {}: the record of '{}' is damaged", dir_, it->key().ToString()));
    }
    records.push_back(std::move(record));
  }
  if (absl::Status s = FromRocks(it->status(), fmt::format("job journal {}: reading", dir_)); !s.ok()) return s;
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.sequence() < b.sequence(); });
  return records;
}

}  // namespace sparseditto
