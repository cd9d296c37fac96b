#include "kernel_abi/tunables.h"

#include <algorithm>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

// One source line that carries the marker, with the offsets of its value token.
struct TunableLine {
  v1::Tunable tunable;
  int line_number = 0;
  size_t value_begin = 0;  // byte offset in the source
  size_t value_end = 0;
};

// The #define's value: a token, or a tuple without spaces, "(128,64)" / "{128,64}"; then the marker
// and the value spec (tunable_values.h), to the end of the line.
const std::regex& DeclarationPattern() {
  static const std::regex pattern(
      R"(^(\s*#\s*define\s+)([A-Za-z_][A-Za-z0-9_]*)(\s+)(\([^\s()]*\)|\{[^\s{}]*\}|[^\s,\[\](){}]+)\s*//\s*sparseditto:tunable\s+(.*\S)\s*$)");
  return pattern;
}

absl::StatusOr<std::vector<TunableLine>> ScanTunableLines(std::string_view source, const DeviceFacts& device) {
  std::vector<TunableLine> lines;
  std::set<std::string> names;
  size_t line_begin = 0;
  for (int line_number = 1; line_begin < source.size(); ++line_number) {
    size_t line_end = source.find('\n', line_begin);
    if (line_end == std::string_view::npos) line_end = source.size();
    const std::string line(source.substr(line_begin, line_end - line_begin));
    if (line.find(kTunableMarker) != std::string::npos) {
      std::smatch match;
      if (!std::regex_match(line, match, DeclarationPattern())) {
        return absl::InvalidArgumentError(fmt::format(
            "line {}: malformed tunable declaration; expected '#define NAME VALUE  // {} values=[V1, V2]'",
            line_number, kTunableMarker));
      }
      TunableLine parsed;
      parsed.line_number = line_number;
      parsed.tunable.set_name(match[2].str());
      parsed.tunable.set_value(match[4].str());
      auto allowed = ResolveTunableValues(match[5].str(), parsed.tunable.value(), device);
      if (!allowed.ok()) {
        const bool value = absl::StartsWith(allowed.status().message(), "value ");
        return absl::InvalidArgumentError(fmt::format("line {}: {}{}", line_number,
                                                      value ? fmt::format("tunable {} has ", parsed.tunable.name()) : "",
                                                      std::string(allowed.status().message())));
      }
      for (auto& v : allowed->values) parsed.tunable.add_allowed_values(v);
      if (!names.insert(parsed.tunable.name()).second) {
        return absl::InvalidArgumentError(
            fmt::format("line {}: tunable {} declared twice", line_number, parsed.tunable.name()));
      }
      parsed.value_begin = line_begin + match.position(4);
      parsed.value_end = parsed.value_begin + match.length(4);
      lines.push_back(std::move(parsed));
    }
    line_begin = line_end + 1;
  }
  return lines;
}

}  // namespace

absl::StatusOr<std::vector<v1::Tunable>> ParseTunables(std::string_view source, const DeviceFacts& device) {
  auto lines = ScanTunableLines(source, device);
  if (!lines.ok()) return lines.status();
  std::vector<v1::Tunable> tunables;
  for (auto& line : *lines) tunables.push_back(std::move(line.tunable));
  return tunables;
}

absl::StatusOr<std::string> ApplyTunables(std::string_view source,
                                          const std::map<std::string, std::string>& values,
                                          const DeviceFacts& device) {
  auto lines = ScanTunableLines(source, device);
  if (!lines.ok()) return lines.status();
  for (const auto& [name, value] : values) {
    auto it = std::find_if(lines->begin(), lines->end(),
                           [&](const TunableLine& l) { return l.tunable.name() == name; });
    if (it == lines->end()) return absl::InvalidArgumentError(fmt::format("no tunable named {}", name));
    const auto& allowed = it->tunable.allowed_values();
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      return absl::InvalidArgumentError(fmt::format("tunable {}: value {} is not among [{}]", name, value,
                                                    fmt::join(allowed.begin(), allowed.end(), ", ")));
    }
  }
  std::string out;
  out.reserve(source.size() + 64);
  size_t copied = 0;
  for (const auto& line : *lines) {  // in source order
    auto it = values.find(line.tunable.name());
    if (it == values.end()) continue;
    out.append(source.substr(copied, line.value_begin - copied));
    out.append(it->second);
    copied = line.value_end;
  }
  out.append(source.substr(copied));
  return out;
}

std::string DeclaredFamily(std::string_view source) {
  static const std::regex pattern(R"(//\s*sparseditto:family\s+([A-Za-z0-9_.-]+)(\s|$))");
  size_t line_begin = 0;
  while (line_begin < source.size()) {
    size_t line_end = source.find('\n', line_begin);
    if (line_end == std::string_view::npos) line_end = source.size();
    const std::string line(source.substr(line_begin, line_end - line_begin));
    std::smatch match;
    if (line.find(kFamilyMarker) != std::string::npos && std::regex_search(line, match, pattern)) return match[1].str();
    line_begin = line_end + 1;
  }
  return "";
}

std::string CrossoverFamily(const v1::Candidate& candidate) {
  std::string family = DeclaredFamily(candidate.source());
  return family.empty() ? candidate.seed_name() : family;
}

}  // namespace sparseditto
