// The seeds' GPU tests' shared pieces (header-only, gtest): where B's and C's elements lie in a layout, the
// test operands, and the check of a device result against a host product.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "gtest/gtest.h"
#include "kernels/testing/candidate_build.h"
#include "matrix/generators.h"

namespace sparseditto::testing {

// Where B's (k, j) and C's (i, j) lie in the layout's memory (KN: B, C row-major; NK: X = B^T, Y = C^T).
inline int64_t BIndex(int layout, int64_t k, int64_t j, int64_t cols, int64_t n) { return layout == SD_LAYOUT_NK ? j * cols + k : k * n + j; }
inline int64_t CIndex(int layout, int64_t i, int64_t j, int64_t rows, int64_t n) { return layout == SD_LAYOUT_NK ? j * rows + i : i * n + j; }

// The transpose of `x` (`rows` x `cols`, row-major): X (n x K) into B = X^T (K x n), the same operand in the
// other layout.
inline std::vector<float> Transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}
// A generated test matrix of `pattern` (seeded by its shape), values in `dtype`.
inline CsrMatrix GeneratedMatrix(const v1::PatternSpec& pattern, int64_t rows, int64_t cols, v1::Dtype dtype) {
  auto a = GenerateMatrix(pattern, rows, cols, /*seed=*/rows * 31 + cols, dtype);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : CsrMatrix{};
}
// `count` values uniform in [-1, 1], rounded to `dtype`.
inline std::vector<float> RandomOperand(int64_t count, v1::Dtype dtype, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> b(count);
  for (float& x : b) x = RoundToDtype(static_cast<float>(rng.Uniform(-1, 1)), dtype);
  return b;
}

// The elements of `got` (C of A * B in the layout's memory; B given in it) off the host product by more than
// rtol times the sum of their terms' magnitudes; the first five are reported as test failures.
inline int CountOffHostProduct(const CsrMatrix& a, const std::vector<float>& b, const std::vector<float>& got, int layout, int64_t n,
                               double rtol) {
  int bad = 0;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, magnitude = 0;
      for (int32_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
        const double term = double{a.values[e]} * b[BIndex(layout, a.col_indices[e], j, a.cols, n)];
        want += term, magnitude += std::abs(term);
      }
      const double g = got[CIndex(layout, r, j, a.rows, n)];
      if (!(std::abs(g - want) <= rtol * (magnitude + 1e-6)) && bad++ < 5) ADD_FAILURE() << "C[" << r << "," << j << "] = " << g << ", want " << want;
    }
  return bad;
}

}  // namespace sparseditto::testing
