// ADVERSARIAL CANDIDATE gpu_lock_hold.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: with `sparseditto search --per-gpu K` the runners of one GPU take turns at timing under a lock
// of flock(2) files (evaluator/runner/gpu_share.h); the runner holds it shared while this candidate's
// host prepares and runs, and exclusive while it times. In prepare this candidate takes a shared flock
// on every fd it holds (3 to 1023: a lock fd the runner leaked would be one) and on every file named
// gpu-*.lock it can find under /tmp, $TMPDIR, /var/tmp, /root and /home, and keeps them: if it held one,
// the runner's exclusive lock for the timing stage (and every other runner's) would wait for ever.
// Expected: SLOWER, like the reference it otherwise is, within the stage timeout -- the runner opens
// its lock files close-on-exec (never inherited by a host), and the host's Landlock rules do not let it
// open files in those folders. The corpus test evaluates it with a runner that shares the GPU
// (corpus.json "gpu_share": true).
// Evaluated with the static screen off (corpus.json "screen": false). Apart from the cheat this is the
// reference candidate (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
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

// CHEAT: a shared flock on every fd held and on every gpu-*.lock found, kept for the process's life.
int LockIfGpuLock(const char* path, const struct stat*, int type, struct FTW* at) {
  if (type == FTW_F && std::strncmp(path + at->base, "gpu-", 4) == 0 && std::strstr(path + at->base, ".lock")) {
    const int fd = open(path, O_RDWR);  // never closed: the lock would go with it
    const bool held = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) == 0;
    fprintf(stderr, "gpu_lock_hold: %s: %s\n", path, held ? "holding it shared" : "not held");
  }
  return 0;
}

void TryToHoldTheGpuLock() {
  int held = 0;
  for (int fd = 3; fd < 1024; ++fd) held += flock(fd, LOCK_SH | LOCK_NB) == 0 ? 1 : 0;
  fprintf(stderr, "gpu_lock_hold: %d inherited fds take a flock\n", held);
  const char* tmpdir = getenv("TMPDIR");
  for (const char* root : {"/tmp", tmpdir != nullptr ? tmpdir : "/tmp", "/var/tmp", "/root", "/home"}) {
    (void)nftw(root, LockIfGpuLock, 16, FTW_PHYS);
  }
}

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
  TryToHoldTheGpuLock();
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
