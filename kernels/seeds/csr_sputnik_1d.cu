// Seed: Sputnik-style 1-D tiled CSR SpMM (Gale, Zaharia, Young, Elsen, "Sparse GPU Kernels for Deep
// Learning", SC'20).
// - Each thread block computes BLOCK_ROWS x TILE_N of C: one sub-warp of ROW_THREADS threads per row,
//   each thread owning TILE_N / ROW_THREADS columns (vector loads/stores of up to VEC_BYTES).
// - The sub-warp stages its row's nonzeros (column indices + values, as fp32) in shared memory CHUNK
//   at a time (zero-padded), then every thread reads them back as broadcasts and loads the matching
//   rows of B; fp32 accumulation, one store per output element.
// - Row swizzle for load balance: prepare sorts the rows by length, heaviest first (stable), and the
//   kernel maps (blockIdx.x, sub-warp) to that order, so long rows start first and the rows sharing a
//   warp have similar lengths.
// - Small n: run halves the tile (and the threads of a row, doubling the rows of a block) up to
//   SHRINK_LEVELS times while the narrower tile still covers n, so n = 32 does not idle lanes.
// - Index arithmetic: the column offset col * n depends on n, which run picks, so it is formed per
//   staged nonzero (one wide multiply-add) rather than precomputed in prepare.
// prepare: CSR (values in the task dtype) + the row swizzle order. fp32 accumulation everywhere.
// sparseditto:seed families=[unstructured, file, row_sparse, column_sparse, banded, block_diagonal] dtypes=[fp32, fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

#define TILE_N 64         // sparseditto:tunable values=[32, 64, 128, 256]
#define ROW_THREADS 16    // sparseditto:tunable values=[8, 16, 32]
#define BLOCK_ROWS 4      // sparseditto:tunable values=[1, 2, 4, 8]
#define CHUNK 32          // sparseditto:tunable values=[32, 64, 128]
#define VEC_BYTES 16      // sparseditto:tunable values=[4, 8, 16]
#define UNROLL 4          // sparseditto:tunable values=[1, 2, 4, 8]
#define SHRINK_LEVELS 2   // sparseditto:tunable values=[0, 1, 2]

static_assert(ROW_THREADS >= 8 && ROW_THREADS <= 32 && (ROW_THREADS & (ROW_THREADS - 1)) == 0, "sub-warp rows");
static_assert(TILE_N % ROW_THREADS == 0, "whole columns per thread");
static_assert(CHUNK % 32 == 0 && CHUNK % UNROLL == 0, "chunks are whole unrolled steps");
static_assert(SHRINK_LEVELS >= 0 && SHRINK_LEVELS <= 2, "ROW_THREADS >> 2 >= 2");

