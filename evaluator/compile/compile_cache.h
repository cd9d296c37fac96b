// The compile cache: a folder of compiled candidates keyed by a hash of everything that decides the
// output (source, flags, toolchain identity, ABI header), so a candidate the search proposes again
// (LLMs do) is not recompiled.
//
// Layout under the cache folder:
//   objects/<first two hex digits>/<key>.so    the library (successful compiles only)
//   objects/<first two hex digits>/<key>.json  metadata: ok, failure, log, ptxas resources, seconds
//   tmp/                                       scratch folders for compiles in progress
// An entry is written by renaming finished files into place (.so first, then .json), so a crash never
// leaves a half entry: an entry exists exactly when its .json does. Concurrent stores of the same key
// (threads or processes) are safe: the last rename wins and both contents are equivalent. Entries
// are evicted only by Trim (least recently used first); deleting the folder is always safe while no
// compile runs.
//
// Thread-safety: CompileCache is immutable after Open; every method may be called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/sha256.h"
#include "evaluator/compile/compile_result.h"

namespace sparseditto {

// Hex SHA-256 over length-prefixed fields: a format tag, the source, every flag in order, the
// toolchain identity (`nvcc --version`, host compiler version) and the ABI header's contents.
std::string CompileCacheKey(std::string_view source, const std::vector<std::string>& flags,
                            std::string_view toolchain_identity, std::string_view abi_header);

class CompileCache {
 public:
  // Creates the folder (and objects/, tmp/) if needed. InvalidArgument for an empty path; Internal
  // when it cannot be created.
  static absl::StatusOr<CompileCache> Open(const std::string& directory);

  const std::string& directory() const { return directory_; }
  std::string LibraryPath(const std::string& key) const;

  // The stored result (from_cache = true, seconds = 0, library_path set when ok), or nullopt when
  // there is no entry, or it is unreadable, or its .so is missing (then the entry is a miss and a
  // later Store replaces it).
  std::optional<CompileResult> Lookup(const std::string& key) const;

  // Stores `result` under `key`. When result.ok, `built_library` (a file on the same filesystem,
  // e.g. in a scratch folder) is renamed into place. Internal on I/O failure.
  absl::Status Store(const std::string& key, const CompileResult& result, const std::string& built_library) const;

  struct TrimStats {
    int64_t entries_before = 0, entries_removed = 0;
    uint64_t bytes_before = 0, bytes_after = 0;  // of the entries (.so + .json)
    int64_t scratch_removed = 0;                  // abandoned folders under tmp/
  };
  // Evicts least-recently-used entries (oldest .json modification time; Lookup refreshes it) until
  // the entries take at most `max_bytes`, but never one used or written within `min_age`, so a
  // library another process is about to load stays. Also removes scratch folders under tmp/ older
  // than `min_age` (left by killed compiles). Removing a loaded .so is harmless on Linux (the mapping
  // keeps the inode). Entries that vanish meanwhile are skipped. Internal when objects/ cannot be
  // listed.
  absl::StatusOr<TrimStats> Trim(uint64_t max_bytes, std::chrono::seconds min_age) const;

  // A fresh, empty folder under tmp/; the caller removes it.
  absl::StatusOr<std::string> MakeScratchDirectory() const;

 private:
  explicit CompileCache(std::string directory) : directory_(std::move(directory)) {}
  std::string EntryStem(const std::string& key) const;  // objects/ab/<key>

  std::string directory_;
};

}  // namespace sparseditto
