#include "task/task_parse.h"

#include <cstdint>
#include <limits>
#include <system_error>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "task/task_loader.h"
#include "task/task_names.h"

namespace sparseditto::task_internal {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTaskKeys[] = {"name", "op",     "dtype",  "pattern",  "matrix",
                                          "n",    "arch",   "budget", "mutators", "seed", "layout"};
constexpr std::string_view kPatternKeys[] = {"family",     "sparsity", "row_lengths", "skew",           "block_rows",
                                             "block_cols", "n",        "m",           "half_bandwidth", "num_blocks"};
constexpr std::string_view kMatrixKeys[] = {"generated", "file", "seed"};
constexpr std::string_view kGeneratedKeys[] = {"rows", "cols"};
constexpr std::string_view kFileKeys[] = {"path"};
constexpr std::string_view kBudgetKeys[] = {"max_evaluations", "max_wall_seconds", "max_tokens",
                                            "max_money_usd",   "max_retries",      "stagnation_evaluations",
                                            "target_fitness"};
constexpr std::string_view kMutatorKeys[] = {
    "name",        "kind",        "weight",      "model",
    "endpoint",    "api_key_env", "temperature", "max_tokens",
    "concurrency", "usd_per_million_input_tokens", "usd_per_million_output_tokens", "timeout_seconds",
    "command",     "max_retries", "privacy"};
constexpr std::string_view kDtypeNames[] = {"fp32", "fp16", "bf16"};

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

template <typename E>
absl::StatusOr<E> ReadEnum(const ParseContext& ctx, const Field& f, std::string_view what,
                           std::optional<E> (*parse)(std::string_view), std::span<const std::string_view> names) {
  SD_ASSIGN_OR_RETURN(std::string s, ReadString(ctx, f));
  if (std::optional<E> value = parse(s)) return *value;
  return ErrorAt(ctx, f, fmt::format("unknown {} '{}'{}", what, s, Suggestion(s, names)));
}

absl::StatusOr<int32_t> ReadInt32(const ParseContext& ctx, const Field& f) {
  SD_ASSIGN_OR_RETURN(int64_t v, ReadInt(ctx, f, kInt32Min, kInt32Max));
  return static_cast<int32_t>(v);
}

// The family a pattern mapping names, canonical where known ("nm" is "n_m").
std::string PatternVariant(const YAML::Node& map) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar() != "family" || !it->second.IsScalar()) continue;
    if (auto family = ParsePatternFamilyName(it->second.Scalar())) return std::string(PatternFamilyName(*family));
    return it->second.Scalar();
  }
  return "";
}

// The source a matrix mapping names: "generated", "file" or "".
std::string MatrixVariant(const YAML::Node& map) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && (it->first.Scalar() == "generated" || it->first.Scalar() == "file")) {
      return it->first.Scalar();
    }
  }
  return "";
}

absl::Status ParseMatrixFile(const ParseContext& ctx, const Fields& file, const fs::path& base_dir,
                             v1::MatrixFile* out) {
  SD_RETURN_IF_ERROR(file.CheckKeys(kFileKeys));
  std::optional<Field> f = file.Get("path");
  if (!f) return absl::OkStatus();  // validation reports the missing path
  SD_ASSIGN_OR_RETURN(std::string path, ReadString(ctx, *f));
  if (path.empty()) return absl::OkStatus();
  fs::path p(path);
  if (p.is_relative()) p = base_dir / p;
  std::error_code ec;
  fs::path resolved = fs::absolute(p, ec);
  if (ec) resolved = p;
  resolved = resolved.lexically_normal();
  out->set_path(resolved.string());
  const fs::file_status status = fs::status(resolved, ec);
  if (!fs::exists(status)) {
    return absl::NotFoundError(ErrorAt(ctx, *f, fmt::format("no such file: {}", resolved.string())).message());
  }
  if (!fs::is_regular_file(status)) {
    return ErrorAt(ctx, *f, fmt::format("not a regular file: {}", resolved.string()));
  }
  return absl::OkStatus();
}

