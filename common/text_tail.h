// The end of a long text (a log), at most `limit` bytes, marked with "...\n" when cut.
#pragma once

#include <cstddef>
#include <string>

namespace sparseditto {

inline std::string TextTail(const std::string& text, size_t limit) {
  return text.size() <= limit ? text : "...\n" + text.substr(text.size() - limit);
}

}  // namespace sparseditto
