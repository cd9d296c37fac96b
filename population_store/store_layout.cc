#include "population_store/store_layout.h"

#include "fmt/format.h"

namespace sparseditto::store_layout {

absl::Status CheckId(std::string_view what, std::string_view id) {
  constexpr size_t kMaxIdBytes = 1024;
  if (id.empty()) return absl::InvalidArgumentError(fmt::format("{} is empty", what));
  if (id.size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{} is {} bytes long; at most {} are allowed", what, id.size(), kMaxIdBytes));
  }
  if (id.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format("{} contains a NUL byte", what));
  }
  return absl::OkStatus();
}

std::string Key(std::initializer_list<std::string_view> parts) {
  std::string key;
  bool first = true;
  for (std::string_view part : parts) {
    if (!first) key.push_back('\0');
    key.append(part);
    first = false;
  }
  return key;
}

std::string Prefix(std::initializer_list<std::string_view> parts) {
  std::string prefix = Key(parts);
  prefix.push_back('\0');
  return prefix;
}

std::string EncodeSequence(uint64_t sequence) {
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i) {
    bytes[i] = static_cast<char>(sequence & 0xff);
    sequence >>= 8;
  }
  return bytes;
}

std::optional<uint64_t> DecodeSequence(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  uint64_t sequence = 0;
  for (char c : bytes) sequence = (sequence << 8) | static_cast<unsigned char>(c);
  return sequence;
}

}  // namespace sparseditto::store_layout
