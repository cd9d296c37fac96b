#include "matrix/text_scanner.h"

#include <charconv>
#include <limits>

namespace sparseditto {

bool TextScanner::NextLine() {
  if (next_line_start_ >= text_.size()) return false;
  const size_t end = text_.find('\n', next_line_start_);
  const size_t line_end = end == std::string_view::npos ? text_.size() : end;
  rest_ = text_.substr(next_line_start_, line_end - next_line_start_);
  next_line_start_ = end == std::string_view::npos ? text_.size() : end + 1;
  ++line_number_;
  return true;
}

void TextScanner::SkipSeparators() {
  size_t i = 0;
  while (i < rest_.size() && IsSeparator(rest_[i])) ++i;
  rest_.remove_prefix(i);
}

bool TextScanner::LineExhausted() {
  SkipSeparators();
  return rest_.empty();
}

std::string_view TextScanner::RestOfLine() {
  SkipSeparators();
  return rest_;
}

std::string_view TextScanner::NextToken() {
  SkipSeparators();
  size_t i = 0;
  while (i < rest_.size() && !IsSeparator(rest_[i])) ++i;
  const std::string_view token = rest_.substr(0, i);
  rest_.remove_prefix(i);
  return token;
}

absl::Status TextScanner::ReadCount(std::string_view what, int64_t* value) {
  const std::string_view token = NextToken();
  if (token.empty()) return Error("expected {}, found end of line{}", what, TruncationHint());
  bool too_large = false;
  if (!ParseCount(token, value, &too_large)) {
    return too_large ? Error("{} {} is too large", what, QuoteToken(token))
                     : Error("{} {} is not a non-negative integer", what, QuoteToken(token));
  }
  return absl::OkStatus();
}

absl::Status TextScanner::ErrorAtLine(int64_t line, std::string_view message) const {
  return absl::InvalidArgumentError(fmt::format("{}: line {}: {}", name_, line, message));
}

bool ParseCount(std::string_view token, int64_t* value, bool* too_large) {
  *too_large = false;
  if (token.empty() || token.front() < '0' || token.front() > '9') return false;
  uint64_t parsed = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, parsed);
  if (ec == std::errc::result_out_of_range) {
    // Only report "too large" when the whole token is digits; "99999999999999999999x" is garbage.
    size_t digits = 0;
    while (digits < token.size() && token[digits] >= '0' && token[digits] <= '9') ++digits;
    *too_large = digits == token.size();
    return false;
  }
  if (ec != std::errc() || ptr != end) return false;
  if (parsed > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    *too_large = true;
    return false;
  }
  *value = static_cast<int64_t>(parsed);
  return true;
}

std::string QuoteToken(std::string_view token) {
  constexpr size_t kMaxShown = 24;
  std::string quoted = "'";
  for (size_t i = 0; i < token.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f) {
      quoted += static_cast<char>(c);
    } else {
      quoted += fmt::format("\\x{:02x}", c);
    }
  }
  if (token.size() > kMaxShown) quoted += "...";
  quoted += "'";
  return quoted;
}

}  // namespace sparseditto
