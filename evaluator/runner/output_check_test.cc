#include "evaluator/runner/output_check.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

// A small exact problem: ref and |A||B| computed in double on the host.
struct Problem {
  int64_t rows = 9, k = 300, n = 5;
  std::vector<float> a, b, ref, abs_sum;
};

Problem MakeProblem(v1::Dtype dtype) {
  Problem p;
  Rng rng(3);
  p.a.resize(p.rows * p.k);
  p.b.resize(p.k * p.n);
  for (float& x : p.a) x = RoundToDtype(static_cast<float>(rng.Uniform(-1, 1)), dtype);
  for (float& x : p.b) x = RoundToDtype(static_cast<float>(rng.Uniform(-1, 1)), dtype);
  for (int64_t i = 0; i < p.rows; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0, abs = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        sum += double{p.a[i * p.k + q]} * p.b[q * p.n + j];
        abs += std::abs(double{p.a[i * p.k + q]} * p.b[q * p.n + j]);
      }
      p.ref.push_back(static_cast<float>(sum));
      p.abs_sum.push_back(static_cast<float>(abs));
    }
  }
  return p;
}

// fp32 rounded to TF32 (10 explicit mantissa bits) to nearest, ties away from zero: cvt.rna.tf32.f32.
float RoundToTf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & 0xFFFFE000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// How a product term a * b is formed before fp32 accumulation.
enum class Math {
  kFp32,    // fp32 FMA (an honest fp32 kernel)
  kTf32,    // TF32 tensor cores: operands rounded to TF32
  kTf32x3,  // error-compensated 3xTF32: a = big + small in TF32, big*big + big*small + small*big
};

// What a kernel returns: products formed as `math` says, fp32 accumulation in order, rounded to the dtype.
std::vector<float> HonestOutput(const Problem& p, v1::Dtype dtype, Math math = Math::kFp32) {
  std::vector<float> out;
  for (int64_t i = 0; i < p.rows; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      float sum = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        const float a = p.a[i * p.k + q], b = p.b[q * p.n + j];
        const float a_big = RoundToTf32(a), b_big = RoundToTf32(b);
        const float a_small = RoundToTf32(a - a_big), b_small = RoundToTf32(b - b_big);
        switch (math) {
          case Math::kFp32: sum += a * b; break;
          case Math::kTf32: sum += a_big * b_big; break;
          case Math::kTf32x3: sum += a_small * b_big + a_big * b_small + a_big * b_big; break;
        }
      }
      out.push_back(RoundToDtype(sum, dtype));
    }
  }
  return out;
}

TEST(OutputCheckTest, HonestFp32AccumulationPassesInEveryDtype) {
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    const Problem p = MakeProblem(dtype);
    const auto got = HonestOutput(p, dtype);
    const auto r = CheckOutput(got.data(), p.ref.data(), p.abs_sum.data(), p.rows, p.n, dtype, p.k);
    EXPECT_TRUE(r.passed) << DtypeName(dtype) << ": " << r.detail;
    EXPECT_LE(r.worst_ratio, 1.0);
  }
}

// TF32 fails an fp32 task; 3xTF32 (the way an fp32 seed could use tensor cores) passes it.
TEST(OutputCheckTest, Fp32TasksTakeFp32Or3xTf32ProductsButNotTf32) {
  struct Case {
    const char* name;
    Math math;
    bool passes;
  };
  const Problem p = MakeProblem(v1::DTYPE_FP32);
  for (const Case& c : {Case{"fp32", Math::kFp32, true}, Case{"tf32", Math::kTf32, false},
                        Case{"3xtf32", Math::kTf32x3, true}}) {
    const auto got = HonestOutput(p, v1::DTYPE_FP32, c.math);
    const auto r = CheckOutput(got.data(), p.ref.data(), p.abs_sum.data(), p.rows, p.n, v1::DTYPE_FP32, p.k);
    EXPECT_EQ(r.passed, c.passes) << c.name << ": worst error / tolerance " << r.worst_ratio << "; " << r.detail;
  }
}

