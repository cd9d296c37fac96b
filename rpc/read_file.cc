#include "rpc/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace sparseditto::rpc {
namespace {

// Closes the descriptor on every path out of ReadFileContent.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status OpenError(const std::string& path, int error) {
  const std::string message = fmt::format("{}: cannot open: {}", path, strerror(error));
  if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::StatusOr<std::string> ReadFileContent(const std::string& path, const ReadFileOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("empty file path");
  // O_NONBLOCK: a FIFO at the path must not block the open; it is refused as not regular below.
  const Descriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return OpenError(path, errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: cannot stat: {}", path, strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(fmt::format("{}: not a regular file", path));
  const unsigned mode = st.st_mode & 07777;
  if (options.owner_only && (mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) != 0) {
    return absl::PermissionDeniedError(fmt::format(
        "{0} is readable or writable by group or others (mode {1:04o}); it holds secrets: chmod 600 {0}", path,
        mode));
  }
  if (static_cast<size_t>(st.st_size) > options.max_bytes) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} bytes, more than the {} a file of this kind may have", path, st.st_size, options.max_bytes));
  }
  std::string content;
  char buffer[8192];
  while (true) {
    const ssize_t got = read(fd.get(), buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::InvalidArgumentError(fmt::format("{}: cannot read: {}", path, strerror(errno)));
    }
    if (got == 0) break;
    content.append(buffer, static_cast<size_t>(got));
    if (content.size() > options.max_bytes) {
      return absl::InvalidArgumentError(fmt::format("{}: more than {} bytes", path, options.max_bytes));
    }
  }
  return content;
}

}  // namespace sparseditto::rpc
