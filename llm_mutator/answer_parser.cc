#include "llm_mutator/answer_parser.h"

#include "fmt/format.h"

namespace sparseditto::llm {
namespace {

constexpr std::string_view kSearch = "<<<<<<< SEARCH";
constexpr std::string_view kDivider = "=======";
constexpr std::string_view kReplace = ">>>>>>> REPLACE";

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The first line at or after `from` that is any of the three markers (lines.size() if none).
size_t FindMarker(const std::vector<std::string_view>& lines, size_t from) {
  size_t i = from;
  while (i < lines.size()) {
    const std::string_view line = TrimRight(lines[i]);
    if (line == kSearch || line == kDivider || line == kReplace) break;
    ++i;
  }
  return i;
}

std::string Join(const std::vector<std::string_view>& lines, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (i > from) out += '\n';
    out += lines[i];
  }
  return out;
}

// Where `search` occurs in `text` as whole lines: starting at a line start, ending at a line end.
std::vector<size_t> FindWholeLines(const std::string& text, const std::string& search) {
  std::vector<size_t> found;
  for (size_t at = text.find(search); at != std::string::npos; at = text.find(search, at + 1)) {
    const size_t end = at + search.size();
    const bool starts = at == 0 || text[at - 1] == '\n';
    const bool ends = end == text.size() || text[end] == '\n' || search.back() == '\n';
    if (starts && ends) found.push_back(at);
  }
  return found;
}

std::string FirstLine(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.size() > 80) return std::string(line.substr(0, 80)) + "...";
  return std::string(line);
}

}  // namespace

absl::StatusOr<std::vector<EditBlock>> ParseEditBlocks(std::string_view answer) {
  const std::vector<std::string_view> lines = SplitLines(answer);
  std::vector<EditBlock> blocks;
  size_t i = 0;
  while (i < lines.size()) {
    if (TrimRight(lines[i]) != kSearch) {
      ++i;
      continue;
    }
    const int number = static_cast<int>(blocks.size()) + 1;
    const size_t divider = FindMarker(lines, i + 1);
    if (divider >= lines.size() || TrimRight(lines[divider]) != kDivider) {
      return absl::InvalidArgumentError(fmt::format("SEARCH block {} has no '{}' line", number, kDivider));
    }
    const size_t end = FindMarker(lines, divider + 1);
    if (end >= lines.size() || TrimRight(lines[end]) != kReplace) {
      return absl::InvalidArgumentError(fmt::format("SEARCH block {} has no '{}' line", number, kReplace));
    }
    EditBlock block{Join(lines, i + 1, divider), Join(lines, divider + 1, end)};
    if (block.search.find_first_not_of(" \t\r\n") == std::string::npos) {
      return absl::InvalidArgumentError(
          fmt::format("SEARCH block {} is empty; quote the lines of the parent to replace", number));
    }
    blocks.push_back(std::move(block));
    i = end + 1;
  }
  if (blocks.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("the answer has no '{}' ... '{}' ... '{}' block", kSearch, kDivider, kReplace));
  }
  return blocks;
}

absl::StatusOr<std::string> ApplyEditBlocks(std::string_view source, const std::vector<EditBlock>& blocks) {
  std::string text(source);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::string& search = blocks[b].search;
    const std::vector<size_t> at = FindWholeLines(text, search);
    if (at.empty()) {
      return absl::FailedPreconditionError(
          fmt::format("SEARCH block {} not found in the parent (first line: '{}'); copy whole lines of the parent "
                      "exactly, with their indentation",
                      b + 1, FirstLine(search)));
    }
    if (at.size() > 1) {
      return absl::FailedPreconditionError(fmt::format(
          "SEARCH block {} matches {} places in the parent (first line: '{}'); include more lines to make it unique",
          b + 1, at.size(), FirstLine(search)));
    }
    const size_t first = at.front();
    text.replace(first, search.size(), blocks[b].replace);
  }
  return text;
}

absl::StatusOr<std::string> ApplyDiffAnswer(std::string_view source, std::string_view answer) {
  absl::StatusOr<std::vector<EditBlock>> blocks = ParseEditBlocks(answer);
  if (!blocks.ok()) return blocks.status();
  return ApplyEditBlocks(source, *blocks);
}

absl::StatusOr<std::string> ExtractCudaBlock(std::string_view answer) {
  const std::vector<std::string_view> lines = SplitLines(answer);
  std::vector<std::string> found;
  size_t i = 0;
  while (i < lines.size()) {
    const std::string_view line = TrimRight(lines[i]);
    if (!line.starts_with("```")) {
      ++i;
      continue;
    }
    std::string_view tag = line.substr(3);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    size_t end = i + 1;
    while (end < lines.size() && TrimRight(lines[end]) != "```") ++end;
    if (end >= lines.size()) {
      if (tag == "cuda" || tag == "cu" || tag == "c++" || tag == "cpp") {
        return absl::InvalidArgumentError("the ```cuda block is not closed (was the answer cut short?)");
      }
      break;
    }
    if (tag == "cuda" || tag == "cu" || tag == "c++" || tag == "cpp") found.push_back(Join(lines, i + 1, end) + "\n");
    i = end + 1;
  }
  if (found.empty()) return absl::InvalidArgumentError("the answer has no ```cuda block with the whole source");
  if (found.size() > 1) {
    return absl::InvalidArgumentError(
        fmt::format("the answer has {} ```cuda blocks; give exactly one with the whole source", found.size()));
  }
  return found.front();
}

}  // namespace sparseditto::llm
