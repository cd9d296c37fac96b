#include "kernel_abi/tunables.h"

#include <algorithm>
#include <regex>
#include <set>

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

const std::regex& DeclarationPattern() {
  static const std::regex pattern(
      R"(^(\s*#\s*define\s+)([A-Za-z_][A-Za-z0-9_]*)(\s+)([^\s,\[\]]+)\s*//\s*sparseditto:tunable\s+values\s*=\s*\[([^\]]*)\]\s*$)");
  return pattern;
}

absl::StatusOr<std::vector<std::string>> SplitValueList(std::string_view list, int line_number) {
  std::vector<std::string> values;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(start, comma - start);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    if (item.empty() || item.find_first_of(" \t") != std::string_view::npos) {
      return absl::InvalidArgumentError(
          fmt::format("line {}: tunable value list [{}] has an empty or malformed entry", line_number, list));
    }
    values.emplace_back(item);
    start = comma + 1;
  }
  return values;
}

absl::StatusOr<std::vector<TunableLine>> ScanTunableLines(std::string_view source) {
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
      auto allowed = SplitValueList(match[5].str(), line_number);
      if (!allowed.ok()) return allowed.status();
      for (auto& v : *allowed) parsed.tunable.add_allowed_values(v);
      if (std::find(allowed->begin(), allowed->end(), parsed.tunable.value()) == allowed->end()) {
        return absl::InvalidArgumentError(fmt::format("line {}: tunable {} has value {} not in [{}]", line_number,
                                                      parsed.tunable.name(), parsed.tunable.value(),
                                                      match[5].str()));
      }
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

absl::StatusOr<std::vector<v1::Tunable>> ParseTunables(std::string_view source) {
  auto lines = ScanTunableLines(source);
  if (!lines.ok()) return lines.status();
  std::vector<v1::Tunable> tunables;
  for (auto& line : *lines) tunables.push_back(std::move(line.tunable));
  return tunables;
}

absl::StatusOr<std::string> ApplyTunables(std::string_view source,
                                          const std::map<std::string, std::string>& values) {
  auto lines = ScanTunableLines(source);
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

}  // namespace sparseditto
