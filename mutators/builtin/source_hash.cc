#include "mutators/builtin/source_hash.h"

#include <cctype>

#include "common/sha256.h"

namespace sparseditto {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string NormaliseSource(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  bool pending_newline = false;
  auto flush_space = [&] {
    if (!out.empty()) {
      if (pending_newline) {
        out += '\n';
      } else if (pending_space) {
        out += ' ';
      }
    }
    pending_space = pending_newline = false;
  };
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && next == '*') {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
      pending_space = true;
      continue;
    }
    if (IsSpace(c)) {
      if (c == '\n') pending_newline = true;
      pending_space = true;
      ++i;
      continue;
    }
    flush_space();
    if (c == '"' || c == '\'') {
      out += c;
      ++i;
      while (i < s.size() && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size()) out += s[i++];
        out += s[i++];
      }
      if (i < s.size() && s[i] == c) out += s[i++];
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::string SourceHash(std::string_view source) { return Sha256Hex(NormaliseSource(source)); }

}  // namespace sparseditto
