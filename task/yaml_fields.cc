#include "task/yaml_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "fmt/format.h"

namespace sparseditto::task_internal {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// How a node looks in an error message. Long scalars are cut short.
std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: {
      std::string s = node.Scalar();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return fmt::format("'{}'", s);
    }
    default: return "an undefined value";
  }
}

// A scalar YAML did not quote or tag as a string, so it may be read as a number.
bool IsPlainOrNumericTag(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  return tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float";
}

absl::Status ExpectedScalar(const ParseContext& ctx, const Field& f, std::string_view what) {
  if (f.node.IsScalar() && !IsPlainOrNumericTag(f.node)) {
    return ErrorAt(ctx, f, fmt::format("expected {}, got the string {}", what, Describe(f.node)));
  }
  return ErrorAt(ctx, f, fmt::format("expected {}, got {}", what, Describe(f.node)));
}

// The key/value pair for `key` in a YAML map (the first, should a key repeat).
std::optional<std::pair<YAML::Node, YAML::Node>> FindKey(const YAML::Node& map, std::string_view key) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return std::make_pair(it->first, it->second);
  }
  return std::nullopt;
}

template <typename T>
bool ParseAll(std::string_view s, T* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

SourcePos PosOf(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

void SourceMap::Record(const std::string& path, SourcePos pos, std::string display) {
  entries_[path] = Entry{pos, std::move(display)};
}

bool SourceMap::Has(std::string_view path) const { return entries_.find(path) != entries_.end(); }

std::pair<SourcePos, std::string> SourceMap::Find(std::string_view path) const {
  std::string_view probe = path;
  while (true) {
    auto it = entries_.find(probe);
    if (it != entries_.end()) {
      // `probe` is empty (the task: join with a dot) or ends where path goes on with '.' or '['.
      if (probe.empty()) return {it->second.pos, JoinPath(it->second.display, path)};
      return {it->second.pos, it->second.display + std::string(path.substr(probe.size()))};
    }
    if (probe.empty()) return {{}, std::string(path)};
    size_t cut = probe.find_last_of(".[");
    probe = probe.substr(0, cut == std::string_view::npos ? 0 : cut);
  }
}

absl::Status FieldError(std::string_view file, SourcePos pos, std::string_view path, std::string_view reason) {
  std::string msg;
  if (!file.empty()) {
    msg = std::string(file);
    if (pos.line > 0) msg += fmt::format(":{}:{}", pos.line, pos.column);
    msg += ": ";
  }
  if (!path.empty()) msg += fmt::format("{}: ", path);
  msg += reason;
  return absl::InvalidArgumentError(msg);
}

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) && Lower(a[i - 2]) == Lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string Suggestion(std::string_view word, std::span<const std::string_view> known) {
  std::string_view best;
  int best_distance = std::numeric_limits<int>::max();
  for (std::string_view k : known) {
    const int d = EditDistance(word, k);
    if (d < best_distance) best_distance = d, best = k;
  }
  const int limit = std::clamp(static_cast<int>(best.size()) / 3, 1, 3);
  if (!best.empty() && best_distance <= limit) return fmt::format(" (did you mean '{}'?)", best);
  std::string list;
  for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  return fmt::format(" (expected one of {})", list);
}

std::string JoinPath(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return fmt::format("{}.{}", prefix, key);
}

std::string IndexPath(std::string_view prefix, size_t index) { return fmt::format("{}[{}]", prefix, index); }

SourcePos PosOfField(const Field& f) {
  if (f.node.IsNull() || f.node.Mark().is_null()) return PosOf(f.key_mark);
  return PosOf(f.node.Mark());
}

absl::Status ErrorAt(const ParseContext& ctx, const Field& f, std::string_view reason) {
  return FieldError(ctx.file, PosOfField(f), f.display, reason);
}

Fields::Fields(const ParseContext* ctx, std::string path, std::vector<Layer> layers)
    : ctx_(ctx), path_(std::move(path)), layers_(std::move(layers)) {}

std::string Fields::display() const { return layers_.empty() ? path_ : layers_.back().display; }

SourcePos Fields::pos() const { return layers_.empty() ? SourcePos{} : PosOf(layers_.back().map.Mark()); }

absl::Status Fields::CheckKeys(std::span<const std::string_view> known) const {
  for (const Layer& layer : layers_) {
    std::vector<std::string> seen;
    for (auto it = layer.map.begin(); it != layer.map.end(); ++it) {
      const YAML::Node key = it->first;  // a copy: it-> yields a temporary proxy
      if (!key.IsScalar()) {
        return FieldError(ctx_->file, PosOf(key.Mark()), layer.display,
                          fmt::format("field names must be plain strings, got {}", Describe(key)));
      }
      const std::string& name = key.Scalar();
      const std::string display = JoinPath(layer.display, name);
      if (name == "<<") {
        return FieldError(ctx_->file, PosOf(key.Mark()), display,
                          "YAML merge keys are not supported; share fields through a batch's `defaults:`");
      }
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        return FieldError(ctx_->file, PosOf(key.Mark()), display, "unknown field" + Suggestion(name, known));
      }
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
        return FieldError(ctx_->file, PosOf(key.Mark()), display, "field given twice");
      }
      seen.push_back(name);
    }
  }
  return absl::OkStatus();
}

