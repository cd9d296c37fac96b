#include "evaluator/runner/framing.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fmt/format.h"

namespace sparseditto {
namespace {

absl::Status ReadExactly(int fd, char* data, size_t size) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = read(fd, data + got, size - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(fmt::format("read: {}", std::strerror(errno)));
    }
    if (n == 0) return absl::UnavailableError(got == 0 ? "end of stream" : "end of stream inside a frame");
    got += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> EncodeFrame(const google::protobuf::MessageLite& message) {
  std::string payload;
  if (!message.SerializeToString(&payload)) return absl::InternalError("cannot serialize frame");
  if (payload.size() > kMaxFrameBytes) {
    return absl::InvalidArgumentError(fmt::format("frame of {} bytes exceeds {}", payload.size(), kMaxFrameBytes));
  }
  const uint32_t size = static_cast<uint32_t>(payload.size());
  std::string frame(kFrameHeaderBytes, '\0');
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) frame[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  return frame + payload;
}

absl::StatusOr<uint32_t> DecodeFrameLength(std::string_view header) {
  if (header.size() != kFrameHeaderBytes) return absl::DataLossError("short frame header");
  uint32_t size = 0;
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) size |= uint32_t{static_cast<unsigned char>(header[i])} << (8 * i);
  if (size > kMaxFrameBytes) return absl::DataLossError(fmt::format("frame length {} exceeds {}", size, kMaxFrameBytes));
  return size;
}

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  auto frame = EncodeFrame(message);
  if (!frame.ok()) return frame.status();
  size_t written = 0;
  while (written < frame->size()) {
    const ssize_t n = write(fd, frame->data() + written, frame->size() - written);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(fmt::format("write: {}", std::strerror(errno)));
    }
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadFrame(int fd, google::protobuf::MessageLite* message) {
  std::string header(kFrameHeaderBytes, '\0');
  if (absl::Status s = ReadExactly(fd, header.data(), header.size()); !s.ok()) return s;
  auto size = DecodeFrameLength(header);
  if (!size.ok()) return size.status();
  std::string payload(*size, '\0');
  if (absl::Status s = ReadExactly(fd, payload.data(), payload.size()); !s.ok()) return s;
  if (!message->ParseFromString(payload)) return absl::DataLossError("frame does not parse");
  return absl::OkStatus();
}

}  // namespace sparseditto
