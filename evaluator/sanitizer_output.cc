#include "evaluator/sanitizer_output.h"

#include <algorithm>
#include <regex>

#include "evaluator/compile/source_lexer.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr std::string_view kToolPrefix = "========= ";

bool FromLibrary(const std::string& function, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return !p.empty() && function.rfind(p, 0) == 0; });
}

}  // namespace

std::optional<LibraryRaceHazards> RaceHazardsOnlyInLibraryKernels(std::string_view output,
                                                                  const std::vector<std::string>& library_kernel_prefixes) {
  // A library kernel's access is "name+0xOFFSET" alone: no argument list, no "in file:line".
  static const std::regex kHead(R"(^(Error|Warning): Race reported between (Read|Write) access at (\S+)\+0x[0-9a-f]+$)");
  static const std::regex kAnd(R"(^\s+and (Read|Write) access at (\S+)\+0x[0-9a-f]+ \[\d+ hazards?\]$)");
  static const std::regex kSummary(R"(^RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)$)");
  LibraryRaceHazards found;
  bool in_report = false, report_has_access = false, summary_seen = false;
  long displayed = 0, errors = 0, warnings = 0;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, kToolPrefix.size() - 1) == kToolPrefix.substr(0, kToolPrefix.size() - 1) &&
        line.find_first_not_of(' ', kToolPrefix.size() - 1) == std::string_view::npos) {  // the tool's blank line
      if (in_report && !report_has_access) return std::nullopt;  // a report ends: it had its second access
      in_report = false;
      continue;
    }
    if (line.substr(0, kToolPrefix.size()) != kToolPrefix) continue;  // the candidate host's own lines
    const std::string body(line.substr(kToolPrefix.size()));
    std::smatch m;
    if (body == "COMPUTE-SANITIZER") {
    } else if (std::regex_match(body, m, kHead)) {
      if (in_report && !report_has_access) return std::nullopt;
      if (!FromLibrary(m[3], library_kernel_prefixes)) return std::nullopt;
      found.kernels.push_back(m[3]);
      ++found.reports;
      in_report = true, report_has_access = false;
    } else if (in_report && std::regex_match(body, m, kAnd)) {
      if (!FromLibrary(m[2], library_kernel_prefixes)) return std::nullopt;
      found.kernels.push_back(m[2]);
      report_has_access = true;
    } else if (std::regex_match(body, m, kSummary) && !summary_seen) {
      if (in_report && !report_has_access) return std::nullopt;
      summary_seen = true, in_report = false;
      displayed = std::stol(m[1]), errors = std::stol(m[2]), warnings = std::stol(m[3]);
    } else {
      return std::nullopt;  // another kind of finding, a backtrace, an internal error, a second summary
    }
  }
  if (!summary_seen || in_report || found.reports == 0 || displayed != found.reports || displayed != errors + warnings) {
    return std::nullopt;
  }
  std::sort(found.kernels.begin(), found.kernels.end());
  found.kernels.erase(std::unique(found.kernels.begin(), found.kernels.end()), found.kernels.end());
  return found;
}

std::optional<std::string> WhyLibraryKernelNamesAreNotTrusted(std::string_view source,
                                                              const std::vector<std::string>& library_kernel_prefixes) {
  static constexpr std::string_view kLoaders[] = {"cudaLibraryLoad", "cudaGetDriverEntryPoint", "cuModuleLoad",
                                                  "cuLibraryLoad",   "cuLink",                  "cuGetProcAddress",
                                                  "nvrtc",           "nvJitLink",               "nvPTXCompiler"};
  for (const SourceToken& token : LexSource(source)) {
    if (token.kind != SourceToken::Kind::kIdentifier) continue;
    for (std::string_view loader : kLoaders) {
      if (token.text.rfind(loader, 0) == 0) return fmt::format("loads code at run time ({}, line {})", token.text, token.line);
    }
    if (FromLibrary(token.text, library_kernel_prefixes)) {
      return fmt::format("names an identifier like a library kernel ({}, line {})", token.text, token.line);
    }
  }
  return std::nullopt;
}

}  // namespace sparseditto
