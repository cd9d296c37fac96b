// ChildProcess supervision: draining output, waiting, and the extra-pipe protocol I/O (see subprocess.h).
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/status_macros.h"
#include "common/subprocess.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

std::string ErrnoText(int error) { return fmt::format("{} ({})", strerrordesc_np(error), error); }

}  // namespace

void ChildProcess::ReadAvailable(int& fd, CapturedOutput& out) {
  char buffer[65536];
  for (int round = 0; fd >= 0 && round < 16; ++round) {  // at most 1 MiB, so a flood cannot starve us
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) return CloseFd(fd);
    const int64_t room = std::max<int64_t>(0, max_captured_bytes_ - static_cast<int64_t>(out.bytes.size()));
    const int64_t kept = std::min<int64_t>(room, got);
    out.bytes.append(buffer, kept);
    if (kept < got) {
      out.truncated = true;
      out.discarded_bytes += got - kept;
    }
  }
}

// The group is dead or dying; read the streams to their end, but give up after 2 s (a descendant
// that left the group may still hold them).
void ChildProcess::DrainAfterExit() {
  const Deadline give_up = DeadlineAfter(2.0);
  while ((stdout_fd_ >= 0 || stderr_fd_ >= 0) && Clock::now() < give_up) {
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    if (poll(fds, 2, 100) < 0 && errno != EINTR) break;
    ReadAvailable(stdout_fd_, stdout_);
    ReadAvailable(stderr_fd_, stderr_);
  }
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
}

absl::StatusOr<ChildProcess::PumpEvent> ChildProcess::Pump(Deadline deadline, std::span<pollfd> watch) {
  for (;;) {
    if (outcome_) return PumpEvent::kExited;
    std::vector<pollfd> fds = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}, {pidfd_, POLLIN, 0}};
    for (pollfd& w : watch) fds.push_back({w.fd, w.events, 0});
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    int timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, pidfd_ >= 0 ? 60'000 : 20));
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      return absl::InternalError("poll: " + ErrnoText(errno));
    }
    if (fds[0].revents) ReadAvailable(stdout_fd_, stdout_);
    if (fds[1].revents) ReadAvailable(stderr_fd_, stderr_);
    SD_RETURN_IF_ERROR(TryReap(WNOHANG));
    if (outcome_) return PumpEvent::kExited;
    bool ready = false;
    for (size_t i = 0; i < watch.size(); ++i) {
      watch[i].revents = fds[i + 3].revents;
      ready |= watch[i].revents != 0;
    }
    if (ready) return PumpEvent::kWatchReady;
    if (Clock::now() >= deadline) return PumpEvent::kDeadline;
  }
}

absl::Status ChildProcess::WaitReadableWithin(int child_fd, Deadline deadline, int64_t max_resident_bytes,
                                              double poll_seconds) {
  pollfd watch{parent_fd(child_fd), POLLIN, 0};
  while (true) {
    watch.revents = 0;
    SD_ASSIGN_OR_RETURN(const PumpEvent event,
                        Pump(std::min(deadline, DeadlineAfter(poll_seconds)), std::span<pollfd>(&watch, 1)));
    if (event == PumpEvent::kWatchReady || event == PumpEvent::kExited) return absl::OkStatus();
    // Memory before the deadline: a child over its limit when time runs out is reported for its memory.
    absl::StatusOr<int64_t> resident = ResidentBytes();
    if (resident.ok() && *resident > max_resident_bytes) {
      return absl::ResourceExhaustedError(fmt::format("used {} MiB of host memory (limit {} MiB)", *resident >> 20,
                                                      max_resident_bytes >> 20));
    }
    if (Clock::now() >= deadline) return absl::DeadlineExceededError("no output in time");
  }
}

absl::StatusOr<ExitOutcome> ChildProcess::WaitFor(Deadline deadline) {
  while (!outcome_) {
    SD_ASSIGN_OR_RETURN(const PumpEvent event, Pump(deadline));
    if (event == PumpEvent::kDeadline) {
      timed_out_ = true;
      KillGroup();
      SD_RETURN_IF_ERROR(TryReap(0));
    }
  }
  return *outcome_;
}

