#include "evaluator/compile/staged_library.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/owned_temp_folders.h"
#include "fmt/format.h"

namespace sparseditto {

namespace fs = std::filesystem;

absl::StatusOr<StagedLibrary> StagedLibrary::Stage(const CompileCache& cache, const std::string& key,
                                                   const std::string& parent) {
  const fs::path base = parent.empty() ? fs::temp_directory_path() : fs::path(parent);
  // Named by our pid, so the next start sweeps it if we are killed before the destructor runs.
  absl::StatusOr<fs::path> made = MakeOwnedTempFolder(base);
  if (!made.ok()) return made.status();
  const std::string directory = made->string();
  StagedLibrary staged(directory, directory + "/candidate.so");  // removes the folder on any error below
  if (chmod(directory.c_str(), 0755) != 0) {
    return absl::InternalError(fmt::format("cannot chmod {}", directory));
  }
  if (absl::Status copied = cache.CopyVerifiedLibrary(key, staged.path_); !copied.ok()) return copied;
  return staged;
}

StagedLibrary::StagedLibrary(StagedLibrary&& other) noexcept
    : directory_(std::move(other.directory_)), path_(std::move(other.path_)) {
  other.directory_.clear();
  other.path_.clear();
}

StagedLibrary& StagedLibrary::operator=(StagedLibrary&& other) noexcept {
  if (this != &other) {
    Remove();
    directory_ = std::move(other.directory_);
    path_ = std::move(other.path_);
    other.directory_.clear();
    other.path_.clear();
  }
  return *this;
}

StagedLibrary::~StagedLibrary() { Remove(); }

void StagedLibrary::Remove() {
  if (directory_.empty()) return;
  std::error_code ignored;
  fs::remove_all(directory_, ignored);
  directory_.clear();
  path_.clear();
}

}  // namespace sparseditto
