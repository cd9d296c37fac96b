#include "common/dtype.h"

#include <cstring>
#include <string>

#include <algorithm>

#include "fmt/format.h"

namespace sparseditto {

std::string_view DtypeName(v1::Dtype dtype) {
  switch (dtype) {
    case v1::DTYPE_FP32: return "fp32";
    case v1::DTYPE_FP16: return "fp16";
    case v1::DTYPE_BF16: return "bf16";
    default: return "unspecified";
  }
}

absl::StatusOr<v1::Dtype> ParseDtype(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "fp32" || lower == "float32" || lower == "float") return v1::DTYPE_FP32;
  if (lower == "fp16" || lower == "float16" || lower == "half") return v1::DTYPE_FP16;
  if (lower == "bf16" || lower == "bfloat16") return v1::DTYPE_BF16;
  return absl::InvalidArgumentError(
      fmt::format("unknown dtype '{}' (expected fp32, fp16 or bf16)", name));
}

int DtypeBytes(v1::Dtype dtype) {
  switch (dtype) {
    case v1::DTYPE_FP32: return 4;
    case v1::DTYPE_FP16:
    case v1::DTYPE_BF16: return 2;
    default: return 0;
  }
}

uint16_t FloatToHalfBits(float x) {
  _Float16 h = static_cast<_Float16>(x);  // GCC >= 12 on x86-64: IEEE binary16, ties to even
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

float HalfBitsToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof(bits));
  return static_cast<float>(h);
}

uint16_t FloatToBfloat16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float Bfloat16BitsToFloat(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

float RoundToDtype(float x, v1::Dtype dtype) {
  switch (dtype) {
    case v1::DTYPE_FP16: return HalfBitsToFloat(FloatToHalfBits(x));
    case v1::DTYPE_BF16: return Bfloat16BitsToFloat(FloatToBfloat16Bits(x));
    default: return x;
  }
}

}  // namespace sparseditto
