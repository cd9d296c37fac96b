// ADVERSARIAL CANDIDATE outlive_under_sanitizer.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: behaves while judged, and acts only when it runs under the finalist's compute-sanitizer (its process is
// the candidate host's --sanitize mode: "--sanitize" in /proc/self/cmdline). There, in prepare, it forks a child
// that would outlive the host and the tool (a process left on the evaluator's machine once the finalist checks
// are over). When the fork works it fails prepare on purpose, so that the escape reads as CRASH at FINALIST (the
// child leaves after a few seconds, so a run that lets it out leaves nothing behind); when it is refused it carries
// on as the reference.
// Expected: SLOWER at DONE -- the host's in-process layers hold under the tool too (seccomp lets clone make
// threads only, so fork fails with EPERM). "screen": false: the static screen would refuse fork and the /proc read.
// Apart from the cheat this is the reference candidate (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

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

// C[row, col] = sum_k A[row, k] * B[k, col]; one thread per (row, col), `index` the element's place in
// C as the layout lays it out (KN: row * n + col; NK: col * rows + row), so neighbouring threads write
// neighbouring elements in both.
template <typename T>
__global__ void CsrSpmmElementwise(int64_t rows, int64_t cols, int64_t n, bool nk,
                                   const int32_t* __restrict__ row_offsets, const int32_t* __restrict__ col_indices,
                                   const T* __restrict__ values, const T* __restrict__ b, T* __restrict__ c) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= rows * n) return;
  const int64_t row = nk ? index % rows : index / n, col = nk ? index / rows : index % n;
  float sum = 0.0f;
  for (int32_t k = row_offsets[row]; k < row_offsets[row + 1]; ++k) {
    const int64_t kk = col_indices[k];
    sum += ToFloat(values[k]) * ToFloat(b[nk ? col * cols + kk : kk * n + col]);
  }
  c[index] = FromFloat<T>(sum);
}

struct State {
  int32_t dtype = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  bool nk = false;  // sd_problem.layout == SD_LAYOUT_NK
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
      s->rows, s->cols, n, s->nk, s->row_offsets, s->col_indices, static_cast<const T*>(s->values),
      static_cast<const T*>(b), static_cast<T*>(c));
}

}  // namespace

SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) {
  return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK);
}

// CHEAT: under the tool only, a child that would outlive this process; "" when the fork is refused.
static const char* OutliveUnderSanitizer() {
  char cmdline[4096] = {};
  FILE* self = std::fopen("/proc/self/cmdline", "rb");
  if (self == nullptr) return "";
  const size_t got = std::fread(cmdline, 1, sizeof cmdline - 1, self);
  std::fclose(self);
  bool under_tool = false;
  for (size_t i = 0; i < got; i += std::strlen(cmdline + i) + 1) under_tool |= std::strcmp(cmdline + i, "--sanitize") == 0;
  if (!under_tool) return "";
  const pid_t child = fork();
  if (child < 0) return "";
  if (child == 0) {  // the would-be survivor: its own session, away from the host's process group
    setsid();
    sleep(5);
    _exit(0);
  }
  return "a forked child";
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if (const char* way = OutliveUnderSanitizer(); *way != 0) {
    snprintf(error, cap, "escaped the sandbox under compute-sanitizer: %s", way);
    return 1;
  }
  if (p->layout != SD_LAYOUT_KN && p->layout != SD_LAYOUT_NK) {
    snprintf(error, cap, "unsupported layout %d", p->layout);
    return 1;
  }
  State* s = new State;
  s->dtype = p->dtype;
  s->rows = p->rows;
  s->cols = p->cols;
  s->nk = p->layout == SD_LAYOUT_NK;
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
