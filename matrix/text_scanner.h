// Line-by-line, token-by-token reading for the text matrix formats (.smtx, .mtx), keeping the line
// number that every error message names. Internal to matrix/: the readers' contract is matrix_file.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace sparseditto {

// Walks `text` one line at a time and, within the current line, one token at a time. Lines end at
// '\n' (a final line needs none). Tokens are separated by spaces, tabs, '\r', '\v', '\f' and, when
// set_comma_separates(true), commas. Holds views into `text`, which must outlive the scanner.
class TextScanner {
 public:
  TextScanner(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  // Moves to the next line. Returns false, and stays on the last line, when the text has no more.
  bool NextLine();

  // 1-based number of the current line; 0 before the first NextLine().
  int64_t line_number() const { return line_number_; }

  // True when no line follows the current one (the text ends inside or right after it).
  bool AtLastLine() const { return next_line_start_ >= text_.size(); }

  // " (file truncated?)" when the text ends on the current line, else "": for "found too few" messages.
  std::string_view TruncationHint() const { return AtLastLine() ? " (file truncated?)" : ""; }

  // Bytes after the end of the current line: what the rest of the file has to offer.
  int64_t BytesAfterLine() const { return static_cast<int64_t>(text_.size() - next_line_start_); }

  // True if the current line has no tokens left.
  bool LineExhausted();

  // The rest of the current line, separators trimmed at the front.
  std::string_view RestOfLine();

  // The next token of the current line; empty when the line has none left.
  std::string_view NextToken();

  // Reads the next token as a decimal integer without sign. Errors (InvalidArgument, via Error):
  // "expected <what>, found end of line" (plus TruncationHint()), "<what> '<token>' is not a non-negative integer",
  // "<what> '<token>' is too large".
  absl::Status ReadCount(std::string_view what, int64_t* value);

  void set_comma_separates(bool on) { comma_separates_ = on; }

  // InvalidArgument "<name>: line <L>: <message>" for the current line.
  template <typename... Args>
  absl::Status Error(fmt::format_string<Args...> format, Args&&... args) const {
    return ErrorAtLine(line_number_, fmt::format(format, std::forward<Args>(args)...));
  }
  absl::Status ErrorAtLine(int64_t line, std::string_view message) const;

 private:
  bool IsSeparator(char c) const {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || (comma_separates_ && c == ',');
  }
  void SkipSeparators();

  std::string_view text_;
  std::string name_;
  size_t next_line_start_ = 0;  // offset of the line after the current one
  std::string_view rest_;       // unread part of the current line
  int64_t line_number_ = 0;
  bool comma_separates_ = false;
};

// Parses all of `token` as a decimal integer without sign (std::from_chars). Returns false for an
// empty token, a sign, any other character, or a value above INT64_MAX (then *too_large is true).
bool ParseCount(std::string_view token, int64_t* value, bool* too_large);

// `token` for a message: in single quotes, at most 24 characters (then "..."), bytes outside
// printable ASCII written as \xNN, so a garbled file cannot flood or corrupt the message.
std::string QuoteToken(std::string_view token);

}  // namespace sparseditto