absl::Status ParseMatrix(const ParseContext& ctx, const Fields& matrix, const fs::path& base_dir,
                         v1::MatrixSource* out) {
  SD_RETURN_IF_ERROR(matrix.CheckKeys(kMatrixKeys));
  SD_ASSIGN_OR_RETURN(Fields generated, matrix.Sub("generated"));
  SD_ASSIGN_OR_RETURN(Fields file, matrix.Sub("file"));
  if (!generated.empty() && !file.empty()) {
    return ErrorAt(ctx, *matrix.Get("file"), "give either generated or file, not both");
  }
  if (!generated.empty()) {
    SD_RETURN_IF_ERROR(generated.CheckKeys(kGeneratedKeys));
    v1::GeneratedMatrix* g = out->mutable_generated();
    if (auto f = generated.Get("rows")) {
      SD_ASSIGN_OR_RETURN(int64_t rows, ReadInt(ctx, *f, kInt64Min, kInt64Max));
      g->set_rows(rows);
    }
    if (auto f = generated.Get("cols")) {
      SD_ASSIGN_OR_RETURN(int64_t cols, ReadInt(ctx, *f, kInt64Min, kInt64Max));
      g->set_cols(cols);
    }
  }
  if (!file.empty()) SD_RETURN_IF_ERROR(ParseMatrixFile(ctx, file, base_dir, out->mutable_file()));
  if (auto f = matrix.Get("seed")) {
    SD_ASSIGN_OR_RETURN(uint64_t seed, ReadUint64(ctx, *f));
    out->set_seed(seed);
  }
  return absl::OkStatus();
}

