// Opening and creating a PopulationStore: refusing what is not a store, or a store of another schema.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/owned_temp_folders.h"
#include "common/status_macros.h"
#include "population_store/population_store_internal.h"
#include "population_store/rocksdb_status.h"
#include "population_store/write_ledger.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
namespace layout = store_layout;

rocksdb::Options DatabaseOptions(const PopulationStoreOptions& options) {
  rocksdb::Options db_options;
  db_options.paranoid_checks = true;
  // A torn last WAL record (a crash mid-write) is dropped; anything acknowledged before it is kept.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  db_options.keep_log_file_num = 4;
  if (options.env != nullptr) db_options.env = options.env;
  if (options.memtable_bytes > 0) db_options.write_buffer_size = options.memtable_bytes;
  return db_options;
}

// A file-system error while looking at `path`; PermissionDenied says so rather than guessing a cause.
absl::Status FileSystemError(std::string_view what, const std::string& path, const std::error_code& error) {
  if (error == std::errc::permission_denied || error == std::errc::operation_not_permitted) {
    return absl::PermissionDeniedError(fmt::format(
        "cannot {} {}: permission denied (the store belongs to another user, or its folder's permissions "
        "forbid it)",
        what, path));
  }
  return absl::InternalError(fmt::format("cannot {} {}: {}", what, path, error.message()));
}

absl::Status Errno(std::string_view what, const std::string& path) {
  return absl::InternalError(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

// Makes an empty store in a sibling temporary directory and renames it to `path` (absent or an empty
// directory), so `path` holds either nothing or a whole store. kAlreadyExists when another creator won.
absl::Status CreateEmptyStore(const std::string& path, const PopulationStoreOptions& options) {
  std::error_code error;
  fs::path target = fs::absolute(fs::path(path), error).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "store/" names "store"
  const fs::path parent = target.parent_path();
  fs::create_directories(parent, error);
  if (error) {
    return absl::InternalError(
        fmt::format("cannot make the folder {} for the store: {}", parent.string(), error.message()));
  }
  // <store>.creating-<pid>-XXXXXX; what a creator killed mid-way left is swept first.
  const std::string temporary_prefix = target.filename().string() + ".creating-";
  (void)SweepOrphanedTempFolders(parent, {temporary_prefix});
  absl::StatusOr<fs::path> made = MakeOwnedTempFolder(parent, temporary_prefix);
  if (!made.ok()) return made.status();
  const std::string temporary = made->string();

  rocksdb::Options db_options = DatabaseOptions(options);
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(db_options)}};
  for (std::string_view name : layout::kColumnFamilies) {
    descriptors.emplace_back(std::string(name), rocksdb::ColumnFamilyOptions(db_options));
  }
  absl::Status status;
  {
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    status = FromRocksDb(rocksdb::DB::Open(db_options, temporary, descriptors, &handles, &raw),
                         fmt::format("cannot create a store at {}", temporary));
    if (status.ok()) {
      std::unique_ptr<rocksdb::DB> db(raw);
      rocksdb::WriteBatch batch;
      rocksdb::ColumnFamilyHandle* meta = handles[1 + layout::kMeta];
      batch.Put(meta, layout::kMetaFormatKey, layout::kFormatName).PermitUncheckedError();
      batch.Put(meta, layout::kMetaSchemaVersionKey, std::to_string(layout::kSchemaVersion))
          .PermitUncheckedError();
      batch.Put(meta, layout::kMetaNextSequenceKey, layout::EncodeSequence(1)).PermitUncheckedError();
      rocksdb::WriteOptions write_options;
      write_options.sync = true;
      status = FromRocksDb(db->Write(write_options, &batch),
                           fmt::format("cannot write the new store's schema at {}", temporary));
      if (status.ok()) status = WriteLedger::OpenForWriting(temporary, db->GetLatestSequenceNumber()).status();
      for (rocksdb::ColumnFamilyHandle* handle : handles) {
        db->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
      }
      if (status.ok()) status = FromRocksDb(db->Close(), fmt::format("cannot close {}", temporary));
    }
  }
  if (status.ok() && rename(temporary.c_str(), target.c_str()) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      status = absl::AlreadyExistsError(fmt::format("{} was made by another process meanwhile", path));
    } else {
      status = Errno("cannot rename the new store to", path);
    }
  }
  if (!status.ok()) {
    fs::remove_all(temporary, error);
    return status;
  }
  // Make the rename durable.
  const int dir = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Errno("cannot open the folder", parent.string());
  const int synced = fsync(dir);
  close(dir);
  if (synced != 0) return Errno("cannot sync the folder", parent.string());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadMeta(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta, std::string_view key,
                                     const std::string& path) {
  std::string value;
  const rocksdb::Status status = db->Get(rocksdb::ReadOptions(), meta, key, &value);
  if (status.IsNotFound()) {
    return absl::NotFoundError(fmt::format("store at {} has no '{}' meta record", path, key));
  }
  SD_RETURN_IF_ERROR(FromRocksDb(status, fmt::format("cannot read the store at {}", path)));
  return value;
}

