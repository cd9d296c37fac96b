// The seeds' GPU tests' shared pieces (header-only, gtest): the test matrices and the check of a device result
// against the evaluator's test host product (evaluator/gpu/gpu_test_util.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/dtype.h"
#include "evaluator/gpu/gpu_test_util.h"
#include "gtest/gtest.h"
#include "kernels/testing/candidate_build.h"
#include "matrix/generators.h"

namespace sparseditto::testing {

// A generated test matrix of `pattern` (seeded by its shape), values in `dtype`.
inline CsrMatrix GeneratedMatrix(const v1::PatternSpec& pattern, int64_t rows, int64_t cols, v1::Dtype dtype) {
  auto a = GenerateMatrix(pattern, rows, cols, /*seed=*/rows * 31 + cols, dtype);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : CsrMatrix{};
}

// The elements of `got` (C of A * B in the layout's memory; B given in it) off the host product
// (gpu::testing::HostSpmmIn, in double) by more than rtol times the sum of their terms' magnitudes (+ 1e-6);
// the first five are reported as test failures.
inline int CountOffHostProduct(const CsrMatrix& a, const std::vector<float>& b, const std::vector<float>& got, int layout, int64_t n,
                               double rtol) {
  const v1::Layout in = static_cast<v1::Layout>(layout);
  const gpu::testing::HostProduct want = gpu::testing::HostSpmmIn(in, a, b, n);
  const int64_t width = gpu::testing::OutputWidth(in, a.rows, n);  // one row of the result as laid out
  int bad = 0;
  for (size_t i = 0; i < want.c.size(); ++i) {
    const double g = i < got.size() ? got[i] : NAN;
    if (std::abs(g - want.c[i]) <= rtol * (want.abs[i] + 1e-6) || bad++ >= 5) continue;
    const int64_t r = in == v1::LAYOUT_NK ? i % width : i / width, j = in == v1::LAYOUT_NK ? i / width : i % width;
    ADD_FAILURE() << "C[" << r << "," << j << "] = " << g << ", want " << want.c[i];
  }
  return bad;
}

}  // namespace sparseditto::testing
