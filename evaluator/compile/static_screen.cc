#include "evaluator/compile/static_screen.h"

#include <algorithm>

#include "evaluator/compile/preprocessed_source.h"
#include "evaluator/compile/screener.h"
#include "evaluator/compile/source_lexer.h"
#include "fmt/format.h"

namespace sparseditto {

namespace {

void SortByLine(std::vector<ScreenFinding>& findings) {
  std::stable_sort(findings.begin(), findings.end(),
                   [](const ScreenFinding& a, const ScreenFinding& b) { return a.line < b.line; });
}

absl::Status FindingsStatus(const std::vector<ScreenFinding>& findings, const ScreenOptions& options,
                            std::string_view suffix) {
  if (findings.empty()) return absl::OkStatus();
  std::string message;
  for (size_t i = 0; i < findings.size() && i < options.max_reported_findings; ++i) {
    if (!message.empty()) message += "\n";
    message += findings[i].line > 0 ? fmt::format("line {}: {}{}", findings[i].line, findings[i].message, suffix)
                                     : findings[i].message + std::string(suffix);
  }
  if (findings.size() > options.max_reported_findings) {
    message += fmt::format("\n... and {} more", findings.size() - options.max_reported_findings);
  }
  return absl::PermissionDeniedError(message);
}

}  // namespace

std::vector<ScreenFinding> FindScreenViolations(std::string_view source, const ScreenOptions& options) {
  if (source.size() > options.max_source_bytes) {
    return {{0, fmt::format("a source of {} bytes is not allowed in a candidate (the limit is {} bytes)",
                            source.size(), options.max_source_bytes)}};
  }
  if (const size_t nul = source.find('\0'); nul != std::string_view::npos) {
    const int line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + nul, '\n'));
    return {{line, "a NUL byte is not allowed in a candidate (binary data)"}};
  }
  std::vector<ScreenFinding> findings = RunScreener(LexSource(source));
  SortByLine(findings);
  return findings;
}


absl::Status ScreenCandidateSource(std::string_view source, const ScreenOptions& options) {
  return FindingsStatus(FindScreenViolations(source, options), options, "");
}

std::vector<ScreenFinding> FindPreprocessedViolations(std::string_view preprocessed, std::string_view main_file) {
  std::vector<ScreenFinding> findings = RunScreener(LexPreprocessedMainFile(preprocessed, main_file));
  SortByLine(findings);
  return findings;
}

absl::Status ScreenPreprocessedSource(std::string_view preprocessed, std::string_view main_file,
                                      const ScreenOptions& options) {
  return FindingsStatus(FindPreprocessedViolations(preprocessed, main_file), options, " (after preprocessing)");
}

}  // namespace sparseditto