// Checks the meta records; returns the next candidate sequence.
absl::StatusOr<uint64_t> CheckSchema(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                                     const std::string& path) {
  absl::StatusOr<std::string> format = ReadMeta(db, meta, layout::kMetaFormatKey, path);
  if (absl::IsNotFound(format.status()) || (format.ok() && *format != layout::kFormatName)) {
    return absl::FailedPreconditionError(
        fmt::format("{} is a RocksDB database but not a SparseDitto population store (no '{}' format record)",
                    path, layout::kFormatName));
  }
  SD_RETURN_IF_ERROR(format.status());
  absl::StatusOr<std::string> version_text = ReadMeta(db, meta, layout::kMetaSchemaVersionKey, path);
  if (absl::IsNotFound(version_text.status())) {
    return absl::DataLossError(version_text.status().message());
  }
  SD_RETURN_IF_ERROR(version_text.status());
  int version = 0;
  const char* end = version_text->data() + version_text->size();
  const auto [stop, parse_error] = std::from_chars(version_text->data(), end, version);
  if (parse_error != std::errc() || stop != end) {
    return absl::DataLossError(
        fmt::format("store at {} has an unreadable schema version '{}'", path, *version_text));
  }
  if (version != layout::kSchemaVersion) {
    return absl::FailedPreconditionError(fmt::format(
        "store at {} has schema version {}; this build reads version {}. Open it with a SparseDitto "
        "build that reads version {}, or start a new store",
        path, version, layout::kSchemaVersion, version));
  }
  absl::StatusOr<std::string> next = ReadMeta(db, meta, layout::kMetaNextSequenceKey, path);
  if (absl::IsNotFound(next.status())) return absl::DataLossError(next.status().message());
  SD_RETURN_IF_ERROR(next.status());
  const std::optional<uint64_t> sequence = layout::DecodeSequence(*next);
  if (!sequence) {
    return absl::DataLossError(fmt::format("store at {} has a malformed next_sequence record", path));
  }
  return *sequence;
}

}  // namespace

PopulationStore::PopulationStore(std::string path, PopulationStoreOptions options,
                                 std::unique_ptr<Handles> handles, std::unique_ptr<WriteLedger> ledger,
                                 uint64_t next_sequence)
    : path_(std::move(path)),
      options_(std::move(options)),
      handles_(std::move(handles)),
      ledger_(std::move(ledger)),
      next_sequence_(next_sequence) {}

PopulationStore::~PopulationStore() = default;

absl::StatusOr<std::unique_ptr<PopulationStore>> PopulationStore::Create(const std::string& path) {
  PopulationStoreOptions options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  return Open(path, options);
}

absl::StatusOr<std::unique_ptr<PopulationStore>> PopulationStore::OpenReadOnly(const std::string& path) {
  PopulationStoreOptions options;
  options.read_only = true;
  return Open(path, options);
}