namespace {

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T FromFloat(float x);
template <> __device__ __forceinline__ float FromFloat<float>(float x) { return x; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <int kBytes> struct RawOf;
template <> struct RawOf<2> { using Type = unsigned short; };
template <> struct RawOf<4> { using Type = unsigned int; };
template <> struct RawOf<8> { using Type = uint2; };
template <> struct RawOf<16> { using Type = uint4; };

constexpr int kColsPerThread = TILE_N / ROW_THREADS;

// Vector width (elements) of the fast path for an element size: VEC_BYTES, at most a thread's columns.
constexpr int VectorElems(int elem_bytes) {
  return std::min(std::max(VEC_BYTES / elem_bytes, 1), kColsPerThread);
}

// The tiling at shrink level L (0: TILE_N wide; each level halves the tile and the threads of a row).
template <int V, int L>
struct Tiling {
  static constexpr int kRowThreads = ROW_THREADS >> L;
  static constexpr int kRows = BLOCK_ROWS << L;
  static constexpr int kTile = TILE_N >> L;
  static constexpr int kThreads = kRows * kRowThreads;
  static constexpr int kVecs = kColsPerThread / V;  // vectors per thread
  static_assert(kColsPerThread % V == 0 && kTile == kRowThreads * kColsPerThread, "tiling");
  static_assert(kThreads == BLOCK_ROWS * ROW_THREADS, "block size fixed across levels");
};

template <typename T, int V>
__device__ __forceinline__ void LoadVec(const T* __restrict__ p, float (&out)[V]) {
  using Raw = typename RawOf<sizeof(T) * V>::Type;
  const Raw raw = __ldg(reinterpret_cast<const Raw*>(p));
  T e[V];
  memcpy(e, &raw, sizeof(raw));  // well-defined punning; stays in registers
#pragma unroll
  for (int v = 0; v < V; ++v) out[v] = ToFloat(e[v]);
}

template <typename T, int V>
__device__ __forceinline__ void StoreVec(T* p, const float (&in)[V]) {
  using Raw = typename RawOf<sizeof(T) * V>::Type;
  T e[V];
#pragma unroll
  for (int v = 0; v < V; ++v) e[v] = FromFloat<T>(in[v]);
  Raw raw;
  memcpy(&raw, e, sizeof(raw));
  *reinterpret_cast<Raw*>(p) = raw;
}

template <int kRowThreads>
__device__ __forceinline__ unsigned SubwarpMask() {
  if (kRowThreads == 32) return 0xffffffffu;
  const unsigned first = (threadIdx.x % 32) / kRowThreads * kRowThreads;
  return (0xffffffffu >> (32 - kRowThreads)) << first;
}

// Load sparse tile: CHUNK nonzeros of the row from `base` into shared memory, zero-padded past `end`.
template <typename T, int kRowThreads>
__device__ __forceinline__ void StageNonzeros(int base, int end, int lane, const int* __restrict__ col_indices,
                                              const T* __restrict__ values, int* s_col, float* s_val) {
#pragma unroll
  for (int i = lane; i < CHUNK; i += kRowThreads) {
    const int k = base + i;
    s_col[i] = k < end ? col_indices[k] : 0;
    s_val[i] = k < end ? ToFloat(values[k]) : 0.0f;
  }
}

// Load dense tile + compute: `count` staged nonzeros (rounded up to UNROLL; the padding is 0 x B[0, :]).
template <typename T, int V, int kVecs, int kRowThreads>
__device__ __forceinline__ void MultiplyChunk(int count, int n, int first_col, const int* s_col, const float* s_val,
                                              const T* __restrict__ b, float (&acc)[kVecs][V]) {
  for (int j = 0; j < count; j += UNROLL) {
    float a[UNROLL];
    float bv[UNROLL][kVecs][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      a[u] = s_val[j + u];
      const T* b_row = b + static_cast<int64_t>(s_col[j + u]) * n;
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int column = first_col + i * kRowThreads * V;
        if (column < n) {
          LoadVec<T, V>(b_row + column, bv[u][i]);
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) bv[u][i][v] = 0.0f;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int i = 0; i < kVecs; ++i)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[i][v] = fmaf(a[u], bv[u][i][v], acc[i][v]);
  }
}

template <typename T, int V, int kVecs, int kRowThreads>
__device__ __forceinline__ void StoreTile(T* c_row, int n, int first_col, const float (&acc)[kVecs][V]) {
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int column = first_col + i * kRowThreads * V;
    if (column < n) StoreVec<T, V>(c_row + column, acc[i]);
  }
}

template <typename T, int V, int L>
__global__ void SputnikSpmm(int rows, int n, const int* __restrict__ row_order, const int* __restrict__ row_offsets,
                            const int* __restrict__ col_indices, const T* __restrict__ values,
                            const T* __restrict__ b, T* __restrict__ c) {
  using Cfg = Tiling<V, L>;
  __shared__ int s_col[Cfg::kRows][CHUNK + 1];  // +1: sub-warps of one warp read different banks
  __shared__ float s_val[Cfg::kRows][CHUNK + 1];
  const int sub = threadIdx.x / Cfg::kRowThreads, lane = threadIdx.x % Cfg::kRowThreads;
  const int slot = blockIdx.x * Cfg::kRows + sub;
  if (slot >= rows) return;  // the whole sub-warp leaves together; no block-wide barrier follows
  const unsigned mask = SubwarpMask<Cfg::kRowThreads>();
  const int row = row_order[slot];
  const int first_col = blockIdx.y * Cfg::kTile + lane * V;
  float acc[Cfg::kVecs][V];
#pragma unroll
  for (int i = 0; i < Cfg::kVecs; ++i)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[i][v] = 0.0f;
  const int end = row_offsets[row + 1];
  for (int base = row_offsets[row]; base < end; base += CHUNK) {
    __syncwarp(mask);  // the previous chunk is consumed
    StageNonzeros<T, Cfg::kRowThreads>(base, end, lane, col_indices, values, s_col[sub], s_val[sub]);
    __syncwarp(mask);
    const int count = (min(CHUNK, end - base) + UNROLL - 1) / UNROLL * UNROLL;
    MultiplyChunk<T, V, Cfg::kVecs, Cfg::kRowThreads>(count, n, first_col, s_col[sub], s_val[sub], b, acc);
  }
  StoreTile<T, V, Cfg::kVecs, Cfg::kRowThreads>(c + static_cast<int64_t>(row) * n, n, first_col, acc);
}

// ---- host side ----

// Row swizzle: the rows ordered by length, longest first; equal lengths keep ascending row order.
std::vector<int32_t> RowSwizzle(const int32_t* row_offsets, int64_t rows) {
  std::vector<int32_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return row_offsets[a + 1] - row_offsets[a] > row_offsets[b + 1] - row_offsets[b];
  });
  return order;
}

// The shrink level for n: the narrowest tile (at most SHRINK_LEVELS halvings) that still covers n.
int ShrinkLevel(int64_t n) {
  int level = 0;
  while (level < SHRINK_LEVELS && (TILE_N >> (level + 1)) >= n) ++level;
  return level;
}

