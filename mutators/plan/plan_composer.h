// Dispatch plans as sources (DESIGN.md §3.5, issue 24 item 1): several candidate sources, each serving
// its own ranges of n, composed into ONE candidate source under the kernel ABI that goes through the
// cascade like any other.
//
// The composed source, in order:
//   - a manifest comment ("// sparseditto:plan variants=K") and every variant's #include lines, hoisted
//     and deduplicated (the ABI header first, then first-seen order), before any namespace;
//   - per variant i: a marker comment naming it and its ranges ("// sparseditto:plan-variant index=i
//     name=... seed=... n=1-16,129-2048"); SPARSEDITTO_EXPORT redefined to C linkage with hidden
//     visibility and the ABI names renamed by macros (sparseditto_prepare -> sd_plan_vi_prepare, ...,
//     and the optional sparseditto_layouts -> sd_plan_vi_layouts); `namespace sd_plan_vi {`, the ABI prototypes (renamed: a body may call its release before
//     defining it, as the header lets a lone candidate), the variant's body (everything after its
//     leading #include lines) and `}`; then the renames and every macro the body #defines #undef'd, so
//     variants (two instantiations of one seed included) cannot collide;
//   - SPARSEDITTO_EXPORT restored, and the one exported ABI entry set: sparseditto_layouts() returns the
//     intersection of the variants' masks (a variant without one counts as KN only), so the harness
//     hands the plan a layout only every variant serves; prepare hands each variant a copy of the
//     problem (its layout included) whose n_values are only the n it serves (a variant serving none of them is not
//     prepared), and on a variant's failure releases those already prepared and returns its code with
//     its reason prefixed by the variant's index and name; run picks the variant by n (an n no variant
//     serves, or one whose variant was not prepared, returns nonzero); release releases every prepared
//     variant.
// Tunable declarations inside the bodies are rewritten to kPlanTunableMarker: a plan declares no
// tunables of its own (ParseTunables sees none; two instantiations of a seed would declare every name
// twice), and ParsePlanSource gives each variant back with its declarations intact.
//
// A variant is refused (InvalidArgument naming the variant and the reason) when its source cannot be
// composed safely: an #include after code or after another directive, or one naming a macro (hoisting
// would change what it sees); no sparseditto_prepare, sparseditto_run or sparseditto_release in its
// code; a #define / #undef of an ABI name (sparseditto_*, SPARSEDITTO_*); an identifier or macro starting
// with sd_plan_ (the composer's own names); a source that is itself a plan; no body. The plan is refused
// when it has no variant or more than kMaxPlanVariants, a variant name outside [A-Za-z0-9._-]+ (or a
// seed name with other characters), a range that is empty or starts below 1, or two ranges that overlap.
// What the composer cannot see (a body that specialises a template of namespace std, for one) fails
// at the compile stage like any other candidate.
//
// Pure functions over strings; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseditto {

inline constexpr std::string_view kPlanManifestMarker = "sparseditto:plan variants=";
inline constexpr std::string_view kPlanVariantMarker = "sparseditto:plan-variant ";
inline constexpr std::string_view kPlanTunableMarker = "sparseditto:plan-tunable";
inline constexpr int kMaxPlanVariants = 16;

// The n values [min_n, max_n], both included.
struct NRange {
  int64_t min_n = 1;
  int64_t max_n = 1;
  bool operator==(const NRange&) const = default;
};

struct PlanVariant {
  std::string name;       // names the variant in messages and its marker (the search uses the candidate id)
  std::string seed_name;  // in the marker only; may be empty
  std::string source;     // a candidate source under the kernel ABI
  std::vector<NRange> serves;
};

// A candidate source split so that its body can be wrapped in a namespace: its leading #include lines
// (to hoist before the namespace), the lines after them, and the macros those #define (to #undef after
// it). Used by the composer and by `sparseditto export` (coordinator/search/export_wrapper.h).
struct SourcePrologue {
  std::vector<std::string> includes;  // "#include <cuda_fp16.h>", in order
  std::string body;                   // every line after the last leading #include, verbatim
  std::vector<std::string> macros;    // names the body #defines, first-seen order
  bool defines_layouts = false;       // the code names sparseditto_layouts (set by ComposePlanSource's checks)
};

// InvalidArgument ("line N: ...") for an #include after code or after another directive, or one that
// names a macro: hoisting it would change what it sees.
absl::StatusOr<SourcePrologue> SplitLeadingIncludes(std::string_view source);

// The one candidate source serving every variant's ranges (see the file comment), or InvalidArgument.
absl::StatusOr<std::string> ComposePlanSource(const std::vector<PlanVariant>& variants);

// A composed plan read back: per variant its name, seed name, ranges and body (the code after its
// #include lines, with its tunable declarations restored, so ParseTunables reads the variant's own).
struct ParsedPlanVariant {
  std::string name;
  std::string seed_name;
  std::vector<NRange> serves;
  std::string body;
};

// NotFound when `source` is not a plan (no manifest); InvalidArgument when its markers are damaged.
absl::StatusOr<std::vector<ParsedPlanVariant>> ParsePlanSource(std::string_view source);

// "1-16,129-2048" (the marker's spelling).
std::string FormatRanges(const std::vector<NRange>& ranges);

}  // namespace sparseditto
