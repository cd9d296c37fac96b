// Turns a rocksdb::Status into the project's absl::Status. Internal to population_store/.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "rocksdb/status.h"

namespace sparseditto {

// OK stays OK. Otherwise the message is "<context>: <RocksDB's words>" and the code is:
//   NotFound -> kNotFound;  Corruption, or an IOError for a missing file -> kDataLoss;  InvalidArgument ->
//   kInvalidArgument; NotSupported -> kUnimplemented;  an IOError saying "Permission denied" (EACCES or
//   EPERM, on any file, the LOCK file included) -> kPermissionDenied;  any other IOError about the LOCK
//   file (another process, or this one, has the store open for writing) -> kUnavailable;  Busy, TimedOut, TryAgain -> kUnavailable; NoSpace
//   -> kResourceExhausted;  any other IOError and the rest -> kInternal.
absl::Status FromRocksDb(const rocksdb::Status& status, std::string_view context);

}  // namespace sparseditto
