// Reading the small files distributed mode is configured with: token files (role_tokens.h) and PEM
// certificates and keys (tls.h). Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace sparseditto::rpc {

struct ReadFileOptions {
  // Refuse a file whose mode lets group or others read or write it, as ssh refuses such a private key:
  // a token another local user can read is that user's token, and one they can write lets them add
  // their own. The check is on the opened file (fstat), so a rename in between cannot dodge it.
  bool owner_only = false;
  // Token files and certificates are a few KiB; a larger file is a wrong path (a log, a core dump).
  size_t max_bytes = 1 << 20;
};

// The whole content of the regular file at `path` (symbolic links are followed: Kubernetes mounts
// secrets through them). Every error message starts with `path`, and none quotes the content:
//   NotFound          no such file, or a folder on the way is missing
//   PermissionDenied  the file cannot be opened for reading; or owner_only and group or others may read or
//                     write it ("P is readable or writable by group or others (mode 0644); chmod 600 P")
//   InvalidArgument   not a regular file, larger than max_bytes, or another error opening or reading it
absl::StatusOr<std::string> ReadFileContent(const std::string& path, const ReadFileOptions& options = {});

}  // namespace sparseditto::rpc
