#include "task/task_validation.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "matrix/csr_matrix.h"  // kMaxMatrixDim, kMaxMatrixNnz (constants only)
#include "task/task_loader.h"
#include "task/run_paths.h"
#include "task/arch_populations.h"
#include "task/task_names.h"

namespace sparseditto::task_internal {
namespace {

constexpr std::string_view kMissing = "required field missing";
constexpr int kMaxConcurrency = 1024;
constexpr double kMaxTimeoutSeconds = 86400;
constexpr int32_t kMaxRetriesLimit = 100;
constexpr int32_t kMaxMutatorTokens = 10'000'000;
constexpr int32_t kMaxMutatorRetries = 20;

class Checker {
 public:
  Checker(const SourceMap& sources, std::string_view file, bool presence_known)
      : sources_(sources), file_(file), presence_known_(presence_known) {}

  absl::Status Error(std::string_view path, std::string_view reason) const {
    auto [pos, display] = sources_.Find(path);
    return FieldError(file_, pos, display, reason);
  }
  // Whether the field counts as given: recorded by the loader, or non-zero.
  bool IsSet(std::string_view path, bool nonzero) const { return nonzero || sources_.Has(path); }
  bool presence_known() const { return presence_known_; }
  bool Has(std::string_view path) const { return sources_.Has(path); }