absl::Status ChildProcess::WriteToChild(int child_fd, std::string_view bytes, Deadline deadline) {
  ParentPipe* pipe = FindPipe(child_fd);
  if (pipe == nullptr || pipe->fd < 0 || pipe->direction != ChildPipe::Direction::kToChild) {
    return absl::InvalidArgumentError(fmt::format("no open pipe to child fd {}", child_fd));
  }
  sigset_t sigpipe, old_mask, pending;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  while (!bytes.empty()) {
    if (outcome_) return absl::FailedPreconditionError("the child exited before reading its input");
    // A write to a closed pipe raises SIGPIPE in this thread; block it and swallow it.
    pthread_sigmask(SIG_BLOCK, &sigpipe, &old_mask);
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE);
    const ssize_t wrote = write(pipe->fd, bytes.data(), bytes.size());
    const int error = errno;
    if (wrote < 0 && error == EPIPE && !was_pending) {
      const timespec no_wait{};
      sigtimedwait(&sigpipe, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    if (wrote > 0) {
      bytes.remove_prefix(wrote);
      continue;
    }
    if (error == EPIPE) return absl::FailedPreconditionError(fmt::format("child closed fd {}", child_fd));
    if (error != EAGAIN && error != EWOULDBLOCK && error != EINTR) {
      return absl::InternalError(fmt::format("write to child fd {}: {}", child_fd, ErrnoText(error)));
    }
    pollfd watch{pipe->fd, POLLOUT, 0};
    SD_ASSIGN_OR_RETURN(const PumpEvent event, Pump(deadline, {&watch, 1}));
    if (event == PumpEvent::kDeadline) {
      return absl::DeadlineExceededError(fmt::format("child did not read fd {} in time", child_fd));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ChildProcess::ReadFromChild(int child_fd, size_t size, Deadline deadline) {
  ParentPipe* pipe = FindPipe(child_fd);
  if (pipe == nullptr || pipe->fd < 0 || pipe->direction != ChildPipe::Direction::kFromChild) {
    return absl::InvalidArgumentError(fmt::format("no open pipe from child fd {}", child_fd));
  }
  std::string data;
  while (data.size() < size) {
    const size_t before = data.size();
    data.resize(size);
    const ssize_t got = read(pipe->fd, data.data() + before, size - before);
    const int error = errno;
    data.resize(before + std::max<ssize_t>(got, 0));
    if (got > 0) continue;
    const auto short_read = [&](std::string_view why) {
      return absl::OutOfRangeError(fmt::format("{} after {} of {} bytes on fd {}", why, before, size, child_fd));
    };
    if (got == 0) return short_read("child closed the pipe");
    if (error == EINTR) continue;
    if (error != EAGAIN && error != EWOULDBLOCK) {
      return absl::InternalError(fmt::format("read from child fd {}: {}", child_fd, ErrnoText(error)));
    }
    if (outcome_) return short_read(fmt::format("child {}", outcome_->ToString()));
    pollfd watch{pipe->fd, POLLIN, 0};
    SD_ASSIGN_OR_RETURN(const PumpEvent event, Pump(deadline, {&watch, 1}));
    if (event == PumpEvent::kDeadline) {
      return absl::DeadlineExceededError(
          fmt::format("{} of {} bytes arrived on fd {} before the deadline", data.size(), size, child_fd));
    }
  }
  return data;
}

absl::StatusOr<CommandResult> RunCommand(SpawnOptions options, double timeout_seconds,
                                         std::string_view stdin_data) {
  if (!stdin_data.empty()) options.pipes.push_back({0, ChildPipe::Direction::kToChild});
  const Deadline start = Clock::now();
  const Deadline deadline = DeadlineAfter(timeout_seconds);
  SD_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, Spawn(options));
  if (!stdin_data.empty()) {
    const absl::Status wrote = child->WriteToChild(0, stdin_data, deadline);
    if (!wrote.ok() && absl::IsInternal(wrote)) return wrote;  // else: the outcome tells the story
    child->ClosePipe(0);
  }
  CommandResult result;
  SD_ASSIGN_OR_RETURN(result.outcome, child->WaitFor(deadline));
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.stdout_output = child->captured_stdout();
  result.stderr_output = child->captured_stderr();
  result.sandbox_skipped = child->sandbox_skipped();
  return result;
}

}  // namespace sparseditto
