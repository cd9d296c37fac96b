// The ceilings a kernel's time is judged against, measured on the device (never typed in): copy
// bandwidth (a large device-to-device copy, counting bytes read plus written), dense tensor-core
// throughput (cuBLAS fp16 GEMM with fp32 accumulation) and plain fp32 throughput (cuBLAS SGEMM, no
// TF32). Each is the best of a few runs after a warm-up. Not thread-safe; uses the current device.
#pragma once

#include "absl/status/statusor.h"

namespace sparseditto::gpu {

struct DeviceLimits {
  double copy_bandwidth_gbs = 0;  // GB/s (1e9 bytes)
  double tensor_tflops = 0;       // fp16/bf16 operands, fp32 accumulate
  double fp32_tflops = 0;
};

// Takes about a second. Errors: the CUDA/cuBLAS call that failed.
absl::StatusOr<DeviceLimits> MeasureDeviceLimits();

}  // namespace sparseditto::gpu
