// Seed: merge-path CSR SpMM for skewed row lengths (Merrill & Garland, "Merge-based Parallel Sparse
// Matrix-Vector Multiplication", SC'16, extended from SpMV to SpMM).
// - prepare splits the merge path of (row ends, nonzeros) -- rows + nnz items -- into partitions of
//   ITEMS_PER_PARTITION items by binary search along the diagonals, so every partition has the same
//   work however long or short (or empty) its rows are.
// - Pass 1: a group of G lanes (G = 8..32, chosen by run from n) walks one partition over one tile of
//   n: it stages CHUNK of the partition's nonzeros (column, value) in shared memory, broadcasts them,
//   loads the matching B rows with vector loads and accumulates in fp32. A row that ends inside the
//   partition is stored to C; a row that started in an earlier partition ("head") and the row still
//   open at the partition's end ("carry") go to per-partition fp32 scratch rows instead.
// - Pass 2 (fix-up): for each row that spans partitions, C = sum of the carries of the partitions it
//   crossed, in partition order, plus the head of the partition that finished it. No atomics: the
//   result is deterministic, every scratch value read was written in the same run, and C is written
//   exactly once per element.
// prepare: CSR (values in the task dtype), partition bounds, the fix-up list, scratch for max n.
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

#define ITEMS_PER_PARTITION 256  // sparseditto:tunable values=[64, 128, 256, 512, 1024]
#define BLOCK_THREADS 128        // sparseditto:tunable values=[64, 128, 256]
#define CHUNK 64                 // sparseditto:tunable values=[32, 64, 128]
#define VEC_BYTES 16             // sparseditto:tunable values=[4, 8, 16]
#define VECS_PER_LANE 1          // sparseditto:tunable values=[1, 2]
#define UNROLL 4                 // sparseditto:tunable values=[1, 2, 4, 8]
#define FIXUP_THREADS 128        // sparseditto:tunable values=[64, 128, 256]

static_assert(BLOCK_THREADS % 32 == 0 && CHUNK % 32 == 0, "whole warps, whole chunks");
static_assert(VEC_BYTES == 4 || VEC_BYTES == 8 || VEC_BYTES == 16, "vector loads of 4, 8 or 16 bytes");

