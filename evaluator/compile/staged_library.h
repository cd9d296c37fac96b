// The copy of a compiled candidate that the candidate's own process loads (DESIGN.md §3.6): a fresh
// folder made by the trusted process (MakeOwnedTempFolder, so a killed run's is swept at the next
// start; mode 0755, so an unprivileged runner uid can read it) holding
// candidate.so (mode 0444), written from bytes checked against the compile cache's SHA-256
// (CompileCache::CopyVerifiedLibrary). The runner is handed this path, never the cache's file, so a
// candidate that writes to the library it was loaded from changes only its own copy, and nothing
// it does reaches the cache; the folder is removed when the StagedLibrary is destroyed.
//
// Thread-compatible: one owner; moving transfers the folder.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "evaluator/compile/compile_cache.h"

namespace sparseditto {

class StagedLibrary {
 public:
  // Copies the verified library of `key` into a new folder under `parent` (the system temp folder
  // when empty). Errors of CopyVerifiedLibrary (DataLoss: the cached library fails its hash check;
  // NotFound: no ok entry), Internal when the folder cannot be made.
  static absl::StatusOr<StagedLibrary> Stage(const CompileCache& cache, const std::string& key,
                                             const std::string& parent = "");

  StagedLibrary(StagedLibrary&& other) noexcept;
  StagedLibrary& operator=(StagedLibrary&& other) noexcept;
  StagedLibrary(const StagedLibrary&) = delete;
  StagedLibrary& operator=(const StagedLibrary&) = delete;
  ~StagedLibrary();

  const std::string& path() const { return path_; }            // <folder>/candidate.so
  const std::string& directory() const { return directory_; }  // the folder

 private:
  StagedLibrary(std::string directory, std::string path) : directory_(std::move(directory)), path_(std::move(path)) {}
  void Remove();

  std::string directory_;
  std::string path_;
};

}  // namespace sparseditto
