// A tokenizer for candidate CUDA C++ sources, precise enough for the static screen: comments vanish,
// string and character literals become single tokens (so "fork" in a string or comment is never an
// identifier), line splices (backslash-newline) are joined, digraphs are normalised, digit
// separators stay inside numbers, and every token keeps the 1-based line of the original source it
// starts on. Preprocessor directives are marked, not executed: no macro is expanded.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sparseditto {

struct SourceToken {
  enum class Kind { kIdentifier, kNumber, kString, kChar, kPunct, kHeaderName };
  Kind kind = Kind::kPunct;
  // kIdentifier/kNumber/kPunct: the spelling ("%:" becomes "#", "<%" becomes "{", ...).
  // kString/kChar: what is between the quotes (raw strings: between the parentheses), escapes as written.
  // kHeaderName: what is between < and > in #include <...>.
  std::string text;
  int line = 1;
  // Index of the preprocessor directive the token belongs to (its '#' included), or -1 in code.
  int directive = -1;

  bool Is(Kind k, std::string_view spelling) const { return kind == k && text == spelling; }
  bool IsPunct(std::string_view spelling) const { return Is(Kind::kPunct, spelling); }
  bool IsIdentifier(std::string_view name) const { return Is(Kind::kIdentifier, name); }
};

// Never fails: an unterminated literal or comment ends at the end of its line or of the source.
std::vector<SourceToken> LexSource(std::string_view source);

// Index of the token closing the bracket `opener` at `open` (nesting counted, staying within the same
// directive or within code), or std::string::npos when it is not closed there.
size_t MatchingClose(const std::vector<SourceToken>& tokens, size_t open, std::string_view opener,
                     std::string_view closer);

// The arguments of the call whose '(' is at `open`, as [begin, end) token ranges split at commas outside
// nested (), [] and {}. Empty for `f()` and for an unclosed call.
std::vector<std::pair<size_t, size_t>> CallArgumentRanges(const std::vector<SourceToken>& tokens, size_t open);

}  // namespace sparseditto
