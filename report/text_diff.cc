#include "report/text_diff.h"

#include <sstream>
#include <vector>

#include "dtl/dtl.hpp"
#include "fmt/format.h"

namespace sparseditto::report {

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string UnifiedDiff(std::string_view from, std::string_view to, std::string_view from_name,
                        std::string_view to_name, const DiffOptions& options) {
  if (from == to) return "";
  const std::vector<std::string> a = SplitLines(from), b = SplitLines(to);
  const std::string header = fmt::format("--- {}\n+++ {}\n", from_name, to_name);
  if (a.size() > options.max_lines || b.size() > options.max_lines) {
    return header + fmt::format("[no diff: {} and {} lines, over the limit of {}]\n", a.size(), b.size(), options.max_lines);
  }
  dtl::Diff<std::string, std::vector<std::string>> diff(a, b);
  diff.onHuge();  // bounds dtl's memory on long texts (it splits the work)
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream hunks;
  diff.printUnifiedFormat(hunks);
  std::string body = hunks.str();
  if (body.empty()) return "";  // equal up to a final newline
  size_t lines = 0, at = 0;
  for (; at < body.size(); ++at) {
    if (body[at] == '\n' && ++lines == options.max_output_lines) break;
  }
  if (at + 1 < body.size()) {
    size_t more = 0;
    for (size_t i = at + 1; i < body.size(); ++i) more += body[i] == '\n';
    body = body.substr(0, at + 1) + fmt::format("[... {} more diff lines left out ...]\n", more);
  }
  return header + body;
}

}  // namespace sparseditto::report
