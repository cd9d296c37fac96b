#include "task/task_names.h"

#include <string>

namespace sparseditto {
namespace {

template <typename E>
struct NameEntry {
  std::string_view name;
  E value;
};

std::string Normalize(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
  }
  return out;
}

template <typename E, size_t N>
std::optional<E> Lookup(const NameEntry<E> (&table)[N], std::string_view name) {
  const std::string key = Normalize(name);
  for (const auto& e : table) {
    if (e.name == key) return e.value;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string_view NameOf(const NameEntry<E> (&table)[N], E value) {
  for (const auto& e : table) {
    if (e.value == value) return e.name;  // the first entry of a value is its canonical name
  }
  return "unspecified";
}

constexpr NameEntry<v1::Op> kOps[] = {{"spmm", v1::OP_SPMM}};
constexpr std::string_view kOpNames[] = {"spmm"};

constexpr NameEntry<v1::PatternFamily> kFamilies[] = {
    {"unstructured", v1::PATTERN_FAMILY_UNSTRUCTURED},
    {"block", v1::PATTERN_FAMILY_BLOCK},
    {"n_m", v1::PATTERN_FAMILY_N_M},
    {"nm", v1::PATTERN_FAMILY_N_M},
    {"row_sparse", v1::PATTERN_FAMILY_ROW_SPARSE},
    {"column_sparse", v1::PATTERN_FAMILY_COLUMN_SPARSE},
    {"banded", v1::PATTERN_FAMILY_BANDED},
    {"block_diagonal", v1::PATTERN_FAMILY_BLOCK_DIAGONAL},
    {"dense", v1::PATTERN_FAMILY_DENSE},
    {"file", v1::PATTERN_FAMILY_FILE},
};
constexpr std::string_view kFamilyNames[] = {"unstructured", "block",          "n_m",   "row_sparse", "column_sparse",
                                             "banded",       "block_diagonal", "dense", "file"};

constexpr NameEntry<v1::RowLengths> kRowLengths[] = {{"uniform", v1::ROW_LENGTHS_UNIFORM},
                                                     {"skewed", v1::ROW_LENGTHS_SKEWED}};
constexpr std::string_view kRowLengthsNames[] = {"uniform", "skewed"};

constexpr NameEntry<v1::MutatorKind> kKinds[] = {
    {"builtin", v1::MUTATOR_KIND_BUILTIN},
    {"openai", v1::MUTATOR_KIND_OPENAI_COMPATIBLE},
    {"openai_compatible", v1::MUTATOR_KIND_OPENAI_COMPATIBLE},
    {"anthropic", v1::MUTATOR_KIND_ANTHROPIC},
    {"command", v1::MUTATOR_KIND_COMMAND},
};
constexpr std::string_view kKindNames[] = {"builtin", "openai", "anthropic", "command"};

constexpr NameEntry<v1::Layout> kLayouts[] = {
    {"kn", v1::LAYOUT_KN},
    {"nk", v1::LAYOUT_NK},
    {"torch", v1::LAYOUT_NK},
};
constexpr std::string_view kLayoutNames[] = {"kn", "nk"};

}  // namespace

std::string_view OpName(v1::Op op) { return NameOf(kOps, op); }
std::optional<v1::Op> ParseOpName(std::string_view name) { return Lookup(kOps, name); }
std::span<const std::string_view> OpNames() { return kOpNames; }

std::string_view PatternFamilyName(v1::PatternFamily family) { return NameOf(kFamilies, family); }
std::optional<v1::PatternFamily> ParsePatternFamilyName(std::string_view name) { return Lookup(kFamilies, name); }
std::span<const std::string_view> PatternFamilyNames() { return kFamilyNames; }

std::string_view RowLengthsName(v1::RowLengths row_lengths) { return NameOf(kRowLengths, row_lengths); }
std::optional<v1::RowLengths> ParseRowLengthsName(std::string_view name) { return Lookup(kRowLengths, name); }
std::span<const std::string_view> RowLengthsNames() { return kRowLengthsNames; }

std::string_view MutatorKindName(v1::MutatorKind kind) { return NameOf(kKinds, kind); }
std::optional<v1::MutatorKind> ParseMutatorKindName(std::string_view name) { return Lookup(kKinds, name); }
std::span<const std::string_view> MutatorKindNames() { return kKindNames; }

std::string_view LayoutName(v1::Layout layout) { return NameOf(kLayouts, layout); }
std::optional<v1::Layout> ParseLayoutName(std::string_view name) { return Lookup(kLayouts, name); }
std::span<const std::string_view> LayoutNames() { return kLayoutNames; }

}  // namespace sparseditto
