#include "llm_mutator/prompt_template.h"

#include <algorithm>

#include "fmt/format.h"

namespace sparseditto::llm {
namespace {

struct Tag {
  char kind = 0;  // 0 variable, '#', '^', '/'
  std::string name;
  size_t begin = 0;  // of "{{"
  size_t end = 0;    // after "}}"
};

class Renderer {
 public:
  Renderer(std::string_view text, const TemplateVars& vars, std::string_view name)
      : text_(text), vars_(vars), name_(name) {}

  // Renders text_[pos, ...) until the closing tag of `section` (or the end when section is empty);
  // `emit` false renders nothing but still checks. Returns the position after the closing tag.
  absl::StatusOr<size_t> Render(size_t pos, const std::string& section, bool emit, std::string* out) {
    while (true) {
      const size_t open = text_.find("{{", pos);
      if (open == std::string_view::npos) {
        if (!section.empty()) return Error(pos, fmt::format("section '{}' is never closed", section));
        if (emit) out->append(text_.substr(pos));
        return text_.size();
      }
      if (emit) out->append(text_.substr(pos, open - pos));
      absl::StatusOr<Tag> tag = ReadTag(open);
      if (!tag.ok()) return tag.status();
      if (tag->kind != '/' && !vars_.contains(tag->name)) {
        return Error(open, fmt::format("unknown placeholder '{}'", tag->name));
      }
      if (tag->kind == 0) {
        if (emit) out->append(vars_.find(tag->name)->second);
        pos = tag->end;
      } else if (tag->kind == '/') {
        if (tag->name != section) return Error(open, fmt::format("'{{{{/{}}}}}' closes no open section", tag->name));
        return tag->end;
      } else {
        const bool non_empty = !vars_.find(tag->name)->second.empty();
        const bool show = tag->kind == '#' ? non_empty : !non_empty;
        absl::StatusOr<size_t> after = Render(tag->end, tag->name, emit && show, out);
        if (!after.ok()) return after.status();
        pos = *after;
      }
    }
  }

 private:
  absl::StatusOr<Tag> ReadTag(size_t open) {
    const size_t close = text_.find("}}", open + 2);
    if (close == std::string_view::npos) return Error(open, "'{{' without '}}'");
    Tag tag;
    tag.begin = open;
    tag.end = close + 2;
    std::string_view inner = text_.substr(open + 2, close - open - 2);
    auto trim = [](std::string_view s) {
      while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
      while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
      return s;
    };
    inner = trim(inner);
    if (!inner.empty() && (inner[0] == '#' || inner[0] == '^' || inner[0] == '/')) {
      tag.kind = inner[0];
      inner = trim(inner.substr(1));
    }
    const bool valid = !inner.empty() && std::all_of(inner.begin(), inner.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!valid) return Error(open, fmt::format("malformed tag '{{{{{}}}}}'", text_.substr(open + 2, close - open - 2)));
    tag.name = std::string(inner);
    return tag;
  }

  absl::Status Error(size_t pos, std::string_view reason) const {
    const int line = 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + std::min(pos, text_.size()), '\n'));
    return absl::InvalidArgumentError(fmt::format("{}:{}: {}", name_, line, reason));
  }

  std::string_view text_;
  const TemplateVars& vars_;
  std::string_view name_;
};

}  // namespace

absl::StatusOr<std::string> RenderTemplate(std::string_view text, const TemplateVars& vars,
                                           std::string_view template_name) {
  std::string out;
  Renderer renderer(text, vars, template_name);
  absl::StatusOr<size_t> end = renderer.Render(0, "", true, &out);
  if (!end.ok()) return end.status();
  return out;
}

}  // namespace sparseditto::llm
