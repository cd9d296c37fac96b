// What the PopulationStore's source files share: the RocksDB handles, record parsing, snapshots.
// Internal to population_store/.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "population_store/population_store.h"
#include "population_store/store_layout.h"
#include "rocksdb/db.h"

namespace sparseditto {

struct PopulationStore::Handles {
  std::unique_ptr<rocksdb::DB> db;
  // Every column family the database has (ours and any a later schema added), owned.
  std::vector<rocksdb::ColumnFamilyHandle*> all;
  // Ours, indexed by store_layout::ColumnFamily; point into `all`.
  std::array<rocksdb::ColumnFamilyHandle*, store_layout::kColumnFamilyCount> ours{};

  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    if (db == nullptr) return;
    for (rocksdb::ColumnFamilyHandle* handle : all)
      db->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
    db->Close().PermitUncheckedError();
  }
};

// A RocksDB snapshot released when this goes out of scope.
class ScopedSnapshot {
 public:
  explicit ScopedSnapshot(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~ScopedSnapshot() { db_->ReleaseSnapshot(snapshot_); }
  ScopedSnapshot(const ScopedSnapshot&) = delete;
  ScopedSnapshot& operator=(const ScopedSnapshot&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

// Parses a stored value; kDataLoss naming `what` when it does not parse.
template <typename Message>
absl::StatusOr<Message> ParseRecord(const std::string& bytes, std::string_view what) {
  Message message;
  if (!message.ParseFromString(bytes)) {
    return absl::DataLossError(fmt::format("{} does not parse as {}; the store is corrupt", what,
                                           Message::descriptor()->full_name()));
  }
  return message;
}

}  // namespace sparseditto
