#include "common/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "fmt/format.h"

namespace sparseditto {
namespace {

absl::Status Failed(const std::string& what, const std::string& path, int error) {
  return absl::UnavailableError(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

}  // namespace

absl::Status WriteFileDurably(const std::string& path, std::string_view bytes, int mode) {
  const std::string temporary = fmt::format("{}.tmp{}", path, getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Failed("create", temporary, errno);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const int write_error = written == bytes.size() ? 0 : (errno != 0 ? errno : EIO);
  const int sync_error = write_error == 0 && ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  if (write_error != 0 || sync_error != 0) {
    ::unlink(temporary.c_str());
    return Failed(write_error != 0 ? "write" : "sync", temporary, write_error != 0 ? write_error : sync_error);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Failed("rename over", path, error);
  }
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Failed("open the folder of", path, errno);
  const int synced = ::fsync(dir) == 0 ? 0 : errno;
  ::close(dir);
  if (synced != 0) return Failed("sync the folder of", path, synced);
  return absl::OkStatus();
}

}  // namespace sparseditto
