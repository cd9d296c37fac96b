#include "evaluator/compile/source_lexer.h"

#include <array>
#include <cctype>

namespace sparseditto {
namespace {

bool IsIdentifierStart(unsigned char c) { return std::isalpha(c) || c == '_' || c == '$' || c >= 0x80; }
bool IsIdentifierChar(unsigned char c) { return IsIdentifierStart(c) || std::isdigit(c); }

bool IsStringPrefix(std::string_view word) {
  for (std::string_view prefix : {"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"}) {
    if (word == prefix) return true;
  }
  return false;
}

// Multi-character punctuators we keep whole, longest first; digraphs map to their meaning.
struct Punctuator {
  std::string_view spelling;
  std::string_view meaning;
};
constexpr std::array<Punctuator, 30> kPunctuators = {{
    {"%:%:", "##"}, {"->*", "->*"}, {"<=>", "<=>"}, {"...", "..."}, {"<<=", "<<="}, {">>=", ">>="},
    {"::", "::"},   {"->", "->"},   {"##", "##"},   {"==", "=="},   {"!=", "!="},   {"<=", "<="},
    {">=", ">="},   {"&&", "&&"},   {"||", "||"},   {"++", "++"},   {"--", "--"},   {"+=", "+="},
    {"-=", "-="},   {"*=", "*="},   {"/=", "/="},   {"|=", "|="},   {"&=", "&="},   {"^=", "^="},
    {"<%", "{"},    {"%>", "}"},    {"<:", "["},    {":>", "]"},    {"%:", "#"},    {".*", ".*"},
}};

class Lexer {
 public:
  explicit Lexer(std::string_view source) { Splice(source); }

  std::vector<SourceToken> Run() {
    while (pos_ < text_.size()) Step();
    return std::move(tokens_);
  }

 private:
  // Phase 2: join backslash-newline splices, remembering each character's original line.
  void Splice(std::string_view source) {
    int line = 1;
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\\') {
        size_t j = i + 1;
        if (j < source.size() && source[j] == '\r') ++j;
        if (j < source.size() && source[j] == '\n') {
          ++line;
          i = j;
          continue;
        }
      }
      text_ += source[i];
      line_of_.push_back(line);
      if (source[i] == '\n') ++line;
    }
    line_of_.push_back(line);
  }

