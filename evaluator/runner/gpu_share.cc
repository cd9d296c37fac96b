#include "evaluator/runner/gpu_share.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "fmt/format.h"

namespace sparseditto {
namespace {

absl::Status Flock(int fd, int operation, const std::string& path) {
  while (flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    return absl::InternalError(fmt::format("flock {}: {}", path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuShare>> GpuShare::Open(const std::string& dir, const std::string& gpu_id) {
  if (dir.empty()) return absl::InvalidArgumentError("GPU share: no folder for its lock files");
  const bool plain = !gpu_id.empty() && std::all_of(gpu_id.begin(), gpu_id.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_';
  });
  if (!plain) return absl::InvalidArgumentError(fmt::format("GPU share: bad GPU id '{}'", gpu_id));
  const std::string stem = fmt::format("{}/gpu-{}", dir, gpu_id);
  const int main_fd = open((stem + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (main_fd < 0) return absl::InternalError(fmt::format("GPU share: open {}.lock: {}", stem, std::strerror(errno)));
  const int turnstile_fd = open((stem + ".turnstile").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (turnstile_fd < 0) {
    const int e = errno;
    close(main_fd);
    return absl::InternalError(fmt::format("GPU share: open {}.turnstile: {}", stem, std::strerror(e)));
  }
  return std::unique_ptr<GpuShare>(new GpuShare(main_fd, turnstile_fd, stem + ".lock"));
}

GpuShare::~GpuShare() {
  close(main_);
  close(turnstile_);
}

absl::Status GpuShare::Hold(Mode mode) {
  if (mode == mode_) return absl::OkStatus();
  auto fail = [&](absl::Status s) {
    (void)flock(main_, LOCK_UN);
    (void)flock(turnstile_, LOCK_UN);
    mode_ = Mode::kNone;
    return s;
  };
  if (mode == Mode::kNone) {
    if (absl::Status s = Flock(main_, LOCK_UN, path_); !s.ok()) return fail(s);
    mode_ = Mode::kNone;
    return absl::OkStatus();
  }
  if (mode == Mode::kShared && mode_ == Mode::kExclusive) {  // a downgrade needs no turnstile
    if (absl::Status s = Flock(main_, LOCK_SH, path_); !s.ok()) return fail(s);
    mode_ = Mode::kShared;
    return absl::OkStatus();
  }
  // From none, or shared -> exclusive: let go first, then through the turnstile.
  if (mode_ != Mode::kNone) {
    if (absl::Status s = Flock(main_, LOCK_UN, path_); !s.ok()) return fail(s);
    mode_ = Mode::kNone;
  }
  if (absl::Status s = Flock(turnstile_, LOCK_EX, path_); !s.ok()) return fail(s);
  if (absl::Status s = Flock(main_, mode == Mode::kExclusive ? LOCK_EX : LOCK_SH, path_); !s.ok()) return fail(s);
  if (absl::Status s = Flock(turnstile_, LOCK_UN, path_); !s.ok()) return fail(s);
  mode_ = mode;
  return absl::OkStatus();
}

GpuShare::Scoped::Scoped(GpuShare* share, Mode mode) : share_(share) {
  if (share_ == nullptr) return;
  before_ = share_->mode();
  status_ = share_->Hold(mode);
}

GpuShare::Scoped::~Scoped() {
  if (share_ != nullptr) (void)share_->Hold(before_);
}

}  // namespace sparseditto
