// ADVERSARIAL CANDIDATE side_stream_later_trials.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: a run called within 200 us of the previous call (the later trials of a timed batch, which the
// host enqueues back to back while the judge's gate still holds the given stream) launches the real work
// at once on a non-blocking stream of its own; other runs (checked runs, the first trial of a batch) are
// honest. The side work lands before the gate opens, so the bracket and the events time only the flushes.
// Expected: WRONG -- work escaping the stream, seen by the judge's look at every C of the batch while the
// gate is closed (a look at the first C alone, which is honest, misses it).
// Apart from the cheat this is the reference candidate (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <chrono>
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
  cudaStream_t own_stream = nullptr;  // CHEAT: not the harness's stream
  std::chrono::steady_clock::time_point last_call{};
};


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
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&s->own_stream, cudaStreamNonBlocking);
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
  const auto now = std::chrono::steady_clock::now();
  if (now - s->last_call < std::chrono::microseconds(200)) {
    stream = s->own_stream;  // CHEAT: a later trial of a batch: our own stream, nothing waits for it
  }
  s->last_call = now;
  switch (s->dtype) {
    case SD_DTYPE_FP32: Launch<float>(s, b, c, n, stream); break;
    case SD_DTYPE_FP16: Launch<__half>(s, b, c, n, stream); break;
    case SD_DTYPE_BF16: Launch<__nv_bfloat16>(s, b, c, n, stream); break;
    default: return 1;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  if (s->own_stream != nullptr) {
    cudaStreamSynchronize(s->own_stream);
    cudaStreamDestroy(s->own_stream);
  }
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
