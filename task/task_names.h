// The names task files use for the enums of proto/task.proto, both ways.
// Parsing is ASCII case-insensitive and takes '-' for '_' ("Row-Sparse" is row_sparse).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "task.pb.h"

namespace sparseditto {

// op: "spmm".
std::string_view OpName(v1::Op op);
std::optional<v1::Op> ParseOpName(std::string_view name);
std::span<const std::string_view> OpNames();

// pattern.family: "unstructured", "block", "n_m" (also "nm"), "row_sparse", "column_sparse",
// "banded", "block_diagonal", "dense", "file".
std::string_view PatternFamilyName(v1::PatternFamily family);
std::optional<v1::PatternFamily> ParsePatternFamilyName(std::string_view name);
std::span<const std::string_view> PatternFamilyNames();

// pattern.row_lengths: "uniform", "skewed".
std::string_view RowLengthsName(v1::RowLengths row_lengths);
std::optional<v1::RowLengths> ParseRowLengthsName(std::string_view name);
std::span<const std::string_view> RowLengthsNames();

// mutators[].kind: "builtin", "openai" (also "openai_compatible"), "anthropic", "command".
std::string_view MutatorKindName(v1::MutatorKind kind);
std::optional<v1::MutatorKind> ParseMutatorKindName(std::string_view name);
std::span<const std::string_view> MutatorKindNames();

// layout: "kn", "nk" (also "torch": PyTorch Linear's activations).
std::string_view LayoutName(v1::Layout layout);
std::optional<v1::Layout> ParseLayoutName(std::string_view name);
std::span<const std::string_view> LayoutNames();

// Every name above returns "unspecified" for a value it does not know.

}  // namespace sparseditto
