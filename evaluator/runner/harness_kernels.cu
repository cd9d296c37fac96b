#include "evaluator/runner/harness_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

namespace sparseditto {
namespace {

__device__ __forceinline__ uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <> __device__ __forceinline__ float FromFloat<float>(float x) { return x; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__global__ void FillUniformKernel(T* dst, int64_t count, uint64_t seed, bool absolute) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t bits = Mix(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i) + 1);
    float x = static_cast<float>(bits >> 40) * 0x1.0p-24f * 2.0f - 1.0f;  // [-1, 1)
    T v = FromFloat<T>(x);
    if (absolute) v = FromFloat<T>(fabsf(ToFloat(v)));
    dst[i] = v;
  }
}

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One CTA a gate; the whole-GPU form launches one a streaming multiprocessor, each with all the shared
// memory a CTA may have, so no other kernel's CTA fits anywhere until the gate opens. Thread 0 of every
// CTA sets its own resident[blockIdx.x] (plain stores: atomics on mapped host memory need host-native
// atomics, which PCIe hosts lack; the host waits for all of them) and then waits for the flag.
__global__ void StreamGateKernel(const volatile int* open_flag, int* released_by_host, volatile int* resident, int64_t timeout_ns) {
  resident[blockIdx.x] = 1;
  __threadfence_system();
  const uint64_t start = GlobalTimerNs();
  while (*open_flag == 0) {
    if (static_cast<int64_t>(GlobalTimerNs() - start) > timeout_ns) {
      if (blockIdx.x == 0) *released_by_host = 0;
      return;
    }
    __nanosleep(2000);
  }
  if (blockIdx.x == 0) *released_by_host = 1;
}

unsigned GridFor(int64_t count) {
  const int64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

cudaError_t FillUniform(void* dst, int64_t count, int32_t dtype, uint64_t seed, bool absolute, cudaStream_t stream) {
  switch (dtype) {
    case 2:  // v1::DTYPE_FP16
      FillUniformKernel<<<GridFor(count), 256, 0, stream>>>(static_cast<__half*>(dst), count, seed, absolute);
      break;
    case 3:  // v1::DTYPE_BF16
      FillUniformKernel<<<GridFor(count), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), count, seed, absolute);
      break;
    default:
      FillUniformKernel<<<GridFor(count), 256, 0, stream>>>(static_cast<float*>(dst), count, seed, absolute);
  }
  return cudaGetLastError();
}

cudaError_t LaunchStreamGate(const volatile int* open_flag, int* released_by_host, volatile int* resident, int64_t timeout_ns,
                             const GateShape& shape, cudaStream_t stream) {
  StreamGateKernel<<<shape.ctas, 1, shape.shared_bytes, stream>>>(open_flag, released_by_host, resident, timeout_ns);
  return cudaGetLastError();
}

cudaError_t WholeGpuGateShape(GateShape* shape) {
  int device = 0, sms = 0, optin = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e == cudaSuccess) {
    e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&StreamGateKernel), cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  }
  if (e == cudaSuccess) {
    e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&StreamGateKernel), cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared);
  }
  if (e == cudaSuccess) *shape = GateShape{static_cast<unsigned>(sms), static_cast<size_t>(optin)};
  return e;
}

namespace {
__global__ void StampGlobalTimerKernel(uint64_t* out) { *out = GlobalTimerNs(); }
}  // namespace

cudaError_t LaunchStampGlobalTimer(uint64_t* out, cudaStream_t stream) {
  StampGlobalTimerKernel<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

namespace {
// Whole 32-bit words, then the bytes after the last whole word: each byte of p against the same byte of
// `reference` when given, else against `fill`.
__global__ void AnyByteDiffersKernel(const unsigned char* p, const unsigned char* reference, size_t bytes,
                                     unsigned char fill, unsigned int* any) {
  const unsigned int word_fill = 0x01010101u * fill;
  const size_t words = bytes / 4;
  const unsigned int* w = reinterpret_cast<const unsigned int*>(p);
  const unsigned int* r = reinterpret_cast<const unsigned int*>(reference);
  bool differs = false;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    differs |= w[i] != (r != nullptr ? r[i] : word_fill);
  }
  if (blockIdx.x == 0 && threadIdx.x < bytes % 4) {
    const size_t at = words * 4 + threadIdx.x;
    differs |= p[at] != (reference != nullptr ? reference[at] : fill);
  }
  if (differs) atomicOr(any, 1u);
}

cudaError_t LaunchAnyDifference(const void* p, const void* reference, size_t bytes, unsigned char fill,
                                unsigned int* any, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(p) % 4 != 0 || reinterpret_cast<uintptr_t>(reference) % 4 != 0) {
    return cudaErrorMisalignedAddress;
  }
  cudaError_t e = cudaMemsetAsync(any, 0, sizeof(unsigned int), stream);
  if (e != cudaSuccess || bytes == 0) return e;
  const size_t words = bytes / 4 + 1;
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((words + 255) / 256, 1024));
  AnyByteDiffersKernel<<<blocks, 256, 0, stream>>>(static_cast<const unsigned char*>(p),
                                                   static_cast<const unsigned char*>(reference), bytes, fill, any);
  return cudaGetLastError();
}
}  // namespace

cudaError_t LaunchAnyByteDiffers(const void* p, size_t bytes, unsigned char fill, unsigned int* any,
                                 cudaStream_t stream) {
  return LaunchAnyDifference(p, nullptr, bytes, fill, any, stream);
}

cudaError_t LaunchBytesDiffer(const void* a, const void* b, size_t bytes, unsigned int* any, cudaStream_t stream) {
  if (b == nullptr) return cudaErrorInvalidValue;
  return LaunchAnyDifference(a, b, bytes, 0, any, stream);
}

}  // namespace sparseditto
