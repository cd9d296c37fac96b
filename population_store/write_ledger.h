// The store's own count of acknowledged writes, kept outside RocksDB's write-ahead log so that damage to
// the log cannot take the count down with the records.
//
// RocksDB opens a store whose log is damaged in the middle, truncated or deleted by replaying what it can
// (WALRecoveryMode::kPointInTimeRecovery, which a torn last record after a crash needs) and says nothing
// about the rest. The ledger, <store>/SPARSEDITTO_ACKNOWLEDGED, holds RocksDB's sequence number after
// the last write that returned OK (a decimal number padded to 20 digits and a newline, rewritten in place
// with one pwrite and fdatasync after each write). Opening compares it with the sequence RocksDB
// recovered: fewer means acknowledged writes were lost, and the open fails (DataLoss) instead of going
// on without them. A crash between RocksDB's write and the ledger's leaves the ledger one write behind,
// which the comparison allows (never ahead).
//
// A store made before the ledger has no file: Read gives nullopt and nothing is compared; the first open
// for writing makes the file.
// Thread-safety: a WriteLedger is used under the store's write mutex; Read is safe anywhere.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace sparseditto {

class WriteLedger {
 public:
  static constexpr std::string_view kFileName = "SPARSEDITTO_ACKNOWLEDGED";

  // The acknowledged sequence recorded for the store at `store_path`; nullopt when it has no ledger.
  // Errors: DataLoss when the file does not hold a number; PermissionDenied or Internal when it cannot
  // be read.
  static absl::StatusOr<std::optional<uint64_t>> Read(const std::string& store_path);

  // Opens the ledger of `store_path` for Record, making it (holding `sequence`, synced, its folder
  // synced) when absent. Errors: PermissionDenied or Internal naming the file.
  static absl::StatusOr<std::unique_ptr<WriteLedger>> OpenForWriting(const std::string& store_path,
                                                                     uint64_t sequence);

  // OK when `recovered` (RocksDB's latest sequence after opening) is at least `acknowledged`; else
  // DataLoss saying how many writes' worth of sequence numbers are missing and what to do.
  static absl::Status CheckNothingLost(const std::string& store_path, std::optional<uint64_t> acknowledged,
                                       uint64_t recovered);

  ~WriteLedger();
  WriteLedger(const WriteLedger&) = delete;
  WriteLedger& operator=(const WriteLedger&) = delete;

  // Records `sequence` as acknowledged (pwrite + fdatasync). Errors: Internal naming the file.
  absl::Status Record(uint64_t sequence);

 private:
  WriteLedger(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace sparseditto
