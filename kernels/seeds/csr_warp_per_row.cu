// Seed: vector CSR SpMM, one sub-warp of ROW_THREADS lanes per row of A ("CSR-vector", Bell & Garland,
// SC'09, extended to SpMM the way Sputnik/cuSPARSE ALG2-style kernels do it).
// - The lanes of a row load ROW_THREADS (column, value) pairs of the row at once into registers and
//   broadcast them with __shfl_sync; each lane then loads its VEC-wide slice of the matching B row
//   (16-byte loads where n and the B/C pointers allow, a scalar path otherwise) and accumulates in fp32.
// - For small n the lanes of a row are split at run time into COL lanes (over n) x K slices (over the
//   row's nonzeros); the K slices are summed with __shfl_xor_sync in a fixed order (deterministic).
//   The split is chosen so that enough sub-warps exist to fill the GPU (COL_LANES=0), or fixed.
// - grid.x = row groups, grid.y = tiles of n; every element of C is written exactly once.
// prepare: uploads CSR as is (row offsets, column indices, values converted to the task dtype) and
// reads the SM count. Families: any CSR pattern; dtypes fp32/fp16/bf16; fp32 accumulation.
// sparseditto:seed families=[unstructured, file, row_sparse, column_sparse, banded, block_diagonal] dtypes=[fp32, fp16, bf16] archs=[sm_80, sm_90]
// sparseditto:family csr_rows  (BLOCK_THREADS, VEC_BYTES, VECS_PER_LANE, UNROLL mean the same in both)
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define BLOCK_THREADS 128        // sparseditto:tunable values=[64, 128, 256, 512]
#define ROW_THREADS 32           // sparseditto:tunable values=[8, 16, 32]
#define VEC_BYTES 16             // sparseditto:tunable values=[4, 8, 16]
#define VECS_PER_LANE 1          // sparseditto:tunable values=[1, 2, 4]
#define COL_LANES 0              // sparseditto:tunable values=[0, 1, 2, 4, 8, 16, 32]
#define UNROLL 4                 // sparseditto:tunable values=[1, 2, 4, 8]
#define TARGET_WARPS_PER_SM 16   // sparseditto:tunable values=[4, 8, 16, 32, 64]

static_assert(ROW_THREADS <= 32 && (ROW_THREADS & (ROW_THREADS - 1)) == 0, "a row is a power-of-two sub-warp");
static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS % ROW_THREADS == 0, "whole warps, whole rows");
static_assert(VEC_BYTES == 4 || VEC_BYTES == 8 || VEC_BYTES == 16, "vector loads of 4, 8 or 16 bytes");
static_assert(UNROLL >= 1 && VECS_PER_LANE >= 1, "positive");

