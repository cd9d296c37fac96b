// Writing a small file so that it is on disk before the caller acknowledges anything: the bytes go to
// a temporary file beside it, which is fsynced and renamed over the target, and the folder is fsynced
// so the rename survives a power cut. A reader sees the old file or the new one, never half of one.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sparseditto {

// Errors: Unavailable naming `path` (and the system's reason) when any step fails; the temporary
// file is removed and the target is left as it was. The folder must exist.
absl::Status WriteFileDurably(const std::string& path, std::string_view bytes, int mode = 0600);

}  // namespace sparseditto
