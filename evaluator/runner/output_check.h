// Judging a candidate's output against the fp32 cuBLAS reference (DESIGN.md §3.4). Host-side and
// pure: the runner copies C, the reference and |A|·|B| back and calls CheckOutput. Thread-safe.
//
// Tolerance for element (i, j), with ref = (A·B)[i,j] in fp32 and s = (|A|·|B|)[i,j]:
//     tol = out_eps(dtype) * |ref| + out_floor(dtype) + (1 + out_eps) * accum_eps(K) * s
// out_eps is half an ulp of the output type (fp32 0, fp16 2^-11, bf16 2^-8): the final rounding;
// out_floor is half the smallest subnormal step (fp16 2^-25, bf16 2^-134, fp32 2^-150), the absolute
// rounding of results too small for a normal number.
// accum_eps(K) = (4 * sqrt(K) + 16) * 2^-24: fp32 accumulation in any order, with room for the
// statistical growth of rounding error but not for reduced-precision math (TF32 or fp16 accumulation
// land near 2^-11 * s and fail; error-compensated 3xTF32 passes, output_check_test). NaN or Inf anywhere
// fails.
#pragma once

#include <cstdint>
#include <string>

#include "task.pb.h"

namespace sparseditto {

double AccumulationEpsilon(int64_t k);
double OutputEpsilon(v1::Dtype dtype);
double OutputFloor(v1::Dtype dtype);
double ElementTolerance(double ref, double abs_sum, v1::Dtype dtype, int64_t k);

struct OutputCheckResult {
  bool passed = false;
  double max_abs_error = 0;   // over finite elements
  double max_rel_error = 0;   // norm-wise: ||got - ref||_2 / ||ref||_2 over finite elements
  double worst_ratio = 0;     // max |got - ref| / tol; passed needs <= 1
  int64_t bad_elements = 0;   // beyond tolerance, or not finite
  int64_t non_finite = 0;
  std::string detail;         // the first bad element: index, got, expected, tolerance
};

// The detail of a failed check: "<bad> of <count> elements wrong (<non_finite> not finite); first:
// C[row, col] = got, expected want (tolerance tol)" for the first bad element at `index` of C as laid
// out in `layout` (KN: rows x n row-major; NK: C^T, n x rows row-major), width n and count / n rows.
// One spelling for the host and the device check (device_output_check.h).
std::string DescribeWrongOutput(int64_t bad_elements, int64_t count, int64_t non_finite, int64_t index, int64_t n,
                                double got, double want, double tolerance, v1::Layout layout = v1::LAYOUT_KN);

// got, ref and abs_sum are rows x n, row-major, as fp32 (got already converted from the dtype).
OutputCheckResult CheckOutput(const float* got, const float* ref, const float* abs_sum, int64_t rows,
                              int64_t n, v1::Dtype dtype, int64_t k);

}  // namespace sparseditto
