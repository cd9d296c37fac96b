// Internal to task/: typed readers over yaml-cpp nodes that remember where every value came from,
// so that every error names "<file>:<line>:<column>: <field path>: <reason>".
// Nothing here throws: the yaml-cpp calls used (Type, Scalar, Tag, Mark, iteration) do not throw on
// a well-formed node tree, and the loader catches YAML::Exception around all of it regardless.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace sparseditto::task_internal {

// 1-based line and column; 0 where unknown (e.g. a task that arrived as a protobuf message).
struct SourcePos {
  int line = 0;
  int column = 0;
};

SourcePos PosOf(const YAML::Mark& mark);

// Where each field of one parsed task came from, keyed by its canonical path relative to the task
// ("pattern.sparsity", "n[2]", "mutators[0].weight"). The display path is what errors show
// ("tasks[3].pattern.sparsity", or "defaults.budget.max_evaluations" for a value inherited from the
// batch's defaults). The empty path is the task itself.
class SourceMap {
 public:
  void Record(const std::string& path, SourcePos pos, std::string display);
  // True when the YAML set `path` (presence, which proto3 scalars cannot tell).
  bool Has(std::string_view path) const;
  // Position and display path of `path`, or of its nearest recorded ancestor with the rest of the
  // path appended (a missing field is reported where its mapping is).
  std::pair<SourcePos, std::string> Find(std::string_view path) const;

 private:
  struct Entry {
    SourcePos pos;
    std::string display;
  };
  std::map<std::string, Entry, std::less<>> entries_;
};

// InvalidArgument "<file>:<line>:<column>: <path>: <reason>"; parts that are unknown or empty are
// left out with their separator.
absl::Status FieldError(std::string_view file, SourcePos pos, std::string_view path, std::string_view reason);

// Optimal-string-alignment distance (adjacent transpositions cost 1), ASCII case-insensitive.
int EditDistance(std::string_view a, std::string_view b);
// " (did you mean 'x'?)" for the closest of `known` when it is close enough; otherwise
// " (expected one of a, b, c)".
std::string Suggestion(std::string_view word, std::span<const std::string_view> known);

// Joins display/canonical path parts: ("", "a") -> "a", ("a", "b") -> "a.b".
std::string JoinPath(std::string_view prefix, std::string_view key);
std::string IndexPath(std::string_view prefix, size_t index);  // "a[3]"

// The file being parsed and the task's source map.
struct ParseContext {
  std::string file;
  SourceMap* sources = nullptr;  // not owned; may be null (nothing recorded)
};

// One value found in the YAML, with the key it sat under (for errors about null values and keys).
struct Field {
  YAML::Node node;
  YAML::Mark key_mark;
  std::string path;     // canonical
  std::string display;  // shown in errors
};

// Position to report for a value: the value's own mark, or its key's for a null value.
SourcePos PosOfField(const Field& f);
absl::Status ErrorAt(const ParseContext& ctx, const Field& f, std::string_view reason);

// A mapping seen through layers, lowest priority first (a batch's defaults under the task's own
// fields). A key's value comes from the highest layer that has it; nested mappings merge key by
// key; lists and scalars replace.
class Fields {
 public:
  struct Layer {
    YAML::Node map;       // a YAML map
    std::string display;  // display path of this mapping ("defaults.budget", "tasks[2].budget")
  };
  // Tells which variant a mapping describes ("" when it names none); see Sub().
  using Discriminator = std::string (*)(const YAML::Node& map);

  Fields(const ParseContext* ctx, std::string path, std::vector<Layer> layers);

  bool empty() const { return layers_.empty(); }
  const std::string& path() const { return path_; }
  // Display path and position of the highest layer (where the mapping is reported).
  std::string display() const;
  SourcePos pos() const;

  // Every key of every layer must be a plain string, appear once in its layer and be in `known`;
  // otherwise "unknown field (did you mean ...)" at the key.
  absl::Status CheckKeys(std::span<const std::string_view> known) const;
  // The value of `key` from the highest layer that has it, recorded in the source map; nullopt if
  // no layer has it.
  std::optional<Field> Get(std::string_view key) const;
  // The mappings under `key`, one layer per layer that has it (error if one is not a mapping).
  // With a discriminator, a lower layer whose variant differs from a higher layer's non-empty
  // variant is left out (a task naming another pattern family inherits none of the defaults').
  absl::StatusOr<Fields> Sub(std::string_view key, Discriminator discriminator = nullptr) const;

 private:
  const ParseContext* ctx_;
  std::string path_;
  std::vector<Layer> layers_;
};

// Typed readers. Each records the field's position in the source map and returns
// InvalidArgument naming the position and field on a wrong type:
// "expected a number, got 'abc'", "expected a string, got a list", ...
absl::StatusOr<std::string> ReadString(const ParseContext& ctx, const Field& f);
absl::StatusOr<double> ReadNumber(const ParseContext& ctx, const Field& f);  // finite
absl::StatusOr<bool> ReadBool(const ParseContext& ctx, const Field& f);  // true/false (YAML 1.2 core)
absl::StatusOr<int64_t> ReadInt(const ParseContext& ctx, const Field& f, int64_t lo, int64_t hi);
absl::StatusOr<uint64_t> ReadUint64(const ParseContext& ctx, const Field& f);
// Seconds: a number, or a string of <number><unit> parts with units s, m, h, d ("90s", "10m",
// "1h30m"); never negative.
absl::StatusOr<double> ReadDuration(const ParseContext& ctx, const Field& f);
// A YAML list; with scalar_as_list, a single scalar is taken as a list of one.
absl::StatusOr<std::vector<Field>> ReadList(const ParseContext& ctx, const Field& f, bool scalar_as_list);
// A single-layer Fields over a mapping value (a list element).
absl::StatusOr<Fields> ReadMap(const ParseContext& ctx, const Field& f);

// Parses a duration string ("90", "90s", "10m", "2h", "1h30m", "1.5h"); nullopt if malformed.
std::optional<double> ParseDurationString(std::string_view s);

}  // namespace sparseditto::task_internal
