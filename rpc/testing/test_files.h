// Small helpers of rpc_test: files written with a given mode, and environment variables set for the
// length of a scope. Header-only; not thread-safe (the environment is the process's).
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

namespace sparseditto::rpc::testing_support {

// Writes `content` to `path` and sets its mode to `mode` exactly (whatever the umask). False on error.
inline bool WriteFileWithMode(const std::filesystem::path& path, const std::string& content, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool written = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  const bool moded = fchmod(fd, mode) == 0;
  return close(fd) == 0 && written && moded;
}

// Sets (or, with nullopt, unsets) an environment variable; restores its earlier value on destruction.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = getenv(name_.c_str())) old_ = old;
    if (value.has_value()) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace sparseditto::rpc::testing_support