  char At(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  bool StartsWith(std::string_view s) const { return text_.compare(pos_, s.size(), s) == 0; }

  void Emit(SourceToken::Kind kind, std::string text, size_t start) {
    tokens_.push_back({kind, std::move(text), line_of_[start], directive_});
  }

  // True when the current directive so far is "# include" (or include_next / import).
  bool InIncludeDirective() const {
    if (directive_ < 0 || tokens_.size() < 2) return false;
    const SourceToken& name = tokens_.back();
    const SourceToken& hash = tokens_[tokens_.size() - 2];
    return hash.directive == directive_ && hash.IsPunct("#") && name.directive == directive_ &&
           (name.IsIdentifier("include") || name.IsIdentifier("include_next") || name.IsIdentifier("import"));
  }

  void Step() {
    const char c = text_[pos_];
    if (c == '\n') {
      at_line_start_ = true;
      directive_ = -1;
      ++pos_;
      return;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
      return;
    }
    if (StartsWith("//")) {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      return;
    }
    if (StartsWith("/*")) {  // a comment inside a directive continues it, as in the preprocessor
      const size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string::npos ? text_.size() : end + 2;
      return;
    }
    const bool first_on_line = at_line_start_;
    at_line_start_ = false;
    const size_t start = pos_;
    if (first_on_line && (c == '#' || (StartsWith("%:") && !StartsWith("%:%:")))) {
      directive_ = next_directive_++;
      pos_ += c == '#' ? 1 : 2;
      return Emit(SourceToken::Kind::kPunct, "#", start);
    }
    if (IsIdentifierStart(static_cast<unsigned char>(c))) return LexWord(start);
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && std::isdigit(static_cast<unsigned char>(At(pos_ + 1))))) {
      return LexNumber(start);
    }
    if (c == '"') return LexQuoted(start, '"', SourceToken::Kind::kString);
    if (c == '\'') return LexQuoted(start, '\'', SourceToken::Kind::kChar);
    if (c == '<' && InIncludeDirective()) {
      const size_t end = text_.find_first_of(">\n", pos_ + 1);
      const size_t stop = end == std::string::npos ? text_.size() : end;
      Emit(SourceToken::Kind::kHeaderName, text_.substr(pos_ + 1, stop - pos_ - 1), start);
      pos_ = (stop < text_.size() && text_[stop] == '>') ? stop + 1 : stop;
      return;
    }
    for (const Punctuator& p : kPunctuators) {
      if (StartsWith(p.spelling)) {
        pos_ += p.spelling.size();
        return Emit(SourceToken::Kind::kPunct, std::string(p.meaning), start);
      }
    }
    ++pos_;
    Emit(SourceToken::Kind::kPunct, std::string(1, c), start);
  }

  void LexWord(size_t start) {
    while (pos_ < text_.size() && IsIdentifierChar(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    const std::string word = text_.substr(start, pos_ - start);
    const char next = At(pos_);
    if (next == '"' && IsStringPrefix(word)) {
      if (word.back() == 'R') return LexRawString(start);
      return LexQuoted(start, '"', SourceToken::Kind::kString);
    }
    if (next == '\'' && (word == "L" || word == "u" || word == "U" || word == "u8")) {
      return LexQuoted(start, '\'', SourceToken::Kind::kChar);
    }
    Emit(SourceToken::Kind::kIdentifier, word, start);
  }

  // A pp-number: digits, letters, '.', digit separators ('), and signs after e/E/p/P.
  void LexNumber(size_t start) {
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      const char prev = text_[pos_ - 1];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
        ++pos_;
      } else if (c == '\'' && std::isalnum(static_cast<unsigned char>(At(pos_ + 1)))) {
        pos_ += 2;
      } else if ((c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
        ++pos_;
      } else {
        break;
      }
    }
    Emit(SourceToken::Kind::kNumber, text_.substr(start, pos_ - start), start);
  }

  // From the opening quote at or after pos_ (after any prefix) to the closing one or the line's end.
  void LexQuoted(size_t start, char quote, SourceToken::Kind kind) {
    pos_ = text_.find(quote, pos_);
    size_t i = pos_ + 1;
    while (i < text_.size() && text_[i] != quote && text_[i] != '\n') i += text_[i] == '\\' ? 2 : 1;
    i = std::min(i, text_.size());
    Emit(kind, text_.substr(pos_ + 1, i - pos_ - 1), start);
    pos_ = (i < text_.size() && text_[i] == quote) ? i + 1 : i;
  }

  // R"delim( ... )delim"
  void LexRawString(size_t start) {
    const size_t open_quote = pos_;
    const size_t open_paren = text_.find('(', open_quote);
    if (open_paren == std::string::npos || open_paren - open_quote > 17) {
      return LexQuoted(start, '"', SourceToken::Kind::kString);  // malformed; lex as a plain string
    }
    std::string closing(1, ')');  // ")delim\"" built by appends (GCC 12 -Wrestrict false positive on operator+)
    closing.append(text_, open_quote + 1, open_paren - open_quote - 1);
    closing.push_back('"');
    const size_t close = text_.find(closing, open_paren + 1);
    const size_t end = close == std::string::npos ? text_.size() : close;
    Emit(SourceToken::Kind::kString, text_.substr(open_paren + 1, end - open_paren - 1), start);
    pos_ = close == std::string::npos ? text_.size() : close + closing.size();
  }

  std::string text_;
  std::vector<int> line_of_;
  size_t pos_ = 0;
  bool at_line_start_ = true;
  int directive_ = -1;
  int next_directive_ = 0;
  std::vector<SourceToken> tokens_;
};

}  // namespace

std::vector<SourceToken> LexSource(std::string_view source) { return Lexer(source).Run(); }

size_t MatchingClose(const std::vector<SourceToken>& tokens, size_t open, std::string_view opener,
                     std::string_view closer) {
  int depth = 0;
  for (size_t i = open; i < tokens.size() && tokens[i].directive == tokens[open].directive; ++i) {
    if (tokens[i].IsPunct(opener)) ++depth;
    if (tokens[i].IsPunct(closer) && --depth == 0) return i;
  }
  return std::string::npos;
}

std::vector<std::pair<size_t, size_t>> CallArgumentRanges(const std::vector<SourceToken>& tokens, size_t open) {
  std::vector<std::pair<size_t, size_t>> args;
  const size_t close = MatchingClose(tokens, open, "(", ")");
  if (close == std::string::npos || close == open + 1) return args;
  int depth = 0;
  size_t begin = open + 1;
  for (size_t i = open + 1; i < close; ++i) {
    const SourceToken& t = tokens[i];
    if (t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{")) ++depth;
    if (t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}")) --depth;
    if (depth == 0 && t.IsPunct(",")) {
      args.push_back({begin, i});
      begin = i + 1;
    }
  }
  args.push_back({begin, close});
  return args;
}

}  // namespace sparseditto
