#include "kernel_abi/tunable_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "fmt/format.h"

namespace sparseditto {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The fact's value (0: unknown), or nullopt when `name` is not a fact.
std::optional<int64_t> Fact(std::string_view name, const DeviceFacts& d) {
  name = Trim(name);
  if (name == "sm_count") return d.sm_count;
  if (name == "smem_per_block") return d.smem_per_block;
  if (name == "smem_per_sm") return d.smem_per_sm;
  if (name == "arch") return d.arch;
  return std::nullopt;
}

bool IsFactExpression(std::string_view entry) {
  entry = Trim(entry);
  if (entry.find_first_of("*/") != std::string_view::npos) return true;
  return Fact(entry, DeviceFacts{}).has_value();
}

// A term is an integer or a fact. Result: the value (0 when a fact is unknown), or an error.
absl::StatusOr<int64_t> EvalTerm(std::string_view term, const DeviceFacts& d, bool* used_fact) {
  if (std::optional<int64_t> v = ParseInt(term)) return *v;
  if (std::optional<int64_t> f = Fact(term, d)) {
    *used_fact = true;
    return *f;
  }
  return absl::InvalidArgumentError(fmt::format("'{}' is neither an integer nor a device fact "
                                                "(sm_count, smem_per_block, smem_per_sm, arch)", Trim(term)));
}

// FACT, INT, A*B or A/B with A, B terms (one level). 0 when a fact it uses is unknown.
absl::StatusOr<int64_t> EvalExpression(std::string_view e, const DeviceFacts& d, bool* used_fact) {
  const size_t op = e.find_first_of("*/");
  if (op == std::string_view::npos) return EvalTerm(e, d, used_fact);
  if (e.find_first_of("*/", op + 1) != std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format("expression '{}' has more than one operator", Trim(e)));
  }
  absl::StatusOr<int64_t> a = EvalTerm(e.substr(0, op), d, used_fact);
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> b = EvalTerm(e.substr(op + 1), d, used_fact);
  if (!b.ok()) return b.status();
  if (*a == 0 || *b == 0) return 0;  // an unknown fact (or a zero factor): dropped by the caller
  if (e[op] == '/') return *a / *b;
  return *a * *b;
}

absl::Status Malformed(std::string_view list) {
  return absl::InvalidArgumentError(fmt::format("tunable value list [{}] has an empty or malformed entry", list));
}

// Splits at commas outside parentheses and braces.
absl::StatusOr<std::vector<std::string_view>> SplitTopLevel(std::string_view list) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '(' || c == '{') ++depth;
    if (c == ')' || c == '}') --depth;
    if (depth < 0) return Malformed(list);
    if (c == ',' && depth == 0) {
      std::string_view item = Trim(list.substr(start, i - start));
      if (item.empty()) return Malformed(list);
      items.push_back(item);
      start = i + 1;
    }
  }
  if (depth != 0) return Malformed(list);
  return items;
}

// A tuple "(a, b)" / "{a,b}" as "(a,b)" / "{a,b}"; InvalidArgument for empty or nested members.
absl::StatusOr<std::string> CanonicalTuple(std::string_view t, std::string_view list) {
  const char close = t.front() == '(' ? ')' : '}';
  if (t.back() != close) return Malformed(list);
  std::string out(1, t.front());
  std::string_view inner = t.substr(1, t.size() - 2);
  size_t start = 0;
  for (size_t i = 0; i <= inner.size(); ++i) {
    if (i < inner.size() && inner[i] != ',') continue;
    std::string_view member = Trim(inner.substr(start, i - start));
    if (member.empty() || member.find_first_of(" \t()[]{}") != std::string_view::npos) return Malformed(list);
    if (start > 0) out += ',';
    out.append(member);
    start = i + 1;
  }
  out += close;
  return out;
}

struct Builder {
  ResolvedValues out;
  void Add(std::string v) {
    if (std::find(out.values.begin(), out.values.end(), v) == out.values.end()) out.values.push_back(std::move(v));
  }
  void AddNumber(int64_t v) {
    if (v >= 1) Add(std::to_string(v));
  }
};

absl::StatusOr<std::string_view> Bracketed(std::string_view s, std::string_view spec) {
  s = Trim(s);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') {
    return absl::InvalidArgumentError(fmt::format("malformed tunable declaration: '{}' needs a [...] list", spec));
  }
  return s.substr(1, s.size() - 2);
}

absl::Status ResolveList(std::string_view list, const DeviceFacts& d, Builder* b) {
  absl::StatusOr<std::vector<std::string_view>> items = SplitTopLevel(list);
  if (!items.ok()) return items.status();
  for (std::string_view item : *items) {
    if (item.front() == '(' || item.front() == '{') {
      absl::StatusOr<std::string> tuple = CanonicalTuple(item, list);
      if (!tuple.ok()) return tuple.status();
      b->Add(*std::move(tuple));
    } else if (IsFactExpression(item)) {
      absl::StatusOr<int64_t> v = EvalExpression(item, d, &b->out.device_relative);
      if (!v.ok()) return v.status();
      b->AddNumber(*v);
    } else {
      if (item.find_first_of(" \t[]()}{") != std::string_view::npos) return Malformed(list);
      b->Add(std::string(item));
    }
  }
  return absl::OkStatus();
}