namespace {

constexpr int kRowsPerBlock = BLOCK_THREADS / ROW_THREADS;

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

// V consecutive elements of B (aligned to V * sizeof(T)) as fp32.
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

// The lanes of this thread's row group (a whole warp when ROW_THREADS == 32).
__device__ __forceinline__ unsigned GroupMask() {
  if (ROW_THREADS == 32) return 0xffffffffu;
  const unsigned first = (threadIdx.x % 32) / ROW_THREADS * ROW_THREADS;
  return (0xffffffffu >> (32 - ROW_THREADS)) << first;
}

// Where a lane works: its K slice, its first column, and the column stride between its vectors.
struct LaneTile {
  int slice, slice_count, first_col, col_stride;
};

// Compute: U nonzeros (broadcast from lanes (t + u) * slice_count + slice) times the lane's B slices.
template <typename T, int V, int U>
__device__ __forceinline__ void MultiplyNonzeros(int t, int col, float val, unsigned mask, int n, const LaneTile& lt,
                                                 const T* __restrict__ b, float (&acc)[VECS_PER_LANE][V]) {
  float a[U];
  float bv[U][VECS_PER_LANE][V];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int src = (t + u) * lt.slice_count + lt.slice;
    const int c = __shfl_sync(mask, col, src, ROW_THREADS);
    a[u] = __shfl_sync(mask, val, src, ROW_THREADS);
    const T* b_row = b + static_cast<int64_t>(c) * n;
#pragma unroll
    for (int i = 0; i < VECS_PER_LANE; ++i) {
      const int column = lt.first_col + i * lt.col_stride;
      if (column < n) {
        LoadVec<T, V>(b_row + column, bv[u][i]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) bv[u][i][v] = 0.0f;
      }
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int i = 0; i < VECS_PER_LANE; ++i)
#pragma unroll
      for (int v = 0; v < V; ++v) acc[i][v] = fmaf(a[u], bv[u][i][v], acc[i][v]);
}

// Load sparse tile + compute: the row's nonzeros ROW_THREADS at a time (lanes past the row end hold
// column 0 and value 0, so the tail needs no branch: it adds 0 * B[0, :]).
template <typename T, int V>
__device__ __forceinline__ void AccumulateRow(int start, int end, int lane, unsigned mask, int n, const LaneTile& lt,
                                              const int* __restrict__ col_indices, const T* __restrict__ values,
                                              const T* __restrict__ b, float (&acc)[VECS_PER_LANE][V]) {
  for (int base = start; base < end; base += ROW_THREADS) {
    const int k = base + lane;
    const int col = k < end ? col_indices[k] : 0;
    const float val = k < end ? ToFloat(values[k]) : 0.0f;
    const int trips = (min(ROW_THREADS, end - base) + lt.slice_count - 1) / lt.slice_count;
    int t = 0;
    for (; t + UNROLL <= trips; t += UNROLL) MultiplyNonzeros<T, V, UNROLL>(t, col, val, mask, n, lt, b, acc);
    for (; t < trips; ++t) MultiplyNonzeros<T, V, 1>(t, col, val, mask, n, lt, b, acc);
  }
}

// Sum the K slices (lanes that differ in slice bits) in a fixed butterfly order.
template <int V>
__device__ __forceinline__ void ReduceSlices(unsigned mask, int col_lanes, float (&acc)[VECS_PER_LANE][V]) {
  for (int offset = col_lanes; offset < ROW_THREADS; offset <<= 1)
#pragma unroll
    for (int i = 0; i < VECS_PER_LANE; ++i)
#pragma unroll
      for (int v = 0; v < V; ++v) acc[i][v] += __shfl_xor_sync(mask, acc[i][v], offset, ROW_THREADS);
}

template <typename T, int V>
__device__ __forceinline__ void StoreRow(T* c_row, int n, const LaneTile& lt, const float (&acc)[VECS_PER_LANE][V]) {
#pragma unroll
  for (int i = 0; i < VECS_PER_LANE; ++i) {
    const int column = lt.first_col + i * lt.col_stride;
    if (column < n) StoreVec<T, V>(c_row + column, acc[i]);
  }
}

// One row group per row; col_lanes_log2 picks the COL x K split of the group's lanes.
template <typename T, int V>
__global__ void WarpPerRowSpmm(int rows, int n, int col_lanes_log2, const int* __restrict__ row_offsets,
                               const int* __restrict__ col_indices, const T* __restrict__ values,
                               const T* __restrict__ b, T* __restrict__ c) {
  const int lane = threadIdx.x % ROW_THREADS;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / ROW_THREADS;
  if (row >= rows) return;  // the whole row group leaves together
  const unsigned mask = GroupMask();
  const int col_lanes = 1 << col_lanes_log2;
  LaneTile lt;
  lt.slice = lane >> col_lanes_log2;
  lt.slice_count = ROW_THREADS >> col_lanes_log2;
  lt.col_stride = col_lanes * V;
  lt.first_col = blockIdx.y * col_lanes * V * VECS_PER_LANE + (lane & (col_lanes - 1)) * V;
  float acc[VECS_PER_LANE][V];
#pragma unroll
  for (int i = 0; i < VECS_PER_LANE; ++i)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[i][v] = 0.0f;
  AccumulateRow<T, V>(row_offsets[row], row_offsets[row + 1], lane, mask, n, lt, col_indices, values, b, acc);
  ReduceSlices<V>(mask, col_lanes, acc);
  if (lt.slice == 0) StoreRow<T, V>(c + static_cast<int64_t>(row) * n, n, lt, acc);
}

// ---- host side ----

// How run launches for one n (pure; unit tested).
struct LaunchShape {
  int vec = 1;             // elements per vector load (1: scalar path)
  int col_lanes_log2 = 0;  // lanes of a row over n = 1 << col_lanes_log2; the rest split the nonzeros
  int64_t tiles = 1;       // grid.y: tiles of n
  int64_t blocks = 0;      // grid.x
};

int Log2(int x) {
  int l = 0;
  while ((1 << (l + 1)) <= x) ++l;
  return l;
}

LaunchShape ChooseLaunchShape(int64_t rows, int64_t n, int elem_bytes, bool pointers_aligned, int sm_count) {
  LaunchShape s;
  s.vec = std::max(1, VEC_BYTES / elem_bytes);
  if (!pointers_aligned || n % s.vec != 0) s.vec = 1;
  const int64_t per_lane = static_cast<int64_t>(s.vec) * VECS_PER_LANE;
  int col_lanes = ROW_THREADS;
  if (COL_LANES != 0) {
    col_lanes = std::min(COL_LANES, ROW_THREADS);
  } else {
    const int64_t lanes_needed = (n + per_lane - 1) / per_lane;
    while (col_lanes > 1 && col_lanes / 2 >= lanes_needed) col_lanes /= 2;
    // Fewer lanes over n (more tiles, more K slices) until the sub-warps fill the GPU.
    const int64_t target_groups = static_cast<int64_t>(std::max(sm_count, 1)) * TARGET_WARPS_PER_SM * 32 / ROW_THREADS;
    auto groups = [&](int cl) { return rows * ((n + cl * per_lane - 1) / (cl * per_lane)); };
    while (col_lanes > 1 && groups(col_lanes) < target_groups) col_lanes /= 2;
  }
  s.col_lanes_log2 = Log2(col_lanes);
  s.tiles = (n + col_lanes * per_lane - 1) / (col_lanes * per_lane);
  s.blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return s;
}

struct State {
  int32_t dtype = 0;
  int64_t rows = 0;
  int sm_count = 1;
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

template <typename T, int V>
void LaunchKernel(const State* s, const LaunchShape& shape, const void* b, void* c, int64_t n, cudaStream_t stream) {
  WarpPerRowSpmm<T, V><<<dim3(static_cast<unsigned>(shape.blocks), static_cast<unsigned>(shape.tiles)),
                         BLOCK_THREADS, 0, stream>>>(
      static_cast<int>(s->rows), static_cast<int>(n), shape.col_lanes_log2, s->row_offsets, s->col_indices,
      static_cast<const T*>(s->values), static_cast<const T*>(b), static_cast<T*>(c));
}

template <typename T>
int Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  constexpr int kVec = VEC_BYTES / sizeof(T) > 0 ? VEC_BYTES / sizeof(T) : 1;
  const bool aligned = reinterpret_cast<uintptr_t>(b) % (kVec * sizeof(T)) == 0 &&
                       reinterpret_cast<uintptr_t>(c) % (kVec * sizeof(T)) == 0;
  const LaunchShape shape = ChooseLaunchShape(s->rows, n, sizeof(T), aligned, s->sm_count);
  if (shape.tiles > 65535) return 1;
  if (shape.vec == kVec) {
    LaunchKernel<T, kVec>(s, shape, b, c, n, stream);
  } else {
    LaunchKernel<T, 1>(s, shape, b, c, n, stream);
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
  cudaError_t err = cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount, p->device);
  if (err == cudaSuccess) err = cudaMalloc(&s->row_offsets, sizeof(int32_t) * (p->rows + 1));
  if (err == cudaSuccess) err = cudaMalloc(&s->col_indices, sizeof(int32_t) * (p->nnz > 0 ? p->nnz : 1));
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
  cudaFree(s->row_offsets);
  cudaFree(s->col_indices);
  cudaFree(s->values);
  delete s;
}