namespace {

constexpr int kMinGroup = 8;                                // lanes of a partition group: 8, 16 or 32
constexpr int kMaxGroups = BLOCK_THREADS / kMinGroup;      // groups per block at most
enum SegmentKind : int { kDirect = 0, kHead = 1, kCarry = 2 };

// The part of row r that partition [lo, hi) holds ({row, nonzero} merge coordinates), and where it
// goes. Requires lo.x <= r <= hi.x and r < rows. Shared by the kernel and the host tests.
struct Segment { int begin, end, kind; };
__host__ __device__ inline Segment SegmentOf(const int* row_offsets, int2 lo, int2 hi, int r) {
  Segment s;
  const int row_begin = row_offsets[r];
  s.begin = row_begin > lo.y ? row_begin : lo.y;
  if (r < hi.x) {
    s.end = row_offsets[r + 1];
    s.kind = (r == lo.x && row_begin < lo.y) ? kHead : kDirect;
  } else {
    s.end = hi.y;
    s.kind = kCarry;
  }
  return s;
}

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

// The lanes of this thread's partition group of 1 << group_log2 lanes.
__device__ __forceinline__ unsigned GroupMask(int group_log2) {
  if (group_log2 == 5) return 0xffffffffu;
  const unsigned first = (threadIdx.x % 32) >> group_log2 << group_log2;
  return ((1u << (1 << group_log2)) - 1u) << first;
}

struct GroupTile { int lane, size, first_col, col_stride; };  // lane's first column; vector i at + i * col_stride

// Load sparse tile: CHUNK nonzeros from `base` into shared memory, zero-padded past `end`.
template <typename T>
__device__ __forceinline__ void StageNonzeros(int base, int end, const GroupTile& gt, const int* __restrict__ cols,
                                              const T* __restrict__ values, int* s_col, float* s_val) {
  for (int i = gt.lane; i < CHUNK; i += gt.size) {
    const int k = base + i;
    s_col[i] = k < end ? cols[k] : 0;
    s_val[i] = k < end ? ToFloat(values[k]) : 0.0f;
  }
}

// Load dense tile + compute: U staged nonzeros from j times the lane's slices of their B rows.
template <typename T, int V, int U>
__device__ __forceinline__ void MultiplyStaged(int j, int n, const GroupTile& gt, const int* s_col, const float* s_val,
                                               const T* __restrict__ b, float (&acc)[VECS_PER_LANE][V]) {
  float bv[U][VECS_PER_LANE][V];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const T* b_row = b + static_cast<int64_t>(s_col[j + u]) * n;
#pragma unroll
    for (int i = 0; i < VECS_PER_LANE; ++i) {
      const int column = gt.first_col + i * gt.col_stride;
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
      for (int v = 0; v < V; ++v) acc[i][v] = fmaf(s_val[j + u], bv[u][i][v], acc[i][v]);
}

// Store: a finished row to C, or a head/carry row to the partition's fp32 scratch row; then reset.
template <typename T, int V>
__device__ __forceinline__ void FlushRow(const Segment& seg, int row, int p, int n, const GroupTile& gt, T* c,
                                         float* head, float* carry, float (&acc)[VECS_PER_LANE][V]) {
#pragma unroll
  for (int i = 0; i < VECS_PER_LANE; ++i) {
    const int column = gt.first_col + i * gt.col_stride;
    if (column < n) {
      if (seg.kind == kDirect) {
        StoreVec<T, V>(c + static_cast<int64_t>(row) * n + column, acc[i]);
      } else {
        float* out = (seg.kind == kHead ? head : carry) + static_cast<int64_t>(p) * n + column;
#pragma unroll
        for (int v = 0; v < V; ++v) out[v] = acc[i][v];
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) acc[i][v] = 0.0f;
  }
}

// Pass 1: one group of 1 << group_log2 lanes per partition, grid.y over tiles of n.
template <typename T, int V>
__global__ void MergePathSpmm(int rows, int parts, int n, int group_log2, const int2* __restrict__ bounds,
                              const int* __restrict__ row_offsets, const int* __restrict__ col_indices,
                              const T* __restrict__ values, const T* __restrict__ b, T* __restrict__ c,
                              float* __restrict__ head, float* __restrict__ carry) {
  __shared__ int s_col[kMaxGroups][CHUNK + 1];
  __shared__ float s_val[kMaxGroups][CHUNK + 1];
  const int g = threadIdx.x >> group_log2;
  const int p = blockIdx.x * (BLOCK_THREADS >> group_log2) + g;
  if (p >= parts) return;  // the whole group leaves together; no block-wide barrier follows
  const unsigned mask = GroupMask(group_log2);
  const int lane = threadIdx.x & ((1 << group_log2) - 1);
  const GroupTile gt{lane, 1 << group_log2, (static_cast<int>(blockIdx.y) * VECS_PER_LANE << group_log2) * V + lane * V,
                     V << group_log2};
  const int2 lo = bounds[p], hi = bounds[p + 1];
  float acc[VECS_PER_LANE][V] = {};
  int r = lo.x;
  Segment seg = SegmentOf(row_offsets, lo, hi, r);
  for (int base = lo.y; base < hi.y; base += CHUNK) {
    __syncwarp(mask);  // the previous chunk is consumed
    StageNonzeros<T>(base, hi.y, gt, col_indices, values, s_col[g], s_val[g]);
    __syncwarp(mask);
    const int count = min(CHUNK, hi.y - base);
    for (int j = 0; j < count;) {
      while (base + j >= seg.end) {  // rows ending before nonzero base + j (the carry row never does)
        FlushRow<T, V>(seg, r, p, n, gt, c, head, carry, acc);
        seg = SegmentOf(row_offsets, lo, hi, ++r);
      }
      const int steps = min(count - j, seg.end - base - j);
      int t = 0;
      for (; t + UNROLL <= steps; t += UNROLL) MultiplyStaged<T, V, UNROLL>(j + t, n, gt, s_col[g], s_val[g], b, acc);
      for (; t < steps; ++t) MultiplyStaged<T, V, 1>(j + t, n, gt, s_col[g], s_val[g], b, acc);
      j += steps;
    }
  }
  while (true) {  // the current row, rows with nothing left in this partition, and the carry row
    FlushRow<T, V>(seg, r, p, n, gt, c, head, carry, acc);
    if (++r > hi.x || r >= rows) break;
    seg = SegmentOf(row_offsets, lo, hi, r);
  }
}

// Pass 2: C[row] = carries of partitions [first, head_part) + head of head_part, one block per row.
template <typename T>
__global__ void FixupRows(int n, const int4* __restrict__ fixups, const float* __restrict__ head,
                          const float* __restrict__ carry, T* __restrict__ c) {
  const int4 f = fixups[blockIdx.x];  // {row, first carry partition, head partition, unused}
  for (int col = threadIdx.x; col < n; col += FIXUP_THREADS) {
    float sum = 0.0f;
    for (int q = f.y; q < f.z; ++q) sum += carry[static_cast<int64_t>(q) * n + col];
    sum += head[static_cast<int64_t>(f.z) * n + col];
    c[static_cast<int64_t>(f.x) * n + col] = FromFloat<T>(sum);
  }
}

// ---- host side ----

// The merge coordinate {rows consumed, nonzeros consumed} on `diagonal` (Merrill & Garland's search).
int2 MergePathSearch(const int32_t* row_offsets, int64_t rows, int64_t nnz, int64_t diagonal) {
  int64_t lo = std::max<int64_t>(diagonal - nnz, 0), hi = std::min(diagonal, rows);
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (row_offsets[mid + 1] <= diagonal - mid - 1) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return make_int2(static_cast<int>(lo), static_cast<int>(diagonal - lo));
}

struct MergePlan {
  std::vector<int2> bounds;  // partitions + 1 merge coordinates
  std::vector<int4> fixups;  // {row, first carry partition, head partition, 0}
  int parts() const { return static_cast<int>(bounds.size()) - 1; }
};

MergePlan BuildMergePlan(const int32_t* row_offsets, int64_t rows, int64_t nnz, int64_t items) {
  MergePlan plan;
  const int64_t total = rows + nnz;
  const int64_t parts = std::max<int64_t>((total + items - 1) / items, 1);
  for (int64_t p = 0; p <= parts; ++p) {
    plan.bounds.push_back(MergePathSearch(row_offsets, rows, nnz, std::min(p * items, total)));
  }
  for (int64_t p = 1; p < parts; ++p) {
    const int2 lo = plan.bounds[p], hi = plan.bounds[p + 1];
    if (lo.x < hi.x && row_offsets[lo.x] < lo.y) {  // row lo.x started earlier and finishes here
      int64_t first = p - 1;
      while (first > 0 && plan.bounds[first].x == lo.x) --first;
      plan.fixups.push_back(make_int4(lo.x, static_cast<int>(first), static_cast<int>(p), 0));
    }
  }
  return plan;
}

// Vector width (elements) and group size for n: the widest vector that keeps at least kMinGroup lanes busy.
struct LaunchShape {
  int vec = 1, group_log2 = 3;
  int64_t tiles = 1;
};
LaunchShape ChooseLaunchShape(int64_t n, int elem_bytes, bool pointers_aligned) {
  LaunchShape s;
  s.vec = std::max(1, VEC_BYTES / elem_bytes);
  while (s.vec > 1 && (!pointers_aligned || n % s.vec != 0 || n / s.vec < kMinGroup)) s.vec /= 2;
  const int64_t per_lane = static_cast<int64_t>(s.vec) * VECS_PER_LANE;
  while (s.group_log2 < 5 && (int64_t{1} << s.group_log2) * per_lane < n) ++s.group_log2;
  s.tiles = (n + (per_lane << s.group_log2) - 1) / (per_lane << s.group_log2);
  return s;
}

struct State {
  int32_t dtype = 0;
  int64_t rows = 0, max_n = 0;
  int parts = 0, num_fixups = 0;
  int2* bounds = nullptr;
  int4* fixups = nullptr;
  int32_t *row_offsets = nullptr, *col_indices = nullptr;
  void* values = nullptr;
  float *head = nullptr, *carry = nullptr;
};

template <typename T>
cudaError_t Upload(const T* host, size_t count, T** out) {
  cudaError_t err = cudaMalloc(out, sizeof(T) * std::max<size_t>(count, 1));
  if (err != cudaSuccess || count == 0) return err;
  return cudaMemcpy(*out, host, sizeof(T) * count, cudaMemcpyHostToDevice);
}

template <typename T>
cudaError_t UploadValues(const sd_problem* p, void** out) {
  std::vector<T> host(p->nnz);
  for (int64_t i = 0; i < p->nnz; ++i) host[i] = static_cast<T>(p->values[i]);  // exact; 16-bit: round to nearest
  T* device = nullptr;
  const cudaError_t err = Upload(host.data(), host.size(), &device);
  *out = device;
  return err;
}

template <typename T, int V>
void LaunchVec(const State* s, const LaunchShape& shape, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const int groups_per_block = BLOCK_THREADS >> shape.group_log2;
  const dim3 grid(static_cast<unsigned>((s->parts + groups_per_block - 1) / groups_per_block),
                  static_cast<unsigned>(shape.tiles));
  MergePathSpmm<T, V><<<grid, BLOCK_THREADS, 0, stream>>>(
      static_cast<int>(s->rows), s->parts, static_cast<int>(n), shape.group_log2, s->bounds, s->row_offsets,
      s->col_indices, static_cast<const T*>(s->values), static_cast<const T*>(b), static_cast<T*>(c), s->head,
      s->carry);
}

template <typename T>
int Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  constexpr int kMaxVec = VEC_BYTES / sizeof(T) > 0 ? VEC_BYTES / sizeof(T) : 1;
  const bool aligned = reinterpret_cast<uintptr_t>(b) % (kMaxVec * sizeof(T)) == 0 &&
                       reinterpret_cast<uintptr_t>(c) % (kMaxVec * sizeof(T)) == 0;
  const LaunchShape shape = ChooseLaunchShape(n, sizeof(T), aligned);
  if (shape.tiles > 65535) return 1;
  switch (shape.vec) {
    case 8: if constexpr (kMaxVec >= 8) LaunchVec<T, 8>(s, shape, b, c, n, stream); break;
    case 4: if constexpr (kMaxVec >= 4) LaunchVec<T, 4>(s, shape, b, c, n, stream); break;
    case 2: if constexpr (kMaxVec >= 2) LaunchVec<T, 2>(s, shape, b, c, n, stream); break;
    default: LaunchVec<T, 1>(s, shape, b, c, n, stream); break;
  }
  if (s->num_fixups == 0) return 0;
  FixupRows<T><<<s->num_fixups, FIXUP_THREADS, 0, stream>>>(static_cast<int>(n), s->fixups, s->head, s->carry,
                                                             static_cast<T*>(c));
  return 0;
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if (p->rows <= 0 || p->cols > INT32_MAX || p->rows + p->nnz >= INT32_MAX) {
    snprintf(error, cap, "unsupported shape %lld x %lld with %lld nonzeros", static_cast<long long>(p->rows),
             static_cast<long long>(p->cols), static_cast<long long>(p->nnz));
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
  for (int32_t i = 0; i < p->num_n_values; ++i) s->max_n = std::max(s->max_n, p->n_values[i]);
  const MergePlan plan = BuildMergePlan(p->row_offsets, p->rows, p->nnz, ITEMS_PER_PARTITION);
  s->parts = plan.parts();
  s->num_fixups = static_cast<int>(plan.fixups.size());
  const size_t scratch = sizeof(float) * static_cast<size_t>(s->parts) * std::max<size_t>(s->max_n, 1);
  cudaError_t err = Upload(plan.bounds.data(), plan.bounds.size(), &s->bounds);
  if (err == cudaSuccess) err = Upload(plan.fixups.data(), plan.fixups.size(), &s->fixups);
  if (err == cudaSuccess) err = Upload(p->row_offsets, p->rows + 1, &s->row_offsets);
  if (err == cudaSuccess) err = Upload(p->col_indices, p->nnz, &s->col_indices);
  if (err == cudaSuccess) err = cudaMalloc(&s->head, scratch);
  if (err == cudaSuccess) err = cudaMalloc(&s->carry, scratch);
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
  if (n <= 0 || n > s->max_n) return 1;  // scratch is sized for the n values prepare was told of
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
  for (void* ptr : {static_cast<void*>(s->bounds), static_cast<void*>(s->fixups), static_cast<void*>(s->row_offsets),
                    static_cast<void*>(s->col_indices), s->values, static_cast<void*>(s->head),
                    static_cast<void*>(s->carry)}) {
    cudaFree(ptr);
  }
  delete s;
}
