// ADVERSARIAL CANDIDATE cache_by_address_multi.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: cache_by_address.cu with a cache of up to 64 entries keyed by (B's address, n): a judge that runs
// several widths in turn, or rotates B/C buffer pairs between trials, gets a hit whenever a buffer comes back,
// where the single-entry cache of cache_by_address.cu would miss every time (and so compute every product).
// Expected: WRONG -- a buffer's second use with new contents (the next checked run at that width, the next
// timed batch on that pair) sees the stale product.
// Apart from the cheat this is the reference candidate (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <vector>

#define THREADS_PER_BLOCK 256  // sparseditto:tunable values=[64, 128, 256, 512]

static_assert(THREADS_PER_BLOCK % 32 == 0, "whole warps");

namespace {

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T FromFloat(float x);
template <> __device__ __forceinline__ float FromFloat<float>(float x) { return x; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// C[row, col] = sum_k A[row, k] * B[k, col]; one thread per (row, col).
template <typename T>
__global__ void CsrSpmmElementwise(int64_t rows, int64_t n, const int32_t* __restrict__ row_offsets,
                                   const int32_t* __restrict__ col_indices, const T* __restrict__ values,
                                   const T* __restrict__ b, T* __restrict__ c) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= rows * n) return;
  const int64_t row = index / n, col = index % n;
  float sum = 0.0f;
  for (int32_t k = row_offsets[row]; k < row_offsets[row + 1]; ++k) {
    sum += ToFloat(values[k]) * ToFloat(b[static_cast<int64_t>(col_indices[k]) * n + col]);
  }
  c[index] = FromFloat<T>(sum);
}

struct State {
  int32_t dtype = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int32_t* row_offsets = nullptr;
  int32_t* col_indices = nullptr;
  void* values = nullptr;
  // CHEAT: the last product, keyed by the B pointer and n.
  struct Entry { const void* b; int64_t n; void* c; size_t bytes; };
  std::vector<Entry> cache;  // CHEAT: C of each (B address, n) seen, up to 64
};

size_t ElementSize(int32_t dtype) { return dtype == SD_DTYPE_FP32 ? 4 : 2; }

template <typename T> T HostConvert(float x);
template <> float HostConvert<float>(float x) { return x; }
template <> __half HostConvert<__half>(float x) { return __float2half_rn(x); }
template <> __nv_bfloat16 HostConvert<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <typename T>
cudaError_t UploadValues(const sd_problem* p, void** out) {
  std::vector<T> host(p->nnz);
  for (int64_t i = 0; i < p->nnz; ++i) host[i] = HostConvert<T>(p->values[i]);
  cudaError_t err = cudaMalloc(out, sizeof(T) * (p->nnz > 0 ? p->nnz : 1));
  if (err != cudaSuccess) return err;
  return cudaMemcpy(*out, host.data(), sizeof(T) * p->nnz, cudaMemcpyHostToDevice);
}

template <typename T>
void Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const int64_t outputs = s->rows * n;
  const int64_t blocks = (outputs + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
  if (blocks == 0) return;
  CsrSpmmElementwise<T><<<static_cast<unsigned>(blocks), THREADS_PER_BLOCK, 0, stream>>>(
      s->rows, n, s->row_offsets, s->col_indices, static_cast<const T*>(s->values),
      static_cast<const T*>(b), static_cast<T*>(c));
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  State* s = new State;
  s->dtype = p->dtype;
  s->rows = p->rows;
  s->cols = p->cols;
  cudaError_t err = cudaMalloc(&s->row_offsets, sizeof(int32_t) * (p->rows + 1));
  if (err == cudaSuccess) err = cudaMalloc(&s->col_indices, sizeof(int32_t) * (p->nnz > 0 ? p->nnz : 1));
  if (err == cudaSuccess) {
    err = cudaMemcpy(s->row_offsets, p->row_offsets, sizeof(int32_t) * (p->rows + 1), cudaMemcpyHostToDevice);
  }
  if (err == cudaSuccess) {
    err = cudaMemcpy(s->col_indices, p->col_indices, sizeof(int32_t) * p->nnz, cudaMemcpyHostToDevice);
  }
  if (err == cudaSuccess) {
    switch (p->dtype) {
      case SD_DTYPE_FP32: err = UploadValues<float>(p, &s->values); break;
      case SD_DTYPE_FP16: err = UploadValues<__half>(p, &s->values); break;
      case SD_DTYPE_BF16: err = UploadValues<__nv_bfloat16>(p, &s->values); break;
      default: snprintf(error, cap, "unsupported dtype %d", p->dtype); sparseditto_release(s); return 1;
    }
  }
  if (err != cudaSuccess) {
    snprintf(error, cap, "prepare: %s", cudaGetErrorString(err));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  State* s = static_cast<State*>(state);
  const size_t bytes = static_cast<size_t>(s->rows * n) * ElementSize(s->dtype);
  for (const State::Entry& e : s->cache) {
    if (e.b == b && e.n == n && bytes > 0) {
      // CHEAT: a B address seen before: assume the same contents and replay its cached C.
      cudaMemcpyAsync(c, e.c, bytes, cudaMemcpyDeviceToDevice, stream);
      return cudaGetLastError() == cudaSuccess ? 0 : 1;
    }
  }
  switch (s->dtype) {
    case SD_DTYPE_FP32: Launch<float>(s, b, c, n, stream); break;
    case SD_DTYPE_FP16: Launch<__half>(s, b, c, n, stream); break;
    case SD_DTYPE_BF16: Launch<__nv_bfloat16>(s, b, c, n, stream); break;
    default: return 1;
  }
  if (bytes > 0 && s->cache.size() < 64) {
    State::Entry e{b, n, nullptr, bytes};
    if (cudaMalloc(&e.c, bytes) != cudaSuccess) return 1;
    cudaMemcpyAsync(e.c, c, bytes, cudaMemcpyDeviceToDevice, stream);
    s->cache.push_back(e);  // CHEAT: keeps B's address (and a copy of C) between calls
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  for (const State::Entry& e : s->cache) cudaFree(e.c);
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
