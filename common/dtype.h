// Element types: names and host-side rounding. Values of A are stored on the host as fp32 that are
// exactly representable in the task's dtype (round-to-nearest-even), so every consumer sees the same A.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto {

// "fp32", "fp16", "bf16"; "unspecified" otherwise.
std::string_view DtypeName(v1::Dtype dtype);

// Parses "fp32" | "fp16" | "bf16" (also "float32", "float16", "half", "bfloat16").
absl::StatusOr<v1::Dtype> ParseDtype(std::string_view name);

// Bytes per element: 4, 2, 2; 0 for DTYPE_UNSPECIFIED.
int DtypeBytes(v1::Dtype dtype);

// Rounds x to the nearest value of `dtype` (ties to even) and returns it as fp32.
// fp32: unchanged. Values beyond the dtype's range become +/-inf; NaN stays NaN.
float RoundToDtype(float x, v1::Dtype dtype);

// Bit patterns of the rounded value, for building device buffers on the host.
uint16_t FloatToHalfBits(float x);
uint16_t FloatToBfloat16Bits(float x);
float HalfBitsToFloat(uint16_t bits);
float Bfloat16BitsToFloat(uint16_t bits);

}  // namespace sparseditto
