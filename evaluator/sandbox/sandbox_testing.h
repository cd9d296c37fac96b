// Helpers of the sandbox tests only.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace sparseditto::sandbox_testing {

// A folder of the test's own (mkdtemp under $TMPDIR, so `ctest -j` runs never share one), removed with
// everything in it at the end of the scope. Mode 0711: a sandboxed child dropped to another uid can
// reach what is chowned to it inside. path is empty when mkdtemp failed.
struct TempFolder {
  std::string path;
  explicit TempFolder(const std::string& prefix = "sandbox-test") {
    path = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(path.data()) == nullptr) {
      path.clear();
      return;
    }
    namespace fs = std::filesystem;
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
};

}  // namespace sparseditto::sandbox_testing
