#include "mutators/plan/plan_composer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <set>
#include <utility>

#include "evaluator/compile/source_lexer.h"
#include "fmt/format.h"
#include "mutators/plan/plan_dispatcher.h"

namespace sparseditto {
namespace {

using Kind = SourceToken::Kind;

using SplitSource = SourcePrologue;  // a variant's source split for composition

constexpr const char* kAbiPrototypes =
    "SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* problem, void** state, char* error,\n"
    "                                           size_t error_capacity);\n"
    "SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* B, void* C, int64_t n, cudaStream_t stream);\n"
    "SPARSEDITTO_EXPORT void sparseditto_release(void* state);\n";

bool IsAbiName(std::string_view name) {
  return name.starts_with("sparseditto_") || name.starts_with("SPARSEDITTO_");
}

bool IsSafeName(std::string_view name, bool allow_empty) {
  if (name.empty()) return allow_empty;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The lines of `source` after line `last` (1-based), verbatim.
std::string LinesAfter(std::string_view source, int last) {
  size_t at = 0;
  for (int line = 0; line < last && at != std::string_view::npos; ++line) {
    at = source.find('\n', at);
    if (at != std::string_view::npos) ++at;
  }
  return at == std::string_view::npos ? std::string() : std::string(source.substr(at));
}

absl::StatusOr<SplitSource> Split(const PlanVariant& variant) {
  auto refuse = [&](std::string why) {
    return absl::InvalidArgumentError(fmt::format("plan variant {}: {}", variant.name, why));
  };
  if (variant.source.find(kPlanManifestMarker) != std::string::npos) {
    return refuse("its source is itself a plan");
  }
  absl::StatusOr<SourcePrologue> prologue = SplitLeadingIncludes(variant.source);
  if (!prologue.ok()) return refuse(std::string(prologue.status().message()));
  const std::vector<SourceToken> tokens = LexSource(variant.source);
  std::set<std::string> abi_seen;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const SourceToken& t = tokens[i];
    if (t.directive < 0) {
      if (t.kind == Kind::kIdentifier && t.text.starts_with("sd_plan_")) {
        return refuse(fmt::format("line {}: '{}' is a name of the plan's own", t.line, t.text));
      }
      if (t.kind == Kind::kIdentifier && IsAbiName(t.text)) abi_seen.insert(t.text);
      continue;
    }
    const bool starts_directive = t.IsPunct("#") && (i == 0 || tokens[i - 1].directive != t.directive);
    if (!starts_directive || i + 2 >= tokens.size() || tokens[i + 2].directive != t.directive) continue;
    const SourceToken& name = tokens[i + 1];
    const SourceToken& arg = tokens[i + 2];
    if (!name.IsIdentifier("define") && !name.IsIdentifier("undef")) continue;
    if (arg.kind == Kind::kIdentifier && (IsAbiName(arg.text) || arg.text.starts_with("sd_plan_"))) {
      return refuse(fmt::format("line {}: #{} {} (a name the plan must own)", t.line, name.text, arg.text));
    }
  }
  for (const char* required : {"sparseditto_prepare", "sparseditto_run", "sparseditto_release"}) {
    if (!abi_seen.contains(required)) return refuse(fmt::format("no {} in its code", required));
  }
  prologue->defines_layouts = abi_seen.contains("sparseditto_layouts");
  prologue->body = ReplaceAll(prologue->body, "sparseditto:tunable", kPlanTunableMarker);
  return *std::move(prologue);
}

absl::Status CheckRanges(const std::vector<PlanVariant>& variants) {
  if (variants.empty()) return absl::InvalidArgumentError("a plan needs at least one variant");
  if (variants.size() > static_cast<size_t>(kMaxPlanVariants)) {
    return absl::InvalidArgumentError(
        fmt::format("a plan of {} variants; at most {}", variants.size(), kMaxPlanVariants));
  }
  std::vector<std::pair<NRange, std::string>> all;
  std::set<std::string> names;
  for (const PlanVariant& v : variants) {
    if (!IsSafeName(v.name, false) || !IsSafeName(v.seed_name, true)) {
      return absl::InvalidArgumentError(
          fmt::format("plan variant '{}' (seed '{}'): names are [A-Za-z0-9._-]+", v.name, v.seed_name));
    }
    if (!names.insert(v.name).second) return absl::InvalidArgumentError(fmt::format("plan variant {} twice", v.name));
    if (v.serves.empty()) return absl::InvalidArgumentError(fmt::format("plan variant {}: serves no n", v.name));
    for (const NRange& r : v.serves) {
      if (r.min_n < 1 || r.max_n < r.min_n) {
        return absl::InvalidArgumentError(
            fmt::format("plan variant {}: range {}-{} is empty or starts below 1", v.name, r.min_n, r.max_n));
      }
      all.emplace_back(r, v.name);
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first.min_n < b.first.min_n; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].first.min_n <= all[i - 1].first.max_n) {
      return absl::InvalidArgumentError(fmt::format("plan variants {} and {} both serve n = {}", all[i - 1].second,
                                                    all[i].second, all[i].first.min_n));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string_view> SplitAt(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t at = text.find(separator, from);
    parts.push_back(text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

absl::StatusOr<std::vector<NRange>> ParseRanges(std::string_view text) {
  std::vector<NRange> ranges;
  for (std::string_view part : SplitAt(text, ',')) {
    const size_t dash = part.find('-');
    NRange r;
    try {
      if (dash == std::string_view::npos) throw std::invalid_argument("no dash");
      r.min_n = std::stoll(std::string(part.substr(0, dash)));
      r.max_n = std::stoll(std::string(part.substr(dash + 1)));
    } catch (const std::exception&) {
      return absl::InvalidArgumentError(fmt::format("plan marker: range '{}' is not MIN-MAX", part));
    }
    ranges.push_back(r);
  }
  return ranges;
}

}  // namespace

absl::StatusOr<SourcePrologue> SplitLeadingIncludes(std::string_view source) {
  const std::vector<SourceToken> tokens = LexSource(source);
  SourcePrologue split;
  bool in_prologue = true;
  int prologue_end = 0;
  std::set<std::string> macros_seen;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const SourceToken& t = tokens[i];
    const bool starts_directive = t.directive >= 0 && t.IsPunct("#") && (i == 0 || tokens[i - 1].directive != t.directive);
    if (t.directive < 0) in_prologue = false;
    if (!starts_directive) continue;
    const SourceToken* name = i + 1 < tokens.size() && tokens[i + 1].directive == t.directive ? &tokens[i + 1] : nullptr;
    const SourceToken* arg = i + 2 < tokens.size() && tokens[i + 2].directive == t.directive ? &tokens[i + 2] : nullptr;
    if (name != nullptr && name->IsIdentifier("include")) {
      if (!in_prologue) {
        return absl::InvalidArgumentError(fmt::format(
            "line {}: an #include after code or another directive (hoisting it would change what it sees)", t.line));
      }
      if (arg == nullptr || (arg->kind != Kind::kHeaderName && arg->kind != Kind::kString)) {
        return absl::InvalidArgumentError(
            fmt::format("line {}: an #include that does not name a header (a macro?)", t.line));
      }
      split.includes.push_back(arg->kind == Kind::kHeaderName ? fmt::format("#include <{}>", arg->text)
                                                              : fmt::format("#include \"{}\"", arg->text));
      for (size_t j = i; j < tokens.size() && tokens[j].directive == t.directive; ++j) {
        prologue_end = std::max(prologue_end, tokens[j].line);
      }
      continue;
    }
    in_prologue = false;
    if (name != nullptr && name->IsIdentifier("define") && arg != nullptr && arg->kind == Kind::kIdentifier &&
        macros_seen.insert(arg->text).second) {
      split.macros.push_back(arg->text);
    }
  }
  split.body = LinesAfter(source, prologue_end);
  return split;
}

std::string FormatRanges(const std::vector<NRange>& ranges) {
  std::string out;
  for (const NRange& r : ranges) out += fmt::format("{}{}-{}", out.empty() ? "" : ",", r.min_n, r.max_n);
  return out;
}

absl::StatusOr<std::string> ComposePlanSource(const std::vector<PlanVariant>& variants) {
  if (absl::Status s = CheckRanges(variants); !s.ok()) return s;
  std::vector<SplitSource> splits;
  for (const PlanVariant& v : variants) {
    absl::StatusOr<SplitSource> split = Split(v);
    if (!split.ok()) return split.status();
    splits.push_back(*std::move(split));
  }
  std::string out = fmt::format(
      "// A dispatch plan composed by SparseDitto (mutators/plan/plan_composer.h): one ABI entry that picks\n"
      "// a variant by n. The variants' tunables are fixed here (marked {}).\n"
      "// {}{}\n",
      kPlanTunableMarker, kPlanManifestMarker, variants.size());
  std::vector<std::string> includes = {"#include \"sparseditto_kernel.h\""};
  for (const SplitSource& s : splits) includes.insert(includes.end(), s.includes.begin(), s.includes.end());
  for (const char* header : {"#include <cstdint>", "#include <cstdio>", "#include <new>"}) includes.push_back(header);
  std::set<std::string> emitted;
  for (const std::string& line : includes) {
    if (emitted.insert(line).second) out += line + "\n";
  }
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::string ns = fmt::format("sd_plan_v{}", i);
    out += fmt::format("\n// {}index={} name={} seed={} n={}\n", kPlanVariantMarker, i, variants[i].name,
                       variants[i].seed_name, FormatRanges(variants[i].serves));
    out += "#undef SPARSEDITTO_EXPORT\n"
           "#define SPARSEDITTO_EXPORT SPARSEDITTO_EXTERN_C __attribute__((visibility(\"hidden\")))\n";
    for (const char* fn : {"prepare", "run", "release", "layouts"}) {
      out += fmt::format("#define sparseditto_{} {}_{}\n", fn, ns, fn);
    }
    std::string body = splits[i].body;
    if (!body.empty() && body.back() != '\n') body += '\n';
    // The header's prototypes, renamed: a body may call its own ABI functions before defining them.
    out += fmt::format("namespace {} {{\n{}{}}}  // namespace {}\n", ns, kAbiPrototypes, body, ns);
    for (const char* fn : {"prepare", "run", "release", "layouts"}) out += fmt::format("#undef sparseditto_{}\n", fn);
    for (const std::string& macro : splits[i].macros) out += fmt::format("#undef {}\n", macro);
  }
  out += "\n#undef SPARSEDITTO_EXPORT\n"
         "#define SPARSEDITTO_EXPORT SPARSEDITTO_EXTERN_C __attribute__((visibility(\"default\")))\n";
  std::vector<bool> defines_layouts;
  for (const SplitSource& s : splits) defines_layouts.push_back(s.defines_layouts);
  out += DispatcherSource(variants, defines_layouts);
  return out;
}

absl::StatusOr<std::vector<ParsedPlanVariant>> ParsePlanSource(std::string_view source) {
  if (source.find(kPlanManifestMarker) == std::string_view::npos) return absl::NotFoundError("not a plan");
  std::vector<ParsedPlanVariant> variants;
  for (size_t at = source.find(kPlanVariantMarker); at != std::string_view::npos;
       at = source.find(kPlanVariantMarker, at + 1)) {
    const size_t eol = source.find('\n', at);
    ParsedPlanVariant v;
    int index = -1;
    for (std::string_view field : SplitAt(source.substr(at + kPlanVariantMarker.size(), eol - at - kPlanVariantMarker.size()), ' ')) {
      const size_t eq = field.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
      if (key == "index") index = std::atoi(std::string(value).c_str());
      if (key == "name") v.name = value;
      if (key == "seed") v.seed_name = value;
      if (key == "n") {
        absl::StatusOr<std::vector<NRange>> ranges = ParseRanges(value);
        if (!ranges.ok()) return ranges.status();
        v.serves = *std::move(ranges);
      }
    }
    const std::string open = fmt::format("namespace sd_plan_v{} {{\n", index);
    const std::string close = fmt::format("}}  // namespace sd_plan_v{}\n", index);
    const size_t begin = source.find(open, at), end = source.find(close, at);
    if (index != static_cast<int>(variants.size()) || begin == std::string_view::npos || end == std::string_view::npos ||
        end < begin) {
      return absl::InvalidArgumentError(fmt::format("plan variant marker {} is damaged", variants.size()));
    }
    std::string_view body = source.substr(begin + open.size(), end - begin - open.size());
    if (body.starts_with(kAbiPrototypes)) body.remove_prefix(std::string_view(kAbiPrototypes).size());
    v.body = ReplaceAll(std::string(body), kPlanTunableMarker, "sparseditto:tunable");
    variants.push_back(std::move(v));
    at = end;
  }
  if (variants.empty()) return absl::InvalidArgumentError("a plan without variants");
  return variants;
}

}  // namespace sparseditto
