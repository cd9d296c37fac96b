// Length-prefixed protobuf frames (proto/runner.proto describes their use): a 4-byte little-endian
// length, then the serialized message. The runner child reads and writes its fds with the blocking
// functions; the evaluator drives the child through common/subprocess.h with EncodeFrame and
// DecodeFrameLength. Thread-compatible: one reader and one writer per descriptor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"

namespace sparseditto {

inline constexpr uint32_t kMaxFrameBytes = 64u << 20;
inline constexpr size_t kFrameHeaderBytes = 4;

// The frame bytes of `message`. InvalidArgument above kMaxFrameBytes.
absl::StatusOr<std::string> EncodeFrame(const google::protobuf::MessageLite& message);

// The payload length a 4-byte header announces. DataLoss above kMaxFrameBytes or for a short header.
absl::StatusOr<uint32_t> DecodeFrameLength(std::string_view header);

// Writes one frame, retrying short writes and EINTR. Unavailable if the peer has gone.
absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

// Reads one frame (blocking). Unavailable at end of file (the peer closed or died, also inside a
// frame); DataLoss for an oversize length or bytes that do not parse.
absl::Status ReadFrame(int fd, google::protobuf::MessageLite* message);

}  // namespace sparseditto
