#include "population_store/write_ledger.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr size_t kRecordBytes = 21;  // 20 digits (any uint64) and '\n'

std::string LedgerPath(const std::string& store_path) {
  return (std::filesystem::path(store_path) / WriteLedger::kFileName).string();
}

absl::Status FileError(std::string_view what, const std::string& path, int error) {
  if (error == EACCES || error == EPERM) {
    return absl::PermissionDeniedError(fmt::format(
        "cannot {} {}: permission denied (the store belongs to another user, or its permissions forbid it)",
        what, path));
  }
  return absl::InternalError(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

absl::Status WriteRecord(int fd, uint64_t sequence, const std::string& path) {
  const std::string text = fmt::format("{:020d}\n", sequence);
  if (pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    return FileError("write", path, errno);
  }
  if (fdatasync(fd) != 0) return FileError("sync", path, errno);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<uint64_t>> WriteLedger::Read(const std::string& store_path) {
  const std::string path = LedgerPath(store_path);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return FileError("read", path, errno);
  }
  char text[kRecordBytes + 1] = {};
  const ssize_t got = pread(fd, text, sizeof(text), 0);
  const int read_error = errno;
  close(fd);
  if (got < 0) return FileError("read", path, read_error);
  uint64_t sequence = 0;
  const char* end = text + kRecordBytes - 1;
  const auto [stop, error] = std::from_chars(text, end, sequence);
  if (got != static_cast<ssize_t>(kRecordBytes) || error != std::errc() || stop != end || *end != '\n') {
    return absl::DataLossError(fmt::format(
        "{} is damaged (it should hold the store's count of acknowledged writes, 20 digits); the store "
        "cannot tell whether writes were lost",
        path));
  }
  return sequence;
}

absl::StatusOr<std::unique_ptr<WriteLedger>> WriteLedger::OpenForWriting(const std::string& store_path,
                                                                         uint64_t sequence) {
  const std::string path = LedgerPath(store_path);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return FileError("make", path, errno);
    std::unique_ptr<WriteLedger> ledger(new WriteLedger(fd, path));
    if (absl::Status s = WriteRecord(fd, sequence, path); !s.ok()) return s;
    const int dir = open(store_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return FileError("open the folder of", path, errno);
    const int synced = fsync(dir);
    const int sync_error = errno;
    close(dir);
    if (synced != 0) return FileError("sync the folder of", path, sync_error);
    return ledger;
  }
  if (fd < 0) return FileError("open", path, errno);
  return std::unique_ptr<WriteLedger>(new WriteLedger(fd, path));
}

absl::Status WriteLedger::CheckNothingLost(const std::string& store_path, std::optional<uint64_t> acknowledged,
                                           uint64_t recovered) {
  if (!acknowledged.has_value() || recovered >= *acknowledged) return absl::OkStatus();
  return absl::DataLossError(fmt::format(
      "the store at {} lost acknowledged writes: RocksDB recovered its records up to sequence {}, but writes "
      "up to sequence {} had been acknowledged (recorded in {}): its write-ahead log (*.log) was damaged, "
      "truncated or removed. Restore the store from a copy; or, to go on with what is left, delete {} (the "
      "records after sequence {} are gone either way)",
      store_path, recovered, *acknowledged, LedgerPath(store_path), LedgerPath(store_path), recovered));
}

WriteLedger::~WriteLedger() {
  if (fd_ >= 0) close(fd_);
}

absl::Status WriteLedger::Record(uint64_t sequence) { return WriteRecord(fd_, sequence, path_); }

}  // namespace sparseditto
