#include "evaluator/runner/device_output_check.h"

#include <cfloat>
#include <climits>

namespace sparseditto {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 2048;

__global__ void ResetTotals(DeviceCheckTotals* t) {
  t->max_abs_error = 0;
  t->worst_ratio = 0;
  t->error_squares = 0;
  t->ref_squares = 0;
  t->bad_elements = 0;
  t->non_finite = 0;
  t->first_bad = ULLONG_MAX;
}

// Non-negative doubles order as their bit patterns do: a max through the integer atomic.
__device__ void AtomicMaxNonNegative(double* address, double value) {
  if (!(value >= 0)) return;  // NaN: skipped, as std::max(a, NaN) keeps a
  atomicMax(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(__double_as_longlong(value)));
}

__device__ double WarpSum(double v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ double WarpMax(double v) {
  for (int o = 16; o > 0; o /= 2) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));  // fmax drops a NaN
  return v;
}
__device__ unsigned long long WarpSumU(unsigned long long v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ unsigned long long WarpMinU(unsigned long long v) {
  for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

__global__ void __launch_bounds__(kThreads) OutputCheckKernel(const float* got, const float* ref, const float* abs_sum,
                                                              int64_t count, DeviceTolerance tol_of,
                                                              DeviceCheckTotals* totals) {
  double max_abs = 0, worst = 0, err_sq = 0, ref_sq = 0;
  unsigned long long bad = 0, non_finite = 0, first = ULLONG_MAX;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double g = got[i], want = ref[i];
    const bool finite = isfinite(g);
    const double err = fabs(g - want);
    const double tol = tol_of.out_eps * fabs(want) + tol_of.out_floor +
                       (1.0 + tol_of.out_eps) * tol_of.accum_eps * static_cast<double>(abs_sum[i]);
    if (finite) {
      max_abs = fmax(max_abs, err);
      err_sq += err * err;
      ref_sq += want * want;
      worst = fmax(worst, err / tol);
    } else {
      ++non_finite;
    }
    if (!finite || !(err <= tol)) {
      if (bad++ == 0) first = static_cast<unsigned long long>(i);
    }
  }
  max_abs = WarpMax(max_abs);
  worst = WarpMax(worst);
  err_sq = WarpSum(err_sq);
  ref_sq = WarpSum(ref_sq);
  bad = WarpSumU(bad);
  non_finite = WarpSumU(non_finite);
  first = WarpMinU(first);
  if ((threadIdx.x & 31) != 0) return;
  AtomicMaxNonNegative(&totals->max_abs_error, max_abs);
  AtomicMaxNonNegative(&totals->worst_ratio, worst);
  if (err_sq != 0) atomicAdd(&totals->error_squares, err_sq);
  if (ref_sq != 0) atomicAdd(&totals->ref_squares, ref_sq);
  if (bad != 0) {
    atomicAdd(&totals->bad_elements, bad);
    atomicMin(&totals->first_bad, first);
  }
  if (non_finite != 0) atomicAdd(&totals->non_finite, non_finite);
}

}  // namespace

cudaError_t LaunchOutputCheck(const float* got, const float* ref, const float* abs_sum, int64_t count,
                              const DeviceTolerance& tolerance, DeviceCheckTotals* totals, cudaStream_t stream) {
  ResetTotals<<<1, 1, 0, stream>>>(totals);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (count <= 0) return cudaSuccess;
  const int64_t wanted = (count + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
  OutputCheckKernel<<<blocks, kThreads, 0, stream>>>(got, ref, abs_sum, count, tolerance, totals);
  return cudaGetLastError();
}

}  // namespace sparseditto
