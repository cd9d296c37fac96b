// Declared tunable parameters of a candidate source (the convention is in sparseditto_kernel.h):
//     #define NAME VALUE  // sparseditto:tunable values=[V1, V2, ...]
// Values are tokens without spaces, commas or brackets (integers, identifiers, 1.5f...).
// Pure functions over strings; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"

namespace sparseditto {

inline constexpr std::string_view kTunableMarker = "sparseditto:tunable";

// Every tunable the source declares, in source order. InvalidArgument naming the line when a line
// carries the marker but is malformed (no #define, empty or malformed value list, a current value not
// in the list, a name declared twice).
absl::StatusOr<std::vector<v1::Tunable>> ParseTunables(std::string_view source);

// Returns `source` with the named tunables set to the given values; every other byte unchanged.
// InvalidArgument when a name is not declared or a value is not among its allowed values.
absl::StatusOr<std::string> ApplyTunables(std::string_view source,
                                          const std::map<std::string, std::string>& values);

}  // namespace sparseditto