 private:
  const SourceMap& sources_;
  std::string_view file_;
  bool presence_known_;
};

bool IsEnvVarName(std::string_view s) {
  if (s.empty() || s.size() > 128 || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// A value that is likely a secret rather than the name of a variable holding one.
bool LooksLikeApiKey(std::string_view s) {
  // Always a key: no variable name has '-' or ' '.
  for (std::string_view prefix : {"sk-", "xai-", "Bearer ", "bearer "}) {
    if (s.starts_with(prefix)) return true;
  }
  // Prefixes of providers' keys that a (lower-case) variable name might share: only when long.
  for (std::string_view prefix : {"sk_", "AIza", "gsk_", "hf_", "ghp_", "github_pat_"}) {
    if (s.starts_with(prefix) && s.size() >= 20) return true;
  }
  if (s.size() >= 40) return true;
  const bool lower = std::any_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  const bool upper = std::any_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  const bool digit = std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  return s.size() >= 20 && lower && upper && digit;
}

// The pattern fields a family uses, and those a generated matrix of the family needs.
struct FamilyFields {
  std::vector<std::string_view> allowed;
  std::vector<std::string_view> required;
};

FamilyFields FieldsOf(v1::PatternFamily family) {
  switch (family) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED: return {{"sparsity", "row_lengths", "skew"}, {"sparsity"}};
    case v1::PATTERN_FAMILY_BLOCK:
      return {{"sparsity", "block_rows", "block_cols"}, {"sparsity", "block_rows", "block_cols"}};
    case v1::PATTERN_FAMILY_N_M: return {{"n", "m"}, {"n", "m"}};
    case v1::PATTERN_FAMILY_ROW_SPARSE:
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: return {{"sparsity"}, {"sparsity"}};
    case v1::PATTERN_FAMILY_BANDED: return {{"half_bandwidth"}, {"half_bandwidth"}};
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: return {{"num_blocks"}, {"num_blocks"}};
    default: return {};
  }
}

absl::Status CheckPattern(const Checker& c, const v1::Task& t) {
  const v1::PatternSpec& p = t.pattern();
  const bool generated = t.matrix().has_generated();
  const int64_t rows = t.matrix().generated().rows(), cols = t.matrix().generated().cols();
  if (p.family() == v1::PATTERN_FAMILY_UNSPECIFIED) {
    return c.Error("pattern.family", fmt::format("{} (one of {})", kMissing, fmt::join(PatternFamilyNames(), ", ")));
  }
  const std::string family(PatternFamilyName(p.family()));
  if (p.family() == v1::PATTERN_FAMILY_FILE && !t.matrix().has_file()) {
    return c.Error("pattern.family", "family 'file' needs a matrix file (matrix: {file: {path: ...}})");
  }
  struct Param {
    std::string_view key;
    bool set;
  };
  const Param params[] = {
      {"sparsity", c.IsSet("pattern.sparsity", p.sparsity() != 0)},
      {"row_lengths", c.IsSet("pattern.row_lengths", p.row_lengths() != v1::ROW_LENGTHS_UNIFORM)},
      {"skew", c.IsSet("pattern.skew", p.skew() != 0)},
      {"block_rows", c.IsSet("pattern.block_rows", p.block_rows() != 0)},
      {"block_cols", c.IsSet("pattern.block_cols", p.block_cols() != 0)},
      {"n", c.IsSet("pattern.n", p.n() != 0)},
      {"m", c.IsSet("pattern.m", p.m() != 0)},
      {"half_bandwidth", c.IsSet("pattern.half_bandwidth", p.half_bandwidth() != 0)},
      {"num_blocks", c.IsSet("pattern.num_blocks", p.num_blocks() != 0)},
  };
  const FamilyFields fields = FieldsOf(p.family());
  auto set = [&](std::string_view key) {
    return std::find_if(std::begin(params), std::end(params), [&](const Param& q) { return q.key == key; })->set;
  };
  for (const Param& q : params) {
    if (!q.set || std::find(fields.allowed.begin(), fields.allowed.end(), q.key) != fields.allowed.end()) continue;
    std::string why = fields.allowed.empty() ? fmt::format("family '{}' has no parameters", family)
                                             : fmt::format("its fields are {}", fmt::join(fields.allowed, ", "));
    if (p.family() == v1::PATTERN_FAMILY_FILE) why += "; to give one, name the family the file has";
    return c.Error(fmt::format("pattern.{}", q.key), fmt::format("not used by family '{}' ({})", family, why));
  }
  if (set("skew") && p.row_lengths() != v1::ROW_LENGTHS_SKEWED) {
    return c.Error("pattern.skew", "only used with row_lengths: skewed");
  }
  for (auto [a, b] : {std::pair{"block_rows", "block_cols"}, std::pair{"n", "m"}}) {
    if (set(a) != set(b)) {
      return c.Error(fmt::format("pattern.{}", set(a) ? b : a), fmt::format("{} (give {} and {} together)", kMissing, a, b));
    }
  }
  if (generated) {
    for (std::string_view key : fields.required) {
      const bool zero_is_valid = key == "sparsity" || key == "half_bandwidth";
      if (!set(key) && (!zero_is_valid || c.presence_known())) {
        return c.Error(fmt::format("pattern.{}", key), fmt::format("{} (family '{}' needs it)", kMissing, family));
      }
    }
  }
  if (set("sparsity") && !(p.sparsity() >= 0 && p.sparsity() < 1)) {
    return c.Error("pattern.sparsity", fmt::format("must be in [0, 1) (the fraction of zeros), got {}", p.sparsity()));
  }
  if (set("skew") && !(p.skew() > 0 && p.skew() <= 10)) {
    return c.Error("pattern.skew", fmt::format("must be in (0, 10], got {}", p.skew()));
  }
  struct Bound {
    std::string_view key;
    int64_t value, lo, hi;
    std::string_view hi_name;
  };
  const Bound bounds[] = {
      {"block_rows", p.block_rows(), 1, generated ? rows : kMaxMatrixDim, generated ? "the matrix's rows" : ""},
      {"block_cols", p.block_cols(), 1, generated ? cols : kMaxMatrixDim, generated ? "the matrix's cols" : ""},
      {"m", p.m(), 2, kMaxNmGroup, ""},
      {"n", p.n(), 1, std::max(1, p.m() - 1), "m - 1"},
      {"half_bandwidth", p.half_bandwidth(), 0, kMaxMatrixDim, ""},
      {"num_blocks", p.num_blocks(), 1, generated ? std::min(rows, cols) : kMaxMatrixDim,
       generated ? "min(rows, cols)" : ""},
  };
  for (const Bound& b : bounds) {
    if (!set(b.key) || (b.value >= b.lo && b.value <= b.hi)) continue;
    const std::string hi = b.hi_name.empty() ? fmt::format("{}", b.hi) : fmt::format("{} = {}", b.hi_name, b.hi);
    return c.Error(fmt::format("pattern.{}", b.key), fmt::format("must be in [{}, {}], got {}", b.lo, hi, b.value));
  }
  return absl::OkStatus();
}

absl::Status CheckMatrix(const Checker& c, const v1::Task& t) {
  const v1::MatrixSource& m = t.matrix();
  if (m.has_generated()) {
    for (std::string_view key : {"rows", "cols"}) {
      const std::string path = fmt::format("matrix.generated.{}", key);
      const int64_t v = key == "rows" ? m.generated().rows() : m.generated().cols();
      if (c.presence_known() && !c.Has(path)) return c.Error(path, kMissing);
      if (v < 1 || v > kMaxMatrixDim) return c.Error(path, fmt::format("must be in [1, {}], got {}", kMaxMatrixDim, v));
    }
    return absl::OkStatus();
  }
  if (m.has_file()) {
    if (m.file().path().empty()) return c.Error("matrix.file.path", kMissing);
    std::string ext = std::filesystem::path(m.file().path()).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (ext != ".smtx" && ext != ".mtx" && ext != ".npy") {
      return c.Error("matrix.file.path", fmt::format("unsupported matrix file type '{}' (expected .smtx, .mtx or .npy)",
                                                     ext.empty() ? "(none)" : ext));
    }
    return absl::OkStatus();
  }
  return c.Error("matrix", c.Has("matrix") ? "give generated: {rows, cols} or file: {path}"
                                           : fmt::format("{} (generated: {{rows, cols}} or file: {{path}})", kMissing));
}

// Generated matrices must fit the kernel ABI's int32 offsets.
absl::Status CheckNnz(const Checker& c, const v1::Task& t) {
  if (!t.matrix().has_generated()) return absl::OkStatus();
  const v1::PatternSpec& p = t.pattern();
  const double rows = static_cast<double>(t.matrix().generated().rows());
  const double cols = static_cast<double>(t.matrix().generated().cols());
  double density = 1.0;
  switch (p.family()) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED:
    case v1::PATTERN_FAMILY_BLOCK:
    case v1::PATTERN_FAMILY_ROW_SPARSE:
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: density = 1.0 - p.sparsity(); break;
    case v1::PATTERN_FAMILY_N_M: density = static_cast<double>(p.n()) / p.m(); break;
    case v1::PATTERN_FAMILY_BANDED: density = std::min(1.0, (2.0 * p.half_bandwidth() + 1) / cols); break;
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: density = 1.0 / p.num_blocks(); break;
    default: break;
  }
  const double nnz = rows * cols * density;
  if (nnz > static_cast<double>(kMaxMatrixNnz)) {
    return c.Error("matrix.generated", fmt::format("about {:.3g} nonzeros, more than the kernel ABI's limit of {}",
                                                   nnz, kMaxMatrixNnz));
  }
  return absl::OkStatus();
}

absl::Status CheckLists(const Checker& c, const v1::Task& t) {
  if (t.n().empty()) return c.Error("n", c.Has("n") ? "needs at least one value" : kMissing);
  for (int i = 0; i < t.n_size(); ++i) {
    const std::string path = fmt::format("n[{}]", i);
    if (t.n(i) < 1 || t.n(i) > kMaxN) return c.Error(path, fmt::format("must be in [1, {}], got {}", kMaxN, t.n(i)));
    for (int j = 0; j < i; ++j) {
      if (t.n(j) == t.n(i)) return c.Error(path, fmt::format("duplicate value {} (also n[{}])", t.n(i), j));
    }
  }
  if (t.arch().empty()) return c.Error("arch", "needs at least one value");
  for (int i = 0; i < t.arch_size(); ++i) {
    const std::string path = fmt::format("arch[{}]", i);
    const std::string& a = t.arch(i);
    if (std::find(std::begin(kKnownArchs), std::end(kKnownArchs), a) == std::end(kKnownArchs)) {
      return c.Error(path, fmt::format("unknown arch '{}'{}", a, Suggestion(a, kKnownArchs)));
    }
    for (int j = 0; j < i; ++j) {
      if (t.arch(j) == a) return c.Error(path, fmt::format("duplicate value '{}' (also arch[{}])", a, j));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBudget(const Checker& c, const v1::Budget& b) {
  if (b.max_evaluations() < 1) {
    return c.Error("budget.max_evaluations", fmt::format("must be >= 1, got {}", b.max_evaluations()));
  }
  const struct {
    std::string_view key;
    double value;
  } non_negative[] = {{"max_wall_seconds", b.max_wall_seconds()},
                      {"max_tokens", static_cast<double>(b.max_tokens())},
                      {"max_money_usd", b.max_money_usd()},
                      {"stagnation_evaluations", static_cast<double>(b.stagnation_evaluations())},
                      {"target_fitness", b.target_fitness()}};
  for (const auto& f : non_negative) {
    if (!(f.value >= 0) || !std::isfinite(f.value)) {
      return c.Error(fmt::format("budget.{}", f.key), fmt::format("must be >= 0 (0: no limit), got {}", f.value));
    }
  }
  if (b.max_retries() < 0 || b.max_retries() > kMaxRetriesLimit) {
    return c.Error("budget.max_retries", fmt::format("must be in [0, {}], got {}", kMaxRetriesLimit, b.max_retries()));
  }
  return absl::OkStatus();
}

absl::Status CheckLlmFields(const Checker& c, const v1::MutatorSpec& m, const std::string& at, std::string_view kind) {
  if (m.model().empty()) return c.Error(at + ".model", fmt::format("{} (kind '{}' needs it)", kMissing, kind));
  const std::string& e = m.endpoint();
  if (!e.empty() && !e.starts_with("http://") && !e.starts_with("https://")) {
    return c.Error(at + ".endpoint", fmt::format("must be an http:// or https:// URL, got '{}'", e));
  }
  const std::string& key_env = m.api_key_env();
  if (!key_env.empty() && LooksLikeApiKey(key_env)) {
    return c.Error(at + ".api_key_env",
                   "looks like an API key, not the name of an environment variable (value not shown): put the key "
                   "in an environment variable and give its name here, e.g. OPENAI_API_KEY");
  }
  if (!key_env.empty() && !IsEnvVarName(key_env)) {
    return c.Error(at + ".api_key_env", "must be the NAME of an environment variable ([A-Za-z_][A-Za-z0-9_]*)");
  }
  if (!(m.temperature() >= 0 && m.temperature() <= 2)) {
    return c.Error(at + ".temperature", fmt::format("must be in [0, 2], got {}", m.temperature()));
  }
  if (c.IsSet(at + ".max_tokens", m.max_tokens() != 0) && (m.max_tokens() < 1 || m.max_tokens() > kMaxMutatorTokens)) {
    return c.Error(at + ".max_tokens", fmt::format("must be in [1, {}], got {}", kMaxMutatorTokens, m.max_tokens()));
  }
  if (m.has_max_retries() && (m.max_retries() < 0 || m.max_retries() > kMaxMutatorRetries)) {
    return c.Error(at + ".max_retries", fmt::format("must be in [0, {}], got {}", kMaxMutatorRetries, m.max_retries()));
  }
  for (auto [key, value] : {std::pair{"usd_per_million_input_tokens", m.usd_per_million_input_tokens()},
                            std::pair{"usd_per_million_output_tokens", m.usd_per_million_output_tokens()}}) {
    if (!(value >= 0)) return c.Error(fmt::format("{}.{}", at, key), fmt::format("must be >= 0, got {}", value));
  }
  return absl::OkStatus();
}

absl::Status CheckMutator(const Checker& c, const v1::MutatorSpec& m, const std::string& at) {
  if (m.kind() == v1::MUTATOR_KIND_UNSPECIFIED) {
    return c.Error(at + ".kind", fmt::format("{} (one of {})", kMissing, fmt::join(MutatorKindNames(), ", ")));
  }
  const std::string_view kind = MutatorKindName(m.kind());
  // A mutator's name names bench-mutators' folder of its run (<out>/<name>/).
  if (std::optional<std::string> problem = RunNameProblem(m.name())) return c.Error(at + ".name", *problem);
  if (!(m.weight() > 0) || !std::isfinite(m.weight())) {
    return c.Error(at + ".weight", fmt::format("must be > 0, got {}", m.weight()));
  }
  if (m.concurrency() < 1 || m.concurrency() > kMaxConcurrency) {
    return c.Error(at + ".concurrency", fmt::format("must be in [1, {}], got {}", kMaxConcurrency, m.concurrency()));
  }
  if (!(m.timeout_seconds() > 0 && m.timeout_seconds() <= kMaxTimeoutSeconds)) {
    return c.Error(at + ".timeout_seconds", fmt::format("must be in (0, {}], got {}", kMaxTimeoutSeconds,
                                                        m.timeout_seconds()));
  }
  const bool llm = m.kind() == v1::MUTATOR_KIND_OPENAI_COMPATIBLE || m.kind() == v1::MUTATOR_KIND_ANTHROPIC;
  const bool builtin = m.kind() == v1::MUTATOR_KIND_BUILTIN;
  const struct {
    std::string_view key;
    bool set;
    bool allowed;
  } fields[] = {
      {"model", c.IsSet(at + ".model", !m.model().empty()), !builtin},
      {"endpoint", c.IsSet(at + ".endpoint", !m.endpoint().empty()), llm},
      {"api_key_env", c.IsSet(at + ".api_key_env", !m.api_key_env().empty()), llm},
      {"temperature", c.IsSet(at + ".temperature", m.temperature() != 0), !builtin},
      {"max_tokens", c.IsSet(at + ".max_tokens", m.max_tokens() != 0), !builtin},
      {"usd_per_million_input_tokens", c.IsSet(at + ".usd_per_million_input_tokens",
                                               m.usd_per_million_input_tokens() != 0), !builtin},
      {"usd_per_million_output_tokens", c.IsSet(at + ".usd_per_million_output_tokens",
                                                m.usd_per_million_output_tokens() != 0), !builtin},
      {"command", c.IsSet(at + ".command", !m.command().empty()), m.kind() == v1::MUTATOR_KIND_COMMAND},
      {"max_retries", m.has_max_retries(), llm},
      {"privacy", c.IsSet(at + ".privacy", m.privacy()), !builtin},
  };
  for (const auto& f : fields) {
    if (f.set && !f.allowed) return c.Error(fmt::format("{}.{}", at, f.key), fmt::format("not used by kind '{}'", kind));
  }
  if (llm) return CheckLlmFields(c, m, at, kind);
  if (m.kind() == v1::MUTATOR_KIND_COMMAND) {
    if (m.command().empty()) return c.Error(at + ".command", fmt::format("{} (the program and its arguments)", kMissing));
    for (int i = 0; i < m.command_size(); ++i) {
      if (m.command(i).empty()) return c.Error(fmt::format("{}.command[{}]", at, i), "must not be empty");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckMutators(const Checker& c, const google::protobuf::RepeatedPtrField<v1::MutatorSpec>& mutators) {
  if (mutators.empty()) return c.Error("mutators", "needs at least one mutator");
  for (int i = 0; i < mutators.size(); ++i) {
    const std::string at = fmt::format("mutators[{}]", i);
    SD_RETURN_IF_ERROR(CheckMutator(c, mutators[i], at));
    for (int j = 0; j < i; ++j) {
      if (mutators[j].name() == mutators[i].name()) {
        return c.Error(at + (c.Has(at + ".name") ? ".name" : ""),
                       fmt::format("duplicate mutator name '{}' (also mutators[{}]); give each a distinct `name:`",
                                   mutators[i].name(), j));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateTaskFields(const v1::Task& t, const SourceMap& sources, std::string_view file,
                                bool presence_known) {
  const Checker c(sources, file, presence_known);
  if (t.name().empty()) return c.Error("name", kMissing);
  if (std::optional<std::string> problem = TaskNameProblem(t.name())) {
    return c.Error("name", fmt::format("{} (a task's name names its folder, runs/<run>/<name>)", *problem));
  }
  // '@' only in a population's own name: "<name>@<arch>" of a task whose one arch is <arch>.
  if (const size_t at = t.name().find(kPopulationSeparator); at != std::string::npos &&
      (t.arch_size() != 1 || t.name() != PopulationName(t.name().substr(0, at), t.arch(0)))) {
    return c.Error("name", fmt::format("'{}' holds '{}', kept for the per-arch populations a task with several "
                                       "archs is searched as (<name>{}<arch>, of that one arch); pick another name",
                                       t.name(), kPopulationSeparator, kPopulationSeparator));
  }
  if (t.op() == v1::OP_UNSPECIFIED) return c.Error("op", fmt::format("{} (spmm)", kMissing));
  if (t.dtype() == v1::DTYPE_UNSPECIFIED) return c.Error("dtype", fmt::format("{} (fp32, fp16 or bf16)", kMissing));
  // A message from gRPC or JSON may carry a number the enum does not name.
  if (!v1::Layout_IsValid(t.layout())) {
    return c.Error("layout", fmt::format("unknown layout {} (kn or nk)", static_cast<int>(t.layout())));
  }
  SD_RETURN_IF_ERROR(CheckMatrix(c, t));
  SD_RETURN_IF_ERROR(CheckPattern(c, t));
  SD_RETURN_IF_ERROR(CheckNnz(c, t));
  SD_RETURN_IF_ERROR(CheckLists(c, t));
  SD_RETURN_IF_ERROR(CheckBudget(c, t.budget()));
  return CheckMutators(c, t.mutators());
}

absl::Status ValidateMutatorFields(const google::protobuf::RepeatedPtrField<v1::MutatorSpec>& mutators,
                                   const SourceMap& sources, std::string_view file) {
  return CheckMutators(Checker(sources, file, /*presence_known=*/true), mutators);
}

}  // namespace sparseditto::task_internal