TEST(OutputCheckTest, FaultsAreCaughtAndDescribed) {
  struct Case {
    const char* name;
    float value;  // written into element (2, 3)
  };
  const Problem p = MakeProblem(v1::DTYPE_FP16);
  for (const Case& c : {Case{"nan", std::numeric_limits<float>::quiet_NaN()},
                        Case{"inf", std::numeric_limits<float>::infinity()},
                        Case{"off by 1%", 0}}) {
    auto got = HonestOutput(p, v1::DTYPE_FP16);
    const int64_t index = 2 * p.n + 3;
    got[index] = c.value != 0 ? c.value : got[index] * 1.01f + 0.01f;
    const auto r = CheckOutput(got.data(), p.ref.data(), p.abs_sum.data(), p.rows, p.n, v1::DTYPE_FP16, p.k);
    EXPECT_FALSE(r.passed) << c.name;
    EXPECT_EQ(r.bad_elements, 1) << c.name;
    EXPECT_NE(r.detail.find("C[2, 3]"), std::string::npos) << r.detail;
  }
}

// The first bad element named by its place in C whatever the layout: in NK the output is Y = C^T
// (n x rows), so flat index j * rows + i is C[i, j].
TEST(OutputCheckTest, TheWrongElementIsNamedInCsCoordinatesInEitherLayout) {
  struct Case {
    v1::Layout layout;
    int64_t index;
    const char* want;
  };
  const int64_t rows = 5, n = 7;
  for (const Case& c : {Case{v1::LAYOUT_KN, 2 * n + 3, "C[2, 3]"}, Case{v1::LAYOUT_NK, 3 * rows + 2, "C[2, 3]"},
                        Case{v1::LAYOUT_NK, rows * n - 1, "C[4, 6]"}, Case{v1::LAYOUT_KN, rows * n - 1, "C[4, 6]"},
                        Case{v1::LAYOUT_NK, 1, "C[1, 0]"}}) {
    const std::string detail = DescribeWrongOutput(1, rows * n, 0, c.index, n, 1.0, 2.0, 0.1, c.layout);
    EXPECT_NE(detail.find(c.want), std::string::npos) << detail;
  }
}

TEST(OutputCheckTest, ResultsInTheFp16SubnormalRangeAllowTheirAbsoluteRounding) {
  // One product of two small values: exact in fp32, a subnormal in fp16 (seen on the H200).
  const float ref = -6.924383342266083e-07f, abs_sum = 6.924383342266083e-07f;
  const float got = RoundToDtype(ref, v1::DTYPE_FP16);
  ASSERT_NE(got, ref);
  const auto r = CheckOutput(&got, &ref, &abs_sum, 1, 1, v1::DTYPE_FP16, 33);
  EXPECT_TRUE(r.passed) << r.detail;
  const float off_by_a_step = got + 0x1.0p-24f;
  EXPECT_FALSE(CheckOutput(&off_by_a_step, &ref, &abs_sum, 1, 1, v1::DTYPE_FP16, 33).passed);
}

TEST(OutputCheckTest, RelativeErrorIsNormWise) {
  const float ref[2] = {3, 4}, got[2] = {3, 4.5}, abs_sum[2] = {100, 100};
  const auto r = CheckOutput(got, ref, abs_sum, 1, 2, v1::DTYPE_FP32, 1);
  EXPECT_NEAR(r.max_rel_error, 0.5 / 5.0, 1e-9);
}

TEST(OutputCheckTest, ToleranceGrowsWithKAndOutputPrecision) {
  EXPECT_LT(AccumulationEpsilon(16), AccumulationEpsilon(16384));
  EXPECT_LT(ElementTolerance(1, 10, v1::DTYPE_FP32, 512), ElementTolerance(1, 10, v1::DTYPE_FP16, 512));
  EXPECT_LT(ElementTolerance(1, 10, v1::DTYPE_FP16, 512), ElementTolerance(1, 10, v1::DTYPE_BF16, 512));
}

}  // namespace
}  // namespace sparseditto
