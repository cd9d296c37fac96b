#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "evaluator/gpu/device_kernels.h"

namespace sparseditto::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65536;  // grid-stride loops cover the rest

__device__ void StoreAs(void* base, int64_t index, float value, ElementType type) {
  switch (type) {
    case ElementType::kFp16: static_cast<__half*>(base)[index] = __float2half_rn(value); break;
    case ElementType::kBf16: static_cast<__nv_bfloat16*>(base)[index] = __float2bfloat16_rn(value); break;
    default: static_cast<float*>(base)[index] = value; break;
  }
}

// One warp per row: the lanes stride over the row's entries.
__global__ void DensifyKernel(int64_t rows, int64_t ld, const int32_t* __restrict__ row_offsets,
                              const int32_t* __restrict__ col_indices, const float* __restrict__ values,
                              ElementType type, void* dense) {
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (int64_t row = thread / 32; row < rows; row += warps) {
    for (int64_t e = row_offsets[row] + lane; e < row_offsets[row + 1]; e += 32) {
      StoreAs(dense, row * ld + col_indices[e], values[e], type);
    }
  }
}

__global__ void ConvertToFloatKernel(const void* __restrict__ in, ElementType type, int64_t count,
                                     float* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    switch (type) {
      case ElementType::kFp16: out[i] = __half2float(static_cast<const __half*>(in)[i]); break;
      case ElementType::kBf16: out[i] = __bfloat162float(static_cast<const __nv_bfloat16*>(in)[i]); break;
      default: out[i] = static_cast<const float*>(in)[i]; break;
    }
  }
}

int BlocksFor(int64_t threads) {
  return static_cast<int>(std::clamp<int64_t>((threads + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

size_t ElementBytes(ElementType type) { return type == ElementType::kFp32 ? 4 : 2; }

}  // namespace

cudaError_t LaunchDensify(int64_t rows, int64_t cols, int64_t ld, const int32_t* row_offsets,
                          const int32_t* col_indices, const float* values, ElementType type,
                          void* dense, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || ld < cols) return cudaErrorInvalidValue;
  const cudaError_t error =
      cudaMemsetAsync(dense, 0, static_cast<size_t>(rows) * ld * ElementBytes(type), stream);
  if (error != cudaSuccess || rows == 0) return error;
  DensifyKernel<<<BlocksFor(rows * 32), kThreads, 0, stream>>>(rows, ld, row_offsets, col_indices,
                                                                values, type, dense);
  return cudaGetLastError();
}

cudaError_t LaunchConvertToFloat(const void* in, ElementType type, int64_t count, float* out,
                                 cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  ConvertToFloatKernel<<<BlocksFor(count), kThreads, 0, stream>>>(in, type, count, out);
  return cudaGetLastError();
}

}  // namespace sparseditto::gpu
