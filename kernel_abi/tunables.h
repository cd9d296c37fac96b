// Declared tunable parameters of a candidate source (the convention is in sparseditto_kernel.h):
//     #define NAME VALUE  // sparseditto:tunable values=[V1, V2, ...]
//     #define NAME VALUE  // sparseditto:tunable values=device:sm_count*[1, 2, 4]
//     #define NAME VALUE  // sparseditto:tunable range=[32, smem_per_block/1024]
// Values are tokens without spaces, commas or brackets (integers, identifiers such as variant names,
// 1.5f...) or tuples written without spaces in the #define, "(128,64)" (a tile shape); the full syntax
// of the allowed values, device-relative lists and ranges included, is in kernel_abi/tunable_values.h.
// A seed may also name its family, on a line of its own:
//     // sparseditto:family NAME  (anything after the name is a comment)
// (seeds of one family share tunable names and meanings, so the built-in mutator may cross them).
// Pure functions over strings; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "kernel_abi/tunable_values.h"

namespace sparseditto {

inline constexpr std::string_view kTunableMarker = "sparseditto:tunable";
inline constexpr std::string_view kFamilyMarker = "sparseditto:family";

// Every tunable the source declares, in source order. InvalidArgument naming the line when a line
// carries the marker but is malformed (no #define, empty or malformed value list, a current value not
// in the list, a name declared twice). Device-relative declarations resolve against `device`; without
// facts (the default) they allow only their current value.
absl::StatusOr<std::vector<v1::Tunable>> ParseTunables(std::string_view source, const DeviceFacts& device = {});

// Returns `source` with the named tunables set to the given values; every other byte unchanged.
// InvalidArgument when a name is not declared or a value is not among its allowed values (as resolved
// against `device`). A tuple value is written as given (canonical: no spaces).
absl::StatusOr<std::string> ApplyTunables(std::string_view source,
                                          const std::map<std::string, std::string>& values,
                                          const DeviceFacts& device = {});

// The family a source declares (`// sparseditto:family NAME`), "" when none; the first one counts.
std::string DeclaredFamily(std::string_view source);

// The family a candidate's source declares, or its seed's name when it declares none ("" for neither):
// the built-in mutator crosses two candidates whose crossover families are equal and not empty.
std::string CrossoverFamily(const v1::Candidate& candidate);

}  // namespace sparseditto