absl::Status ResolveRange(std::string_view inner, std::string_view spec, const DeviceFacts& d, Builder* b) {
  absl::StatusOr<std::vector<std::string_view>> items = SplitTopLevel(inner);
  if (!items.ok()) return items.status();
  if (items->size() != 2 && items->size() != 3) {
    return absl::InvalidArgumentError(fmt::format("range in '{}' needs [LO, HI] or [LO, HI, +STEP]", spec));
  }
  absl::StatusOr<int64_t> lo = EvalExpression((*items)[0], d, &b->out.device_relative);
  if (!lo.ok()) return lo.status();
  absl::StatusOr<int64_t> hi = EvalExpression((*items)[1], d, &b->out.device_relative);
  if (!hi.ok()) return hi.status();
  std::optional<int64_t> step;
  if (items->size() == 3) {
    std::string_view s = (*items)[2];
    if (!ConsumePrefix(&s, "+") || !(step = ParseInt(s)) || *step < 1) {
      return absl::InvalidArgumentError(fmt::format("range step in '{}' must be +N with N >= 1", spec));
    }
  }
  if (*lo < 1 || *hi < 1) return absl::OkStatus();  // an unknown fact: nothing but the current value
  for (int64_t v = *lo; v <= *hi; v = step ? v + *step : v * 2) {
    if (b->out.values.size() > kMaxTunableValues) break;
    b->AddNumber(v);
  }
  return absl::OkStatus();
}

}  // namespace

std::string DeviceFacts::ToString() const {
  return fmt::format("sm_count={} smem_per_block={} smem_per_sm={} arch={}", sm_count, smem_per_block, smem_per_sm,
                     arch);
}

int64_t ArchNumber(std::string_view arch) {
  const size_t underscore = arch.find('_');
  if (underscore == std::string_view::npos) return 0;
  std::string_view digits = arch.substr(underscore + 1);
  size_t n = 0;
  while (n < digits.size() && std::isdigit(static_cast<unsigned char>(digits[n]))) ++n;
  return ParseInt(digits.substr(0, n)).value_or(0);
}

std::string CanonicalTunableValue(std::string_view value) {
  if (value.empty() || (value.front() != '(' && value.front() != '{')) return std::string(value);
  std::string out;
  for (char c : value) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

absl::StatusOr<ResolvedValues> ResolveTunableValues(std::string_view spec, std::string_view current,
                                                    const DeviceFacts& device) {
  spec = Trim(spec);
  Builder b;
  std::string_view rest = spec;
  if (ConsumePrefix(&rest, "values")) {
    rest = Trim(rest);
    if (!ConsumePrefix(&rest, "=")) return absl::InvalidArgumentError("malformed tunable declaration: values=...");
    rest = Trim(rest);
    if (ConsumePrefix(&rest, "device:")) {
      const size_t star = rest.find('*');
      if (star == std::string_view::npos) {
        return absl::InvalidArgumentError(fmt::format("malformed tunable declaration: '{}' needs FACT*[...]", spec));
      }
      std::optional<int64_t> fact = Fact(rest.substr(0, star), device);
      if (!fact) {
        return absl::InvalidArgumentError(fmt::format("'{}' is not a device fact", Trim(rest.substr(0, star))));
      }
      b.out.device_relative = true;
      absl::StatusOr<std::string_view> list = Bracketed(rest.substr(star + 1), spec);
      if (!list.ok()) return list.status();
      absl::StatusOr<std::vector<std::string_view>> items = SplitTopLevel(*list);
      if (!items.ok()) return items.status();
      for (std::string_view item : *items) {
        std::optional<int64_t> m = ParseInt(item);
        if (!m) return absl::InvalidArgumentError(fmt::format("device:{}*[...] needs integers, got '{}'", Trim(rest.substr(0, star)), item));
        b.AddNumber(*fact * *m);
      }
    } else {
      absl::StatusOr<std::string_view> list = Bracketed(rest, spec);
      if (!list.ok()) return list.status();
      if (absl::Status s = ResolveList(*list, device, &b); !s.ok()) return s;
    }
  } else if (ConsumePrefix(&rest, "range")) {
    rest = Trim(rest);
    if (!ConsumePrefix(&rest, "=")) return absl::InvalidArgumentError("malformed tunable declaration: range=...");
    absl::StatusOr<std::string_view> inner = Bracketed(rest, spec);
    if (!inner.ok()) return inner.status();
    b.out.device_relative = true;  // its values are computed; the current value is always allowed
    if (absl::Status s = ResolveRange(*inner, spec, device, &b); !s.ok()) return s;
  } else {
    return absl::InvalidArgumentError(fmt::format("malformed tunable declaration: '{}' is not values=[...] or range=[...]", spec));
  }
  if (b.out.values.size() > kMaxTunableValues) {
    return absl::InvalidArgumentError(fmt::format("'{}' allows more than {} values", spec, kMaxTunableValues));
  }
  const std::string cur = CanonicalTunableValue(current);
  std::vector<std::string>& v = b.out.values;
  if (std::find(v.begin(), v.end(), cur) == v.end()) {
    if (!b.out.device_relative) {
      return absl::InvalidArgumentError(fmt::format("value {} not in [{}]", cur, fmt::join(v, ", ")));
    }
    const std::optional<int64_t> c = ParseInt(cur);
    const bool numeric = c && std::all_of(v.begin(), v.end(), [](const std::string& s) { return ParseInt(s).has_value(); });
    auto at = v.end();
    if (numeric) at = std::find_if(v.begin(), v.end(), [&](const std::string& s) { return *ParseInt(s) > *c; });
    v.insert(at, cur);
  }
  return std::move(b.out);
}

}  // namespace sparseditto
