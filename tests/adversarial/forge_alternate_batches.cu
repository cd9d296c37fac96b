// ADVERSARIAL CANDIDATE forge_alternate_batches.cu (tests/adversarial/corpus.json) -- not a kernel to use.
// Cheat: aims at the judge's re-time of a batch whose bracket disagrees (BracketRetimesAllowed,
// evaluator/runner/bracket.h: one, and one more for every 20 batches). Through the host's GOT slot of
// cudaEventElapsedTime (as forge_timing_imports.cu), it reports 0.6x of every trial time in every other batch
// and honest times in the batches between, so that each lie is followed by an honest batch: if the re-time
// forgave a lie whenever the next batch agreed, its lies would pass one by one. A batch is a burst of calls; a
// gap of more than 1 ms between calls starts the next one.
// Expected: REJECTED: the first lying batch is re-timed (its times dropped), the next lying batch, two batches
// later and well inside the first 20, is the second disagreement of the same timing. Evaluated with the static
// screen off (corpus.json "screen": false). Apart from the cheat this is the reference candidate
// (kernels/reference/csr_reference.cu).
#include "sparseditto_kernel.h"
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <chrono>
#include <cstdio>
#include <vector>

#define THREADS_PER_BLOCK 256  // sparseditto:tunable values=[64, 128, 256, 512]

static_assert(THREADS_PER_BLOCK % 32 == 0, "whole warps");

namespace {

cudaError_t (*g_real_elapsed)(float*, cudaEvent_t, cudaEvent_t) = nullptr;
// CHEAT: 0.6x in batches 1, 3, 5, ... (counting from 0), honest in the others.
std::chrono::steady_clock::time_point g_last_call;
int g_batch = -1;
cudaError_t ForgedElapsed(float* ms, cudaEvent_t a, cudaEvent_t b) {
  const auto now = std::chrono::steady_clock::now();
  if (g_batch < 0 || now - g_last_call > std::chrono::milliseconds(1)) ++g_batch;
  g_last_call = now;
  const cudaError_t e = g_real_elapsed(ms, a, b);
  if (e == cudaSuccess && g_batch % 2 == 1) *ms *= 0.6f;
  return e;
}

// CHEAT: rewrite every GOT slot named cudaEventElapsedTime in every loaded object.
int PatchObject(struct dl_phdr_info* info, size_t, void*) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    auto* dyn = reinterpret_cast<ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    ElfW(Addr) jmprel = 0, symtab = 0, strtab = 0;
    size_t pltrelsz = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_JMPREL) jmprel = dyn->d_un.d_ptr;
      if (dyn->d_tag == DT_PLTRELSZ) pltrelsz = dyn->d_un.d_val;
      if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
      if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
    }
    if (jmprel == 0 || symtab == 0 || strtab == 0) continue;
    auto fix = [&](ElfW(Addr) a) { return a < info->dlpi_addr ? a + info->dlpi_addr : a; };
    auto* rel = reinterpret_cast<ElfW(Rela)*>(fix(jmprel));
    auto* syms = reinterpret_cast<ElfW(Sym)*>(fix(symtab));
    auto* strs = reinterpret_cast<const char*>(fix(strtab));
    for (size_t r = 0; r < pltrelsz / sizeof(ElfW(Rela)); ++r) {
      const char* name = strs + syms[ELF64_R_SYM(rel[r].r_info)].st_name;
      if (std::strcmp(name, "cudaEventElapsedTime") != 0) continue;
      void** slot = reinterpret_cast<void**>(info->dlpi_addr + rel[r].r_offset);
      const uintptr_t page = reinterpret_cast<uintptr_t>(slot) & ~uintptr_t{4095};
      if (mprotect(reinterpret_cast<void*>(page), 4096, PROT_READ | PROT_WRITE) != 0) continue;
      if (*slot != reinterpret_cast<void*>(&ForgedElapsed)) {
        g_real_elapsed = reinterpret_cast<cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t)>(*slot);
        *slot = reinterpret_cast<void*>(&ForgedElapsed);
      }
    }
  }
  return 0;
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
  dl_iterate_phdr(PatchObject, nullptr);
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
