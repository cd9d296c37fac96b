// Lets {fmt} format absl::string_view (what absl::Status::message() returns). Debian's Abseil is built
// with its own string_view type, which fmt does not know.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"
#include "fmt/format.h"

template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view s, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.data(), s.size()), ctx);
  }
};
