// ADVERSARIAL CANDIDATE wrong_dtype_handling.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat/fault: ignores the problem's dtype and always treats A, B and C as fp32: right for fp32 tasks, but
// for fp16/bf16 it reads B as fp32 (garbage, and twice B's size) and writes rows*n fp32 values into an
// fp16 C (twice C's size, past its end).
// Expected: WRONG on an fp16 or bf16 task -- wrong values, and the canaries after C are overwritten
// (CRASH is also acceptable: the overrun may fault or be reported by memcheck). Passes on fp32.
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
template <typename T> __device__ __forceinline__ T FromFloat(float x);
template <> __device__ __forceinline__ float FromFloat<float>(float x) { return x; }

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
    err = UploadValues<float>(p, &s->values);  // CHEAT: dtype ignored
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
  Launch<float>(s, b, c, n, stream);  // CHEAT: B and C treated as fp32 whatever the dtype
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
