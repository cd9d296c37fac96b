// The compile cache: a folder of compiled candidates keyed by a hash of everything that decides the
// output (source, flags, toolchain identity, ABI header), so a candidate the search proposes again
// (LLMs do) is not recompiled.
//
// Layout under the cache folder:
//   objects/<first two hex digits>/<key>.so    the library (successful compiles only)
//   objects/<first two hex digits>/<key>.json  the index entry: ok, failure, log, ptxas resources,
//                                              seconds, and the SHA-256 of the .so (library_sha256)
//   tmp/                                       scratch folders for compiles in progress
// An entry is written by renaming finished files into place (.so first, then .json), so a crash never
// leaves a half entry: an entry exists exactly when its .json does. Entries are evicted only by Trim
// (least recently used first); deleting the folder is always safe while no compile runs.
//
// Trust (DESIGN.md §3.6): only the trusted process writes here (nvcc writes into a scratch folder,
// and the library is hashed after nvcc's whole tree has exited). Every use checks the .so against
// the hash in its .json: a library changed after it was stored (a byte flipped on disk, a file
// swapped, a process that kept it open) is a miss with a warning, so it is recompiled, never loaded.
// The candidate's process is handed a verified copy in a folder it cannot write
// (CopyVerifiedLibrary, evaluator/compile/staged_library.h), not the cache's own file. Two processes
// storing one key at once may leave a .json whose hash names the other's (equivalent) library: that
// entry then fails its check once and is recompiled, which is safe.
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
  // there is no entry, or it is unreadable, or its .so is missing or does not match the SHA-256 in
  // its .json (then the entry is a miss and a later Store replaces it). A hash mismatch is reported:
  // in *warning when given, else on stderr ("sparseditto: warning: compile cache entry ... failed
  // its hash check ...").
  std::optional<CompileResult> Lookup(const std::string& key, std::string* warning = nullptr) const;

  // Stores `result` under `key`. When result.ok, `built_library` (a file on the same filesystem,
  // e.g. in a scratch folder) is hashed and renamed into place, and the hash goes into the .json.
  // Internal on I/O failure.
  absl::Status Store(const std::string& key, const CompileResult& result, const std::string& built_library) const;

  // Reads the library of `key` once, checks those bytes against the entry's SHA-256 and writes them
  // to `destination` (a new file, created exclusively, mode 0444), so what is written is exactly
  // what was checked. NotFound: no ok entry for `key`; DataLoss: the library does not match its
  // hash (nothing is written); Internal: I/O failure (no partial file is left).
  absl::Status CopyVerifiedLibrary(const std::string& key, const std::string& destination) const;

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
  // The parsed .json of `key` (library_path not set) and the library hash it records; nullopt when
  // missing, malformed, of another key, or ok without a hash.
  std::optional<CompileResult> ReadEntry(const std::string& key, std::string& library_sha256) const;

  std::string directory_;
};

}  // namespace sparseditto