struct State {
  int32_t dtype = 0;
  int64_t rows = 0;
  int32_t* row_order = nullptr;
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
  std::vector<T> host(p->nnz > 0 ? p->nnz : 1, HostConvert<T>(0.0f));
  for (int64_t i = 0; i < p->nnz; ++i) host[i] = HostConvert<T>(p->values[i]);
  cudaError_t err = cudaMalloc(out, sizeof(T) * host.size());
  if (err != cudaSuccess) return err;
  return cudaMemcpy(*out, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice);
}

template <typename T, int V, int L>
void LaunchLevel(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  using Cfg = Tiling<V, L>;
  const dim3 grid(static_cast<unsigned>((s->rows + Cfg::kRows - 1) / Cfg::kRows),
                  static_cast<unsigned>((n + Cfg::kTile - 1) / Cfg::kTile));
  SputnikSpmm<T, V, L><<<grid, Cfg::kThreads, 0, stream>>>(
      static_cast<int>(s->rows), static_cast<int>(n), s->row_order, s->row_offsets, s->col_indices,
      static_cast<const T*>(s->values), static_cast<const T*>(b), static_cast<T*>(c));
}

template <typename T, int V>
void LaunchVec(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  switch (ShrinkLevel(n)) {
    case 0: LaunchLevel<T, V, 0>(s, b, c, n, stream); break;
    case 1: LaunchLevel<T, V, (SHRINK_LEVELS >= 1 ? 1 : 0)>(s, b, c, n, stream); break;
    default: LaunchLevel<T, V, SHRINK_LEVELS>(s, b, c, n, stream); break;
  }
}

template <typename T>
int Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  constexpr int kVec = VectorElems(sizeof(T));
  const bool vector_ok = n % kVec == 0 && reinterpret_cast<uintptr_t>(b) % (kVec * sizeof(T)) == 0 &&
                         reinterpret_cast<uintptr_t>(c) % (kVec * sizeof(T)) == 0;
  if ((n + (TILE_N >> SHRINK_LEVELS) - 1) / (TILE_N >> SHRINK_LEVELS) > 65535) return 1;
  if (vector_ok) {
    LaunchVec<T, kVec>(s, b, c, n, stream);
  } else {
    LaunchVec<T, 1>(s, b, c, n, stream);
  }
  return 0;
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if (p->rows <= 0 || p->rows > INT32_MAX || p->cols > INT32_MAX || p->nnz > INT32_MAX) {
    snprintf(error, cap, "unsupported shape %lld x %lld", static_cast<long long>(p->rows),
             static_cast<long long>(p->cols));
    return 1;
  }
  if ((p->dtype != SD_DTYPE_FP32 && p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) ||
      !SPARSEDITTO_BUILDS_DTYPE(p->dtype)) {
    snprintf(error, cap, "unsupported dtype %d (or not in this build)", p->dtype);
    return 1;
  }
  State* s = new State;
  s->dtype = p->dtype;
  s->rows = p->rows;
  const std::vector<int32_t> order = RowSwizzle(p->row_offsets, p->rows);
  cudaError_t err = cudaMalloc(&s->row_order, sizeof(int32_t) * p->rows);
  if (err == cudaSuccess) err = cudaMalloc(&s->row_offsets, sizeof(int32_t) * (p->rows + 1));
  if (err == cudaSuccess) err = cudaMalloc(&s->col_indices, sizeof(int32_t) * (p->nnz > 0 ? p->nnz : 1));
  if (err == cudaSuccess) {
    err = cudaMemcpy(s->row_order, order.data(), sizeof(int32_t) * p->rows, cudaMemcpyHostToDevice);
  }
  if (err == cudaSuccess) {
    err = cudaMemcpy(s->row_offsets, p->row_offsets, sizeof(int32_t) * (p->rows + 1), cudaMemcpyHostToDevice);
  }
  if (err == cudaSuccess && p->nnz > 0) {
    err = cudaMemcpy(s->col_indices, p->col_indices, sizeof(int32_t) * p->nnz, cudaMemcpyHostToDevice);
  }
  if (err == cudaSuccess) {
    switch (p->dtype) {
      case SD_DTYPE_FP32: err = UploadValues<float>(p, &s->values); break;
      case SD_DTYPE_FP16: err = UploadValues<__half>(p, &s->values); break;
      default: err = UploadValues<__nv_bfloat16>(p, &s->values); break;
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
  if (n <= 0 || n > INT32_MAX) return 1;
  int rc = 1;
  switch (s->dtype) {
    case SD_DTYPE_FP32: if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) rc = Launch<float>(s, b, c, n, stream); break;
    case SD_DTYPE_FP16: if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) rc = Launch<__half>(s, b, c, n, stream); break;
    case SD_DTYPE_BF16: if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) rc = Launch<__nv_bfloat16>(s, b, c, n, stream); break;
    default: return 1;
  }
  if (rc != 0) return rc;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->row_order);
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
