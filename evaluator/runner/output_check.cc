#include "evaluator/runner/output_check.h"

#include <algorithm>
#include <cmath>

#include "fmt/format.h"

namespace sparseditto {

double AccumulationEpsilon(int64_t k) {
  return (4.0 * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))) + 16.0) * 0x1.0p-24;
}

double OutputEpsilon(v1::Dtype dtype) {
  switch (dtype) {
    case v1::DTYPE_FP16: return 0x1.0p-11;
    case v1::DTYPE_BF16: return 0x1.0p-8;
    default: return 0.0;
  }
}

double OutputFloor(v1::Dtype dtype) {
  switch (dtype) {
    case v1::DTYPE_FP16: return 0x1.0p-25;
    case v1::DTYPE_BF16: return 0x1.0p-134;
    default: return 0x1.0p-150;
  }
}

double ElementTolerance(double ref, double abs_sum, v1::Dtype dtype, int64_t k) {
  const double out_eps = OutputEpsilon(dtype);
  return out_eps * std::abs(ref) + OutputFloor(dtype) + (1.0 + out_eps) * AccumulationEpsilon(k) * abs_sum;
}

OutputCheckResult CheckOutput(const float* got, const float* ref, const float* abs_sum, int64_t rows,
                              int64_t n, v1::Dtype dtype, int64_t k) {
  OutputCheckResult r;
  double error_squares = 0, ref_squares = 0;
  int64_t first_bad = 0;
  double first_got = 0, first_want = 0, first_tol = 0;
  for (int64_t i = 0; i < rows * n; ++i) {
    const double g = got[i], want = ref[i];
    const bool finite = std::isfinite(g);
    const double err = std::abs(g - want);
    const double tol = ElementTolerance(want, abs_sum[i], dtype, k);
    if (finite) {
      r.max_abs_error = std::max(r.max_abs_error, err);
      error_squares += err * err;
      ref_squares += want * want;
      r.worst_ratio = std::max(r.worst_ratio, err / tol);
    } else {
      ++r.non_finite;
    }
    if (!finite || !(err <= tol)) {
      if (r.bad_elements++ == 0) {
        first_bad = i;
        first_got = g;
        first_want = want;
        first_tol = tol;
      }
    }
  }
  r.max_rel_error = ref_squares > 0 ? std::sqrt(error_squares / ref_squares) : std::sqrt(error_squares);
  r.passed = r.bad_elements == 0;
  if (!r.passed) {
    r.detail = DescribeWrongOutput(r.bad_elements, rows * n, r.non_finite, first_bad, n, first_got, first_want, first_tol);
  }
  return r;
}

std::string DescribeWrongOutput(int64_t bad_elements, int64_t count, int64_t non_finite, int64_t index, int64_t n,
                                double got, double want, double tolerance, v1::Layout layout) {
  const int64_t rows = n > 0 ? count / n : 0;
  const bool nk = layout == v1::LAYOUT_NK && rows > 0;
  const int64_t row = nk ? index % rows : index / n, col = nk ? index / rows : index % n;
  return fmt::format("{} of {} elements wrong ({} not finite); first: C[{}, {}] = {}, expected {} (tolerance {:.3g})",
                     bad_elements, count, non_finite, row, col, got, want, tolerance);
}

}  // namespace sparseditto