absl::Status ParsePattern(const ParseContext& ctx, const Fields& pattern, v1::PatternSpec* out) {
  SD_RETURN_IF_ERROR(pattern.CheckKeys(kPatternKeys));
  if (auto f = pattern.Get("family")) {
    SD_ASSIGN_OR_RETURN(v1::PatternFamily family,
                        ReadEnum(ctx, *f, "pattern family", &ParsePatternFamilyName, PatternFamilyNames()));
    out->set_family(family);
  }
  if (auto f = pattern.Get("sparsity")) {
    SD_ASSIGN_OR_RETURN(double sparsity, ReadNumber(ctx, *f));
    out->set_sparsity(sparsity);
  }
  if (auto f = pattern.Get("row_lengths")) {
    SD_ASSIGN_OR_RETURN(v1::RowLengths row_lengths,
                        ReadEnum(ctx, *f, "row_lengths", &ParseRowLengthsName, RowLengthsNames()));
    out->set_row_lengths(row_lengths);
  }
  if (auto f = pattern.Get("skew")) {
    SD_ASSIGN_OR_RETURN(double skew, ReadNumber(ctx, *f));
    out->set_skew(skew);
  } else if (out->row_lengths() == v1::ROW_LENGTHS_SKEWED) {
    out->set_skew(kDefaultSkew);
  }
  struct IntField {
    std::string_view key;
    void (v1::PatternSpec::*set)(int32_t);
  };
  static constexpr IntField kIntFields[] = {
      {"block_rows", &v1::PatternSpec::set_block_rows}, {"block_cols", &v1::PatternSpec::set_block_cols},
      {"n", &v1::PatternSpec::set_n},
      {"m", &v1::PatternSpec::set_m},
      {"half_bandwidth", &v1::PatternSpec::set_half_bandwidth},
      {"num_blocks", &v1::PatternSpec::set_num_blocks}};
  for (const IntField& field : kIntFields) {
    if (auto f = pattern.Get(field.key)) {
      SD_ASSIGN_OR_RETURN(int32_t value, ReadInt32(ctx, *f));
      (out->*field.set)(value);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseBudget(const ParseContext& ctx, const Fields& budget, v1::Budget* out) {
  SD_RETURN_IF_ERROR(budget.CheckKeys(kBudgetKeys));
  out->set_max_evaluations(kDefaultMaxEvaluations);
  out->set_max_retries(kDefaultMaxRetries);
  if (auto f = budget.Get("max_evaluations")) {
    SD_ASSIGN_OR_RETURN(int64_t v, ReadInt(ctx, *f, kInt64Min, kInt64Max));
    out->set_max_evaluations(v);
  }
  if (auto f = budget.Get("max_wall_seconds")) {
    SD_ASSIGN_OR_RETURN(double v, ReadDuration(ctx, *f));
    out->set_max_wall_seconds(v);
  }
  if (auto f = budget.Get("max_tokens")) {
    SD_ASSIGN_OR_RETURN(int64_t v, ReadInt(ctx, *f, kInt64Min, kInt64Max));
    out->set_max_tokens(v);
  }
  if (auto f = budget.Get("max_money_usd")) {
    SD_ASSIGN_OR_RETURN(double v, ReadNumber(ctx, *f));
    out->set_max_money_usd(v);
  }
  if (auto f = budget.Get("max_retries")) {
    SD_ASSIGN_OR_RETURN(int32_t v, ReadInt32(ctx, *f));
    out->set_max_retries(v);
  }
  if (auto f = budget.Get("stagnation_evaluations")) {
    SD_ASSIGN_OR_RETURN(int32_t v, ReadInt32(ctx, *f));
    out->set_stagnation_evaluations(v);
  }
  if (auto f = budget.Get("target_fitness")) {
    SD_ASSIGN_OR_RETURN(double v, ReadNumber(ctx, *f));
    out->set_target_fitness(v);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseMutator(const ParseContext& ctx, const Fields& mutator, v1::MutatorSpec* out) {
  SD_RETURN_IF_ERROR(mutator.CheckKeys(kMutatorKeys));
  out->set_weight(kDefaultMutatorWeight);
  out->set_concurrency(kDefaultMutatorConcurrency);
  out->set_timeout_seconds(kDefaultMutatorTimeoutSeconds);
  if (auto f = mutator.Get("kind")) {
    SD_ASSIGN_OR_RETURN(v1::MutatorKind kind,
                        ReadEnum(ctx, *f, "mutator kind", &ParseMutatorKindName, MutatorKindNames()));
    out->set_kind(kind);
  }
  if (auto f = mutator.Get("name")) {
    SD_ASSIGN_OR_RETURN(*out->mutable_name(), ReadString(ctx, *f));
  } else if (out->kind() != v1::MUTATOR_KIND_UNSPECIFIED) {
    out->set_name(std::string(MutatorKindName(out->kind())));
  }
  struct StringField {
    std::string_view key;
    std::string* (v1::MutatorSpec::*get)();
  };
  const StringField kStrings[] = {{"model", &v1::MutatorSpec::mutable_model},
                                  {"endpoint", &v1::MutatorSpec::mutable_endpoint},
                                  {"api_key_env", &v1::MutatorSpec::mutable_api_key_env}};
  for (const StringField& field : kStrings) {
    if (auto f = mutator.Get(field.key)) {
      SD_ASSIGN_OR_RETURN(*(out->*field.get)(), ReadString(ctx, *f));
    }
  }
  struct NumberField {
    std::string_view key;
    void (v1::MutatorSpec::*set)(double);
  };
  const NumberField kNumbers[] = {
      {"weight", &v1::MutatorSpec::set_weight},
      {"temperature", &v1::MutatorSpec::set_temperature},
      {"usd_per_million_input_tokens", &v1::MutatorSpec::set_usd_per_million_input_tokens},
      {"usd_per_million_output_tokens", &v1::MutatorSpec::set_usd_per_million_output_tokens}};
  for (const NumberField& field : kNumbers) {
    if (auto f = mutator.Get(field.key)) {
      SD_ASSIGN_OR_RETURN(double v, ReadNumber(ctx, *f));
      (out->*field.set)(v);
    }
  }
  struct Int32Field {
    std::string_view key;
    void (v1::MutatorSpec::*set)(int32_t);
  };
  const Int32Field kInts[] = {{"max_tokens", &v1::MutatorSpec::set_max_tokens},
                              {"concurrency", &v1::MutatorSpec::set_concurrency},
                              {"max_retries", &v1::MutatorSpec::set_max_retries}};
  for (const Int32Field& field : kInts) {
    if (auto f = mutator.Get(field.key)) {
      SD_ASSIGN_OR_RETURN(int32_t v, ReadInt32(ctx, *f));
      (out->*field.set)(v);
    }
  }
  if (auto f = mutator.Get("privacy")) {
    SD_ASSIGN_OR_RETURN(bool v, ReadBool(ctx, *f));
    out->set_privacy(v);
  }
  if (auto f = mutator.Get("timeout_seconds")) {
    SD_ASSIGN_OR_RETURN(double v, ReadDuration(ctx, *f));
    out->set_timeout_seconds(v);
  }
  if (auto f = mutator.Get("command")) {
    SD_ASSIGN_OR_RETURN(std::vector<Field> args, ReadList(ctx, *f, /*scalar_as_list=*/false));
    for (const Field& arg : args) {
      SD_ASSIGN_OR_RETURN(*out->add_command(), ReadString(ctx, arg));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Task> ParseTask(const ParseContext& ctx, const Fields& task, const fs::path& base_dir) {
  SD_RETURN_IF_ERROR(task.CheckKeys(kTaskKeys));
  v1::Task t;
  t.set_source_file(ctx.file);
  t.set_source_line(task.pos().line);
  if (auto f = task.Get("name")) {
    SD_ASSIGN_OR_RETURN(*t.mutable_name(), ReadString(ctx, *f));
  }
  t.set_op(v1::OP_SPMM);
  if (auto f = task.Get("op")) {
    SD_ASSIGN_OR_RETURN(v1::Op op, ReadEnum(ctx, *f, "op", &ParseOpName, OpNames()));
    t.set_op(op);
  }
  if (auto f = task.Get("dtype")) {
    SD_ASSIGN_OR_RETURN(std::string s, ReadString(ctx, *f));
    absl::StatusOr<v1::Dtype> dtype = ParseDtype(s);
    if (!dtype.ok()) return ErrorAt(ctx, *f, fmt::format("unknown dtype '{}'{}", s, Suggestion(s, kDtypeNames)));
    t.set_dtype(*dtype);
  }
  if (auto f = task.Get("layout")) {
    SD_ASSIGN_OR_RETURN(v1::Layout layout, ReadEnum(ctx, *f, "layout", &ParseLayoutName, LayoutNames()));
    t.set_layout(layout);
  }
  t.set_seed(kDefaultTaskSeed);
  if (auto f = task.Get("seed")) {
    SD_ASSIGN_OR_RETURN(uint64_t seed, ReadUint64(ctx, *f));
    t.set_seed(seed);
  }
  SD_ASSIGN_OR_RETURN(Fields pattern, task.Sub("pattern", &PatternVariant));
  SD_ASSIGN_OR_RETURN(Fields matrix, task.Sub("matrix", &MatrixVariant));
  if (!pattern.empty()) SD_RETURN_IF_ERROR(ParsePattern(ctx, pattern, t.mutable_pattern()));
  if (!matrix.empty()) {
    t.mutable_matrix()->set_seed(t.seed());
    SD_RETURN_IF_ERROR(ParseMatrix(ctx, matrix, base_dir, t.mutable_matrix()));
  }
  if (t.matrix().has_file() && t.pattern().family() == v1::PATTERN_FAMILY_UNSPECIFIED) {
    t.mutable_pattern()->set_family(v1::PATTERN_FAMILY_FILE);
  }
  if (auto f = task.Get("n")) {
    SD_ASSIGN_OR_RETURN(std::vector<Field> items, ReadList(ctx, *f, /*scalar_as_list=*/true));
    for (const Field& item : items) {
      SD_ASSIGN_OR_RETURN(int64_t n, ReadInt(ctx, item, kInt64Min, kInt64Max));
      t.add_n(n);
    }
  }
  if (auto f = task.Get("arch")) {
    SD_ASSIGN_OR_RETURN(std::vector<Field> items, ReadList(ctx, *f, /*scalar_as_list=*/true));
    for (const Field& item : items) {
      SD_ASSIGN_OR_RETURN(*t.add_arch(), ReadString(ctx, item));
    }
  } else {
    t.add_arch(std::string(kDefaultArch));
  }
  SD_ASSIGN_OR_RETURN(Fields budget, task.Sub("budget"));
  SD_RETURN_IF_ERROR(ParseBudget(ctx, budget, t.mutable_budget()));
  if (auto f = task.Get("mutators")) {
    SD_ASSIGN_OR_RETURN(std::vector<Field> items, ReadList(ctx, *f, /*scalar_as_list=*/false));
    for (const Field& item : items) {
      SD_ASSIGN_OR_RETURN(Fields mutator, ReadMap(ctx, item));
      SD_RETURN_IF_ERROR(ParseMutator(ctx, mutator, t.add_mutators()));
    }
  } else {
    v1::MutatorSpec* m = t.add_mutators();
    m->set_kind(v1::MUTATOR_KIND_BUILTIN);
    m->set_name(std::string(MutatorKindName(v1::MUTATOR_KIND_BUILTIN)));
    m->set_weight(kDefaultMutatorWeight);
    m->set_concurrency(kDefaultMutatorConcurrency);
    m->set_timeout_seconds(kDefaultMutatorTimeoutSeconds);
  }
  return t;
}

}  // namespace sparseditto::task_internal
