// A test's own temporary folder: made fresh by mkdtemp under $TMPDIR (or /tmp), so that two test
// processes, two test runs on one machine (`ctest -j`, two checkouts, two containers sharing /tmp) and a
// pid reused by another run never share a path; removed with everything in it on destruction (after
// restoring permissions a test may have taken away). Header-only; not thread-safe (one test owns it).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace sparseditto::testing_support {

class TempFolder {
 public:
  // `prefix` starts the folder's name (e.g. the test's name), for whoever looks at a leftover.
  explicit TempFolder(std::string_view prefix = "sparseditto_test") {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" +
                          std::string(prefix) + "-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempFolder() {
    if (path_.empty() || getpid() != owner_) return;  // a forked child that exits normally keeps it
    std::error_code ignored;
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                   ignored);
    }
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }
  // A path inside the folder (not made).
  std::filesystem::path operator/(std::string_view name) const { return path_ / std::string(name); }

 private:
  std::filesystem::path path_;
  pid_t owner_ = getpid();
};

// This test process's own temporary folder, made by mkdtemp on first use and removed at exit; like
// ::testing::TempDir() it ends in '/', but no other process shares it (::testing::TempDir() is /tmp/
// itself, where fixed names of two test runs collide).
inline const std::string& ProcessTempDir() {
  static const TempFolder folder("sparseditto_test");
  static const std::string path = folder.path().string() + "/";
  return path;
}

}  // namespace sparseditto::testing_support