std::optional<Field> Fields::Get(std::string_view key) const {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    auto kv = FindKey(layer->map, key);
    if (!kv) continue;
    Field f{kv->second, kv->first.Mark(), JoinPath(path_, key), JoinPath(layer->display, key)};
    if (ctx_->sources) ctx_->sources->Record(f.path, PosOfField(f), f.display);
    return f;
  }
  return std::nullopt;
}

absl::StatusOr<Fields> Fields::Sub(std::string_view key, Discriminator discriminator) const {
  std::vector<Layer> sub;
  std::vector<std::string> variants;
  for (const Layer& layer : layers_) {
    auto kv = FindKey(layer.map, key);
    if (!kv) continue;
    Field f{kv->second, kv->first.Mark(), JoinPath(path_, key), JoinPath(layer.display, key)};
    if (!f.node.IsMap()) return ErrorAt(*ctx_, f, fmt::format("expected a mapping, got {}", Describe(f.node)));
    sub.push_back(Layer{f.node, f.display});
    variants.push_back(discriminator ? discriminator(f.node) : std::string());
  }
  // Drop lower layers that describe another variant than the highest layer naming one.
  std::string top;
  for (size_t i = sub.size(); i-- > 0;) {
    if (top.empty()) {
      top = variants[i];
    } else if (!variants[i].empty() && variants[i] != top) {
      sub.erase(sub.begin(), sub.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  }
  Fields result(ctx_, JoinPath(path_, key), std::move(sub));
  if (ctx_->sources && !result.empty()) ctx_->sources->Record(result.path(), result.pos(), result.display());
  return result;
}

absl::StatusOr<std::string> ReadString(const ParseContext& ctx, const Field& f) {
  if (!f.node.IsScalar()) return ErrorAt(ctx, f, fmt::format("expected a string, got {}", Describe(f.node)));
  return f.node.Scalar();
}

absl::StatusOr<double> ReadNumber(const ParseContext& ctx, const Field& f) {
  double value = 0;
  if (!f.node.IsScalar() || !IsPlainOrNumericTag(f.node) || !ParseAll(f.node.Scalar(), &value)) {
    return ExpectedScalar(ctx, f, "a number");
  }
  if (!std::isfinite(value)) return ErrorAt(ctx, f, fmt::format("expected a finite number, got {}", Describe(f.node)));
  return value;
}

absl::StatusOr<bool> ReadBool(const ParseContext& ctx, const Field& f) {
  if (f.node.IsScalar() && IsPlainOrNumericTag(f.node)) {
    const std::string& s = f.node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  return ExpectedScalar(ctx, f, "true or false");
}

absl::StatusOr<int64_t> ReadInt(const ParseContext& ctx, const Field& f, int64_t lo, int64_t hi) {
  int64_t value = 0;
  if (!f.node.IsScalar() || !IsPlainOrNumericTag(f.node)) return ExpectedScalar(ctx, f, "an integer");
  if (!ParseAll(f.node.Scalar(), &value)) {
    double d = 0;
    if (ParseAll(f.node.Scalar(), &d) && std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9e18) {
      value = static_cast<int64_t>(d);  // 1e6, 4096.0
    } else if (ParseAll(f.node.Scalar(), &d) && std::fabs(d) < 9e18) {
      return ErrorAt(ctx, f, fmt::format("expected an integer, got {}", Describe(f.node)));
    } else if (ParseAll(f.node.Scalar(), &d)) {
      return ErrorAt(ctx, f, fmt::format("{} is out of range [{}, {}]", f.node.Scalar(), lo, hi));
    } else {
      return ExpectedScalar(ctx, f, "an integer");
    }
  }
  if (value < lo || value > hi) {
    return ErrorAt(ctx, f, fmt::format("{} is out of range [{}, {}]", f.node.Scalar(), lo, hi));
  }
  return value;
}

absl::StatusOr<uint64_t> ReadUint64(const ParseContext& ctx, const Field& f) {
  uint64_t value = 0;
  if (!f.node.IsScalar() || !IsPlainOrNumericTag(f.node)) return ExpectedScalar(ctx, f, "a non-negative integer");
  if (!ParseAll(f.node.Scalar(), &value)) {
    return ErrorAt(ctx, f, fmt::format("expected a non-negative integer below 2^64, got {}", Describe(f.node)));
  }
  return value;
}

std::optional<double> ParseDurationString(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  double whole = 0;
  if (ParseAll(s, &whole)) return (std::isfinite(whole) && whole >= 0) ? std::optional(whole) : std::nullopt;
  double total = 0;
  while (!s.empty()) {
    double value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, std::chars_format::fixed);
    if (ec != std::errc() || !std::isfinite(value) || value < 0) return std::nullopt;
    s.remove_prefix(static_cast<size_t>(end - s.data()));
    double unit = 0;
    if (s.starts_with("s")) unit = 1;
    else if (s.starts_with("m")) unit = 60;
    else if (s.starts_with("h")) unit = 3600;
    else if (s.starts_with("d")) unit = 86400;
    else return std::nullopt;
    s.remove_prefix(1);
    total += value * unit;
  }
  return total;
}

absl::StatusOr<double> ReadDuration(const ParseContext& ctx, const Field& f) {
  if (f.node.IsScalar()) {
    if (std::optional<double> seconds = ParseDurationString(f.node.Scalar())) return *seconds;
  }
  return ErrorAt(ctx, f, fmt::format("expected a duration (seconds, or a string like '90s', '10m', '2h'), got {}",
                                     Describe(f.node)));
}

absl::StatusOr<std::vector<Field>> ReadList(const ParseContext& ctx, const Field& f, bool scalar_as_list) {
  std::vector<Field> items;
  if (f.node.IsScalar() && scalar_as_list) {
    items.push_back(Field{f.node, f.key_mark, IndexPath(f.path, 0), IndexPath(f.display, 0)});
  } else if (f.node.IsSequence()) {
    for (size_t i = 0; i < f.node.size(); ++i) {
      const YAML::Node item = f.node[i];
      items.push_back(Field{item, item.Mark(), IndexPath(f.path, i), IndexPath(f.display, i)});
    }
  } else {
    return ErrorAt(ctx, f, fmt::format("expected a list, got {}", Describe(f.node)));
  }
  if (ctx.sources) {
    for (const Field& item : items) ctx.sources->Record(item.path, PosOfField(item), item.display);
  }
  return items;
}

absl::StatusOr<Fields> ReadMap(const ParseContext& ctx, const Field& f) {
  if (!f.node.IsMap()) return ErrorAt(ctx, f, fmt::format("expected a mapping, got {}", Describe(f.node)));
  return Fields(&ctx, f.path, {Fields::Layer{f.node, f.display}});
}

}  // namespace sparseditto::task_internal
