#include "population_store/rocksdb_status.h"

#include <string>

#include "fmt/format.h"

namespace sparseditto {

absl::Status FromRocksDb(const rocksdb::Status& status, std::string_view context) {
  if (status.ok()) return absl::OkStatus();
  const std::string words = status.ToString();
  const std::string message = fmt::format("{}: {}", context, words);
  if (status.IsNotFound()) return absl::NotFoundError(message);
  if (status.IsCorruption()) return absl::DataLossError(message);
  if (status.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (status.IsNotSupported()) return absl::UnimplementedError(message);
  if (status.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (status.IsPathNotFound() || (status.IsIOError() && words.find("No such file") != std::string::npos)) {
    return absl::DataLossError(fmt::format("{}: a file the store needs is missing: {}", context, words));
  }
  if (status.IsIOError() && (words.find("Permission denied") != std::string::npos ||
                             words.find("Operation not permitted") != std::string::npos)) {
    return absl::PermissionDeniedError(fmt::format(
        "{}: permission denied (the store belongs to another user, or its permissions forbid it): {}", context,
        words));
  }
  if (status.IsIOError() && words.find("lock") != std::string::npos) {
    return absl::UnavailableError(fmt::format(
        "{}: the store is open for writing elsewhere (another process, or this one): {}", context, words));
  }
  if (status.IsBusy() || status.IsTimedOut() || status.IsTryAgain()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

}  // namespace sparseditto
