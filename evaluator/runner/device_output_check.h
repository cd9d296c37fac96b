// The output check of evaluator/runner/output_check.h, on the device: the same tolerance per element
// (ElementTolerance, in double) and the same totals, reduced on the GPU so that only a few bytes come
// back. The judge checked every output on the CPU before (a rows x n copy of C, the reference and
// |A|·|B| to the host, then a loop over them): on the H200 that was about 45% of an evaluation's GPU
// stage time at n = 2048. CheckOutput stays the host-side definition; device_output_check_gpu_test
// holds the two equal. Not thread-safe (one stream's scratch).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sparseditto {

// What the check reduces to. max_abs_error and worst_ratio over finite elements (a NaN error is
// skipped, as std::max does on the host); first_bad is the smallest index of a bad element
// (UINT64_MAX when none).
struct DeviceCheckTotals {
  double max_abs_error;
  double worst_ratio;
  double error_squares;
  double ref_squares;
  unsigned long long bad_elements;
  unsigned long long non_finite;
  unsigned long long first_bad;
};

struct DeviceTolerance {
  double out_eps;    // OutputEpsilon(dtype)
  double out_floor;  // OutputFloor(dtype)
  double accum_eps;  // AccumulationEpsilon(k)
};

// Resets *totals (device memory) and reduces got/ref/abs_sum (count fp32 elements each, device) into
// it, all enqueued on `stream`; the caller copies *totals back after the stream. Errors: the launch's.
cudaError_t LaunchOutputCheck(const float* got, const float* ref, const float* abs_sum, int64_t count,
                              const DeviceTolerance& tolerance, DeviceCheckTotals* totals, cudaStream_t stream);

}  // namespace sparseditto
