#include "common/dtype.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

TEST(DtypeTest, ParsesNamesAndAliases) {
  struct Case { const char* name; v1::Dtype want; };
  for (const Case& c : {Case{"fp32", v1::DTYPE_FP32}, Case{"FP16", v1::DTYPE_FP16}, Case{"half", v1::DTYPE_FP16},
                        Case{"bf16", v1::DTYPE_BF16}, Case{"bfloat16", v1::DTYPE_BF16}}) {
    auto got = ParseDtype(c.name);
    ASSERT_TRUE(got.ok()) << c.name;
    EXPECT_EQ(*got, c.want) << c.name;
  }
  auto bad = ParseDtype("fp8");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fp8"), std::string::npos);
}

TEST(DtypeTest, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between two fp16 values: ties to even gives 1.
  EXPECT_EQ(RoundToDtype(1.0f + 0x1.0p-11f, v1::DTYPE_FP16), 1.0f);
  // 1 + 3*2^-11 is halfway: rounds up to the even 1 + 2^-9.
  EXPECT_EQ(RoundToDtype(1.0f + 3 * 0x1.0p-11f, v1::DTYPE_FP16), 1.0f + 0x1.0p-9f);
  EXPECT_EQ(RoundToDtype(1.0f + 0x1.0p-8f, v1::DTYPE_BF16), 1.0f);
  EXPECT_EQ(RoundToDtype(1.0f + 3 * 0x1.0p-8f, v1::DTYPE_BF16), 1.0f + 0x1.0p-6f);
  EXPECT_TRUE(std::isinf(RoundToDtype(70000.0f, v1::DTYPE_FP16)));
  EXPECT_TRUE(std::isnan(RoundToDtype(std::numeric_limits<float>::quiet_NaN(), v1::DTYPE_BF16)));
  EXPECT_EQ(RoundToDtype(0.1f, v1::DTYPE_FP32), 0.1f);
}

TEST(DtypeTest, BitsRoundTrip) {
  for (float x : {0.0f, -1.5f, 0.333251953125f, 65504.0f}) {
    EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(x)), RoundToDtype(x, v1::DTYPE_FP16));
    EXPECT_EQ(Bfloat16BitsToFloat(FloatToBfloat16Bits(x)), RoundToDtype(x, v1::DTYPE_BF16));
  }
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToBfloat16Bits(1.0f), 0x3f80);
}

}  // namespace
}  // namespace sparseditto