absl::StatusOr<std::unique_ptr<PopulationStore>> PopulationStore::Open(
    const std::string& path, const PopulationStoreOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("the population store's path is empty");
  std::error_code error;
  const fs::file_status file = fs::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory) return FileSystemError("inspect", path, error);
  const bool exists = fs::exists(file);
  if (exists && !fs::is_directory(file)) {
    return absl::FailedPreconditionError(
        fmt::format("{} is not a directory; a population store is a directory", path));
  }
  bool has_database = false;
  bool empty = false;
  if (exists) {
    has_database = fs::exists(fs::path(path) / "CURRENT", error);
    if (error) return FileSystemError("look into", path, error);
    if (!has_database) {
      empty = fs::is_empty(path, error);
      if (error) return FileSystemError("list", path, error);
    }
  }
  bool created = false;
  if (!has_database) {
    if (exists && !empty) {
      return absl::FailedPreconditionError(fmt::format(
          "{} is not a population store: the directory holds files but no RocksDB database (no CURRENT "
          "file)",
          path));
    }
    if (!options.create_if_missing || options.read_only) {
      return absl::NotFoundError(
          fmt::format("no population store at {}{}", path, exists ? " (the directory is empty)" : ""));
    }
    if (exists && !options.error_if_exists) {
      // A store's folder is never left empty by the store itself (it is created whole, by a rename):
      // an empty one is a store whose files were removed, and a new store there would silently start
      // its run over.
      return absl::FailedPreconditionError(fmt::format(
          "{} is an empty folder where a population store is expected: was the store emptied? Not making a "
          "new store in its place (the run would silently start over); remove the empty folder to start "
          "a new store, or restore the old one",
          path));
    }
    absl::Status status = CreateEmptyStore(path, options);
    if (absl::IsAlreadyExists(status) && !options.error_if_exists) status = absl::OkStatus();
    SD_RETURN_IF_ERROR(status);
    created = true;
  }
  if (!created && options.create_if_missing && options.error_if_exists && !options.read_only) {
    return absl::AlreadyExistsError(fmt::format("a store exists at {} already", path));
  }

  const rocksdb::Options db_options = DatabaseOptions(options);
  std::vector<std::string> names;
  SD_RETURN_IF_ERROR(FromRocksDb(rocksdb::DB::ListColumnFamilies(db_options, path, &names),
                                 fmt::format("store at {} is unreadable", path)));
  if (std::find(names.begin(), names.end(), layout::kColumnFamilies[layout::kMeta]) == names.end()) {
    // A damaged MANIFEST can list only "default"; RocksDB's own open tells damage from a foreign database.
    std::unique_ptr<rocksdb::DB> probe;
    rocksdb::DB* raw_probe = nullptr;
    const rocksdb::Status probed = rocksdb::DB::OpenForReadOnly(db_options, path, &raw_probe);
    probe.reset(raw_probe);
    SD_RETURN_IF_ERROR(FromRocksDb(probed, fmt::format("store at {} is unreadable", path)));
    return absl::FailedPreconditionError(fmt::format(
        "{} is a RocksDB database but not a SparseDitto population store (no 'meta' column family)", path));
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(db_options));
  }
  // Read before RocksDB replays its log: a writer elsewhere only records a write once it is in the log,
  // so everything acknowledged by then is replayed below.
  SD_ASSIGN_OR_RETURN(const std::optional<uint64_t> acknowledged, WriteLedger::Read(path));
  auto handles = std::make_unique<Handles>();
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status opened =
      options.read_only ? rocksdb::DB::OpenForReadOnly(db_options, path, descriptors, &handles->all, &raw)
                        : rocksdb::DB::Open(db_options, path, descriptors, &handles->all, &raw);
  handles->db.reset(raw);
  SD_RETURN_IF_ERROR(FromRocksDb(opened, fmt::format("cannot open the store at {}", path)));
  const uint64_t recovered = handles->db->GetLatestSequenceNumber();
  SD_RETURN_IF_ERROR(WriteLedger::CheckNothingLost(path, acknowledged, recovered));

  for (size_t i = 0; i < names.size(); ++i) {
    const auto known = std::find(layout::kColumnFamilies.begin(), layout::kColumnFamilies.end(), names[i]);
    if (known != layout::kColumnFamilies.end()) {
      handles->ours[known - layout::kColumnFamilies.begin()] = handles->all[i];
    }
  }
  SD_ASSIGN_OR_RETURN(const uint64_t next_sequence,
                      CheckSchema(handles->db.get(), handles->ours[layout::kMeta], path));
  for (int i = 0; i < layout::kColumnFamilyCount; ++i) {
    if (handles->ours[i] == nullptr) {
      return absl::DataLossError(
          fmt::format("store at {} lacks its '{}' column family", path, layout::kColumnFamilies[i]));
    }
  }
  std::unique_ptr<WriteLedger> ledger;
  if (!options.read_only) {
    SD_ASSIGN_OR_RETURN(ledger, WriteLedger::OpenForWriting(path, recovered));
  }
  return std::unique_ptr<PopulationStore>(
      new PopulationStore(path, options, std::move(handles), std::move(ledger), next_sequence));
}

}  // namespace sparseditto
