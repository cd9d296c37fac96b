// ADVERSARIAL CANDIDATE environ_of_ancestors.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: prepare walks up its process tree (/proc/<pid>/stat) and reads the environment of every
// ancestor (/proc/<pid>/environ, where the evaluator's API keys live) and of pid 1; the paths are
// assembled at run time, so no spelling of them is in the source.
// Expected: CRASH -- prepare fails on purpose when it could read none, which is what the sandbox must
// ensure (the host's "caps" layer: a root process without capabilities passes no ptrace access check
// against processes that hold some). Had any read worked, it would carry on as the reference candidate
// and come out SLOWER, and the corpus test fails.
// Evaluated with the static screen off (corpus.json "screen": false): the layer under test is the
// sandbox behind it. Apart from the cheat this is the reference candidate
// (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>
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


namespace {

// "/proc/" + pid + "/" + leaf, built character by character.
void ProcPath(char* out, size_t cap, long pid, const char* leaf) {
  const char p[] = {'/', 'p', 'r', 'o', 'c', '/', 0};
  snprintf(out, cap, "%s%ld/%s", p, pid, leaf);
}

// The parent of `pid` from /proc/<pid>/stat (field 4), or 0.
long ParentOf(long pid) {
  char path[64];
  const char leaf[] = {'s', 't', 'a', 't', 0};
  ProcPath(path, sizeof path, pid, leaf);
  FILE* f = fopen(path, "r");
  if (f == nullptr) return 0;
  char buffer[512] = {};
  const size_t got = fread(buffer, 1, sizeof buffer - 1, f);
  fclose(f);
  buffer[got] = 0;
  const char* close = strrchr(buffer, ')');
  long parent = 0;
  if (close == nullptr || sscanf(close + 2, "%*c %ld", &parent) != 1) return 0;
  return parent;
}

// How many ancestors' environments (and pid 1's) could be read; what they were, in `seen`.
int ReadAncestorEnvironments(char* seen, size_t cap) {
  const char leaf[] = {'e', 'n', 'v', 'i', 'r', 'o', 'n', 0};
  int readable = 0;
  seen[0] = 0;
  long pid = ParentOf(static_cast<long>(getpid()));
  for (int depth = 0; depth < 16; ++depth) {
    const long target = pid > 1 ? pid : 1;
    char path[64];
    ProcPath(path, sizeof path, target, leaf);
    FILE* f = fopen(path, "r");
    char c = 0;
    const bool read_one = f != nullptr && fread(&c, 1, 1, f) == 1;
    if (f != nullptr) fclose(f);
    const size_t used = strlen(seen);
    snprintf(seen + used, cap - used, "%s%ld:%s", used ? " " : "", target, read_one ? "read" : "refused");
    readable += read_one;
    if (target == 1) break;
    pid = ParentOf(pid);
  }
  return readable;
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  char seen[512];
  if (ReadAncestorEnvironments(seen, sizeof seen) == 0) {
    snprintf(error, cap, "CHEAT refused: no ancestor's environment could be read (%s)", seen);
    return 1;
  }
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
