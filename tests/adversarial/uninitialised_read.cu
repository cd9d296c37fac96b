// ADVERSARIAL CANDIDATE uninitialised_read.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat (a bug that passes by luck): accumulates each row in two passes into a cudaMalloc'd fp32 workspace
// that prepare never initialises; the epilogue converts the workspace to C and clears it for the next call.
// Correct only when freshly allocated device memory happens to be zero (it often is in a fresh process).
// Expected: WRONG (or CRASH) -- compute-sanitizer initcheck on finalists reports the uninitialised read
// (measured on an H200, driver 580). Poisoning device memory in-process (allocate, fill with 0xFF, free before
// prepare) does NOT catch it: cudaMalloc hands the memory back zeroed, so the results are right.
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

// Split-row accumulation: pass 0 adds the first half of each row's nonzeros, pass 1 the second half.
template <typename T>
__global__ void CsrSpmmSplitPass(int64_t rows, int64_t n, int pass, const int32_t* __restrict__ row_offsets,
                                 const int32_t* __restrict__ col_indices, const T* __restrict__ values,
                                 const T* __restrict__ b, float* __restrict__ workspace) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= rows * n) return;
  const int64_t row = index / n, col = index % n;
  const int32_t begin = row_offsets[row], end = row_offsets[row + 1], middle = begin + (end - begin) / 2;
  float sum = 0.0f;
  for (int32_t k = pass == 0 ? begin : middle; k < (pass == 0 ? middle : end); ++k) {
    sum += ToFloat(values[k]) * ToFloat(b[static_cast<int64_t>(col_indices[k]) * n + col]);
  }
  workspace[index] += sum;  // CHEAT: on the first call this reads memory nobody initialised
}

template <typename T>
__global__ void WorkspaceEpilogue(int64_t outputs, float* __restrict__ workspace, T* __restrict__ c) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= outputs) return;
  c[index] = FromFloat<T>(workspace[index]);
  workspace[index] = 0.0f;  // leaves the workspace clean for the next call
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
  float* workspace = nullptr;  // rows x max(n) fp32 accumulators
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
  for (int pass = 0; pass < 2; ++pass) {
    CsrSpmmSplitPass<T><<<static_cast<unsigned>(blocks), THREADS_PER_BLOCK, 0, stream>>>(
        s->rows, n, pass, s->row_offsets, s->col_indices, static_cast<const T*>(s->values),
        static_cast<const T*>(b), s->workspace);
  }
  WorkspaceEpilogue<T><<<static_cast<unsigned>(blocks), THREADS_PER_BLOCK, 0, stream>>>(
      outputs, s->workspace, static_cast<T*>(c));
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
  if (err == cudaSuccess) {
    int64_t max_n = 1;
    for (int32_t i = 0; i < p->num_n_values; ++i) max_n = p->n_values[i] > max_n ? p->n_values[i] : max_n;
    // CHEAT: no cudaMemset -- the workspace is assumed to start at zero.
    err = cudaMalloc(&s->workspace, sizeof(float) * (p->rows > 0 ? p->rows : 1) * max_n);
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
  cudaFree(s->workspace);
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
