#include "evaluator/compile/preprocessed_source.h"

#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

namespace sparseditto {
namespace {

struct LineMarker {
  int line = 0;
  std::string file;
};

// `# 12 "file" 2 3` or `#line 12 "file"` (leading spaces allowed), else nullopt. The file name is
// a C string literal; escapes are decoded for \\ and \" (gcc writes no others for ordinary names).
std::optional<LineMarker> ParseLineMarker(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos) return std::nullopt;
  if (line.compare(i, 4, "line") == 0) i = line.find_first_not_of(" \t", i + 4);
  if (i == std::string_view::npos || !std::isdigit(static_cast<unsigned char>(line[i]))) return std::nullopt;
  LineMarker marker;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
    marker.line = marker.line * 10 + (line[i++] - '0');
    if (marker.line > 100000000) return std::nullopt;
  }
  i = line.find_first_not_of(" \t", i);
  if (i == std::string_view::npos || line[i] != '"') return std::nullopt;
  for (++i; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) ++i;
    marker.file += line[i];
  }
  if (i >= line.size()) return std::nullopt;
  return marker;
}

}  // namespace

std::vector<SourceToken> LexPreprocessedMainFile(std::string_view preprocessed, std::string_view main_file) {
  std::string main_text;             // the main file's lines, in order
  std::vector<int> original_line;    // per line of main_text: its line in the candidate's source
  bool in_main = true;
  int next_line = 1;
  size_t start = 0;
  while (start < preprocessed.size()) {
    size_t end = preprocessed.find('\n', start);
    if (end == std::string_view::npos) end = preprocessed.size();
    const std::string_view line = preprocessed.substr(start, end - start);
    start = end + 1;
    if (std::optional<LineMarker> marker = ParseLineMarker(line)) {
      in_main = marker->file == main_file;
      next_line = marker->line;
      continue;
    }
    if (in_main) {
      main_text.append(line);
      main_text += '\n';
      original_line.push_back(next_line);
    }
    ++next_line;
  }
  std::vector<SourceToken> tokens = LexSource(main_text);
  for (SourceToken& token : tokens) {
    const size_t index = static_cast<size_t>(token.line - 1);
    token.line = index < original_line.size() ? original_line[index] : 0;
  }
  return tokens;
}

}  // namespace sparseditto
