// The allowed-value part of a tunable declaration (kernel_abi/tunables.h), resolved against the facts
// of the device the task is evaluated on. The syntax, after `sparseditto:tunable`:
//
//   values=[V1, V2, ...]            the listed values; an entry is
//                                     - a token without spaces, commas, brackets or parentheses
//                                       (64, 1.5f, VARIANT_STREAM),
//                                     - a tuple `(a, b, ...)` or `{a, b, ...}` of tokens (a tile shape;
//                                       spaces inside are dropped, so `(128, 64)` is the value `(128,64)`),
//                                     - an integer expression over device facts: FACT, FACT*INT,
//                                       INT*FACT, FACT/INT (integer division), e.g. smem_per_block/1024;
//   values=device:FACT*[M1, M2, ...]  shorthand for [FACT*M1, FACT*M2, ...] (integers M);
//   range=[LO, HI]                  LO, 2·LO, 4·LO, ... up to HI (LO >= 1);
//   range=[LO, HI, +STEP]           LO, LO+STEP, ... up to HI; LO and HI integers or fact expressions.
//
// Facts (DeviceFacts; names reserved, never a token value): sm_count, smem_per_block (bytes, the opt-in
// maximum for one block), smem_per_sm (bytes), arch (the compute capability as a number, 90 for sm_90a).
// Hardware facts are read from the device by the evaluator and threaded here; never typed in a task.
//
// A declaration that uses a fact is device-relative: its values are computed, kept when >= 1, made
// unique in order, and its current value (the literal in the #define) is always allowed (inserted in
// numeric order when every value is an integer, appended otherwise), so a seed written on one device
// stays valid on another. A fact that is unknown (0) drops the entries that use it; with none left the
// tunable allows only its current value (it does not move). A list resolves to at most kMaxValues
// values.
// Pure functions over strings; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseditto {

struct DeviceFacts {
  int64_t sm_count = 0;
  int64_t smem_per_block = 0;  // bytes, opt-in maximum per block
  int64_t smem_per_sm = 0;     // bytes
  int64_t arch = 0;            // 80, 90, ...
  // "sm_count=132 smem_per_block=232448 smem_per_sm=233472 arch=90" (0 for unknown facts).
  std::string ToString() const;
  // Spelled out, not defaulted: the seeds' CUDA tests include this header as C++17.
  bool operator==(const DeviceFacts& o) const {
    return sm_count == o.sm_count && smem_per_block == o.smem_per_block && smem_per_sm == o.smem_per_sm && arch == o.arch;
  }
};

// 90 for "sm_90", "sm_90a", "compute_90"; 0 when `arch` names no number.
int64_t ArchNumber(std::string_view arch);

inline constexpr size_t kMaxTunableValues = 64;

struct ResolvedValues {
  std::vector<std::string> values;
  bool device_relative = false;
};

// `spec` is the text after the marker's whitespace (e.g. "values=[1, 2]" or "range=[32, sm_count]"),
// `current` the #define's value. InvalidArgument (without a line number; the caller adds it) for a
// malformed spec, a list over kMaxTunableValues, or (not device-relative) a current value not listed.
absl::StatusOr<ResolvedValues> ResolveTunableValues(std::string_view spec, std::string_view current,
                                                    const DeviceFacts& device);

// `value` with white space removed when it is a tuple; unchanged otherwise.
std::string CanonicalTunableValue(std::string_view value);

}  // namespace sparseditto
