#include "report/html_text.h"

#include <cstdint>

#include "fmt/format.h"

namespace sparseditto::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0 when it is not valid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8Sequence(std::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  size_t length;
  uint32_t cp;
  if (b < 0x80) {
    *code_point = b;
    return 1;
  } else if (b >= 0xC2 && b <= 0xDF) {
    length = 2, cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3, cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4, cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((length == 3 && cp < 0x800) || (length == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return length;
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t length = Utf8Sequence(text, i, &cp);
    if (length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) ||
            cp == 0xFFFE || cp == 0xFFFF) {
          out += kReplacement;
        } else {
          out.append(text.substr(i, length));
        }
    }
    i += length;
  }
  return out;
}

std::string TrimMiddle(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  const size_t half = max_bytes / 2;
  size_t head_end = half;
  // End the head at a line break in its last quarter, and start the tail after one in its first.
  if (const size_t nl = text.rfind('\n', head_end); nl != std::string_view::npos && nl + half / 4 >= head_end) head_end = nl + 1;
  size_t tail_start = text.size() - half;
  if (const size_t nl = text.find('\n', tail_start); nl != std::string_view::npos && nl < tail_start + half / 4) tail_start = nl + 1;
  return fmt::format("{}\n[... {} bytes left out ...]\n{}", text.substr(0, head_end), tail_start - head_end,
                     text.substr(tail_start));
}

std::string JsonForScript(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace sparseditto::report
