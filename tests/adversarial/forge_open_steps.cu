// ADVERSARIAL CANDIDATE forge_open_steps.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: a global constructor, which runs while the candidate host loads the library inside its Open, writes a
// forged Open reply to fd 4 ahead of the real one: {ok: true, open_step_ms: [NaN, -1, 1e30, 0.5, 0.5 (ms), then
// 60 more]}, so that the runner's step trace shows the host's Open as nearly free and every later reply is out
// of step.
// Expected: CRASH (or WRONG / REJECTED: never CORRECT). The step times are claims the runner only traces
// (TraceHostOpenSteps drops the NaN, the negative, the absurd and the entries past the five known steps;
// nothing reads them for a verdict), and a host whose replies are out of step is a CRASH.
// Evaluated with the static screen off (corpus.json "screen": false): the layer under test is the
// judge / sandbox behind it. Apart from the cheat this is the reference candidate
// (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"
#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#define THREADS_PER_BLOCK 256  // sparseditto:tunable values=[64, 128, 256, 512]

static_assert(THREADS_PER_BLOCK % 32 == 0, "whole warps");

namespace {

// CHEAT: one HostReply frame (4-byte little-endian length, then the message): ok (field 1, varint 1) and
// open_step_ms (field 7, packed doubles), written to fd 4 when the library is loaded.
__attribute__((constructor)) void ForgeOpenReply() {
  std::vector<double> steps = {std::nan(""), -1.0, 1e30, 0.5, 0.5};
  steps.resize(65, 0.5);
  std::vector<unsigned char> message = {0x08, 0x01, 0x3A};
  for (size_t bytes = steps.size() * 8; ; bytes >>= 7) {  // varint length of the packed field
    message.push_back(static_cast<unsigned char>((bytes & 0x7F) | (bytes >= 0x80 ? 0x80 : 0)));
    if (bytes < 0x80) break;
  }
  for (double x : steps) {
    unsigned char le[8];
    std::memcpy(le, &x, 8);  // little-endian on every host this runs on
    message.insert(message.end(), le, le + 8);
  }
  const uint32_t size = static_cast<uint32_t>(message.size());
  unsigned char frame[4] = {static_cast<unsigned char>(size), static_cast<unsigned char>(size >> 8),
                            static_cast<unsigned char>(size >> 16), static_cast<unsigned char>(size >> 24)};
  (void)!write(4, frame, sizeof frame);
  (void)!write(4, message.data(), message.size());
}

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
  const State* s = static_cast<const State*>(state);
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
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
