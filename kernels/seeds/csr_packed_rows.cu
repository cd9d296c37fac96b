// Seed: CSR SpMM for small n that streams A at memory speed: 16-bit column indices, rows padded to
// groups of 8 entries, one warp per row, every lane loading whole groups with 16-byte loads.
// Why: at n <= 64 an SpMM is a stream of A (B is small and stays in L1/L2), so what binds is how many
// bytes of A are in flight and how many there are. CSR with int32 columns moves 6 bytes per fp16 nonzero;
// here 4 (2 of column, 2 of value), and a warp asks for 32 groups (256 entries) at once instead of
// broadcasting 32 entries with shuffles: one memory latency per 256 entries per row, the next groups
// loaded while the current ones are used (software pipelining).
// Lanes of a row: COL lanes over n (V columns each, one 16-byte B load per entry: V = 8 for fp16/bf16,
// 4 for fp32; V = 1 when n % V != 0 or B/C are not aligned) x SLICES = 32 / COL lanes over the groups.
// A lane takes group g of the row when g % SLICES == its slice; the slices are summed with a fixed
// __shfl_xor butterfly (deterministic). Tiles of 32 * V columns go to grid.y when n is wider.
// SHARED_B (off by default): when the B tile (K x the lanes' columns) fits in shared memory and there are
// rows enough for a CTA of SHARED_B_WARPS warps on every SM, persistent CTAs stage it once and gather from
// shared memory instead of L1/L2 (fewer lanes over n, more tiles, if that makes it fit). Off: it was slower
// where it was tried (u90 fp16, n = 16); it stays a tunable for the search.
// Defaults (B_LOADS_IN_FLIGHT 4, GROUPS_IN_FLIGHT 1, MIN_WARPS_PER_SM 32: 64 registers) so that every
// row-warp of a 4096-row matrix is resident at once. Against 8/2/16 (92 registers: more loads in flight a
// warp, fewer warps) that won at n = 16 and lost at n = 128, which the search can still reach.
// MAX_COL_LANES 16: a row's warp covers at most 64 fp32 columns and the rest of n goes to grid.y; on the dlmc
// tasks as fast at n = 32 and faster at n = 128 and 256 than 32 lanes. fp16 at n <= 128 takes at most 16
// lanes either way. The figures behind these three choices: docs/lab/seed_choices.md.
// prepare: per row the first entry (a multiple of 8) and the length; the columns as uint16 (K <= 65536,
// else prepare fails with the reason), the values in the task dtype; padding entries are never used.
// sparseditto:seed families=[unstructured, file, row_sparse, column_sparse, banded, block_diagonal] dtypes=[fp32, fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define WARPS_PER_BLOCK 4   // sparseditto:tunable values=[2, 4, 8]
#define GROUPS_IN_FLIGHT 1  // sparseditto:tunable values=[1, 2]
#define MAX_COL_LANES 16    // sparseditto:tunable values=[4, 8, 16, 32]
#define MIN_WARPS_PER_SM 32 // sparseditto:tunable values=[8, 16, 24, 32]
// SHARED_B picks one of two code paths: B gathered through L1/L2 (B_FROM_GLOBAL) or staged in shared memory.
#define B_FROM_GLOBAL 0
#define B_FROM_SHARED 1
#define SHARED_B B_FROM_GLOBAL  // sparseditto:tunable values=[B_FROM_GLOBAL, B_FROM_SHARED]
#define B_LOADS_IN_FLIGHT 4 // sparseditto:tunable values=[2, 4, 8]
#define SHARED_B_WARPS 16   // sparseditto:tunable values=[8, 16, 32]

static_assert(WARPS_PER_BLOCK >= 1 && WARPS_PER_BLOCK <= 32, "CTA size");
static_assert(MIN_WARPS_PER_SM % WARPS_PER_BLOCK == 0, "occupancy asked for in whole CTAs");
static_assert(SHARED_B_WARPS >= 1 && SHARED_B_WARPS <= 32, "CTA size");
static_assert(GROUPS_IN_FLIGHT == 1 || GROUPS_IN_FLIGHT == 2, "one group, or the next prefetched");
static_assert((MAX_COL_LANES & (MAX_COL_LANES - 1)) == 0 && MAX_COL_LANES <= 32, "power-of-two lanes");

namespace {

constexpr int kGroup = 8;  // entries per group: 16 bytes of uint16 columns
static_assert(kGroup % B_LOADS_IN_FLIGHT == 0, "whole steps per group");

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T FromFloat(float x);
template <> __device__ __forceinline__ float FromFloat<float>(float x) { return x; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// One group of a row in registers: 8 columns, 8 values (raw bits of the dtype).
template <typename T>
struct Group {
  uint4 cols;
  uint4 vals[sizeof(T) * kGroup / 16];
};

// Role: load sparse tile. Group `g` of the row that starts at entry `first` (two or three 16-byte loads).
template <typename T>
__device__ __forceinline__ Group<T> LoadGroup(const uint16_t* __restrict__ cols, const T* __restrict__ vals,
                                              int64_t first, int g) {
  Group<T> out;
  const int64_t e = first + int64_t{g} * kGroup;
  out.cols = __ldg(reinterpret_cast<const uint4*>(cols + e));
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(T) * kGroup / 16); ++i)
    out.vals[i] = __ldg(reinterpret_cast<const uint4*>(vals + e) + i);
  return out;
}

// Role: load dense tile. V consecutive elements of B row `col` from column c0, raw (one 16-byte load when
// V * sizeof(T) == 16): held as loaded, converted only when used, so eight entries' loads fit in registers.
template <typename T, int V>
struct RawB {
  T e[V];
};
template <typename T, int V, bool kShared>
__device__ __forceinline__ RawB<T, V> LoadB(const T* __restrict__ b, int64_t ld, int col, int c0) {
  const T* p = b + col * ld + c0;
  RawB<T, V> out;
  if constexpr (V * sizeof(T) == 16) {
    const uint4 raw = kShared ? *reinterpret_cast<const uint4*>(p) : __ldg(reinterpret_cast<const uint4*>(p));
    memcpy(&out, &raw, sizeof(raw));
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v) out.e[v] = kShared ? p[v] : __ldg(p + v);
  }
  return out;
}

// Role: compute. The group's entries below `count` (the row's tail group is partial) times B.
template <typename T, int V, bool kShared>
__device__ __forceinline__ void MultiplyGroup(const Group<T>& grp, int count, const T* __restrict__ b, int64_t ld,
                                              int c0, float (&acc)[V]) {
  uint16_t col[kGroup];
  T val[kGroup];
  memcpy(col, &grp.cols, sizeof(col));
  memcpy(val, grp.vals, sizeof(val));
#pragma unroll
  for (int e0 = 0; e0 < kGroup; e0 += B_LOADS_IN_FLIGHT) {  // B_LOADS_IN_FLIGHT independent B loads, then use
    RawB<T, V> bv[B_LOADS_IN_FLIGHT];
#pragma unroll
    for (int e = 0; e < B_LOADS_IN_FLIGHT; ++e)
      if (e0 + e < count) bv[e] = LoadB<T, V, kShared>(b, ld, col[e0 + e], c0);
#pragma unroll
    for (int e = 0; e < B_LOADS_IN_FLIGHT; ++e)
      if (e0 + e < count) {
        const float a = ToFloat(val[e0 + e]);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = fmaf(a, ToFloat(bv[e].e[v]), acc[v]);
      }
  }
}

// Role: store. Slice 0's lanes write their V columns.
template <typename T, int V>
__device__ __forceinline__ void StoreC(T* c, const float (&acc)[V]) {
  T e[V];
#pragma unroll
  for (int v = 0; v < V; ++v) e[v] = FromFloat<T>(acc[v]);
  if constexpr (V * sizeof(T) == 16) {
    uint4 raw;
    memcpy(&raw, e, sizeof(raw));
    *reinterpret_cast<uint4*>(c) = raw;
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v) c[v] = e[v];
  }
}

struct Args {
  int rows;
  int64_t n, k;
  int col_lanes_log2;
  const int64_t* __restrict__ row_first;
  const int* __restrict__ row_len;
  const uint16_t* __restrict__ cols;
  const void* __restrict__ vals;
  const void* __restrict__ b;
  void* __restrict__ c;
};

// One row of C (this lane's V columns from c0): the row's groups, slice by slice, then the butterfly.
// B is read at b[col * ld + bc0] (global B: ld = n, bc0 = c0; shared tile: ld = its width).
template <typename T, int V, bool kShared>
__device__ __forceinline__ void RowProduct(const Args& a, int row, int lane, int c0, const T* b, int64_t ld, int bc0) {
  const int slices_log2 = 5 - a.col_lanes_log2, slice = lane >> a.col_lanes_log2;
  const T* vals = static_cast<const T*>(a.vals);
  const int64_t first = a.row_first[row];
  const int len = a.row_len[row], groups = (len + kGroup - 1) / kGroup;
  float acc[V] = {};
  if (c0 < a.n) {  // a lane past n does no work but joins the butterfly
    int g = slice;
    Group<T> cur;
    if (g < groups) cur = LoadGroup<T>(a.cols, vals, first, g);
    while (g < groups) {
      const int next = g + (1 << slices_log2);
      Group<T> nxt;
      if (GROUPS_IN_FLIGHT == 2 && next < groups) nxt = LoadGroup<T>(a.cols, vals, first, next);
      MultiplyGroup<T, V, kShared>(cur, min(kGroup, len - g * kGroup), b, ld, bc0, acc);
      if (GROUPS_IN_FLIGHT == 2) {
        cur = nxt;
      } else if (next < groups) {
        cur = LoadGroup<T>(a.cols, vals, first, next);
      }
      g = next;
    }
  }
  for (int offset = 1 << a.col_lanes_log2; offset < 32; offset <<= 1)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] += __shfl_xor_sync(0xffffffffu, acc[v], offset);
  if (slice == 0 && c0 < a.n) StoreC<T, V>(static_cast<T*>(a.c) + row * a.n + c0, acc);
}

// sm_80's compiler spills 12 bytes of the fp16/bf16 kernels at 64 registers (sm_90's does not): there the
// occupancy asked for is capped at 24 warps (80 registers). Only sm_90 was measured.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900 && MIN_WARPS_PER_SM > 24
constexpr int kMinWarpsPerSm = 24 / WARPS_PER_BLOCK * WARPS_PER_BLOCK;
#else
constexpr int kMinWarpsPerSm = MIN_WARPS_PER_SM;
#endif
template <typename T, int V>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32, kMinWarpsPerSm / WARPS_PER_BLOCK) PackedRowsSpmm(Args a) {
  const int row = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= a.rows) return;  // whole warps leave together
  const int c0 = ((blockIdx.y << a.col_lanes_log2) + (lane & ((1 << a.col_lanes_log2) - 1))) * V;
  RowProduct<T, V, false>(a, row, lane, c0, static_cast<const T*>(a.b), a.n, c0);
}

// Persistent CTAs; V * sizeof(T) == 16. The tile: K rows x (V << col_lanes_log2) columns from blockIdx.y's.
template <typename T, int V>
__global__ void __launch_bounds__(SHARED_B_WARPS * 32, 1) PackedRowsSharedB(Args a) {
  extern __shared__ uint4 tile4[];
  const int width = V << a.col_lanes_log2, tile_c0 = blockIdx.y * width, chunks = width / V;
  const T* b = static_cast<const T*>(a.b);
  for (int64_t i = threadIdx.x; i < a.k * chunks; i += blockDim.x) {  // role: stage the B tile
    const int64_t k = i / chunks;
    const int col = tile_c0 + static_cast<int>(i % chunks) * V;
    tile4[i] = col < a.n ? __ldg(reinterpret_cast<const uint4*>(b + k * a.n + col)) : make_uint4(0, 0, 0, 0);
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, c0 = tile_c0 + (lane & ((1 << a.col_lanes_log2) - 1)) * V;
  for (int row = blockIdx.x * SHARED_B_WARPS + threadIdx.x / 32; row < a.rows; row += gridDim.x * SHARED_B_WARPS)
    RowProduct<T, V, true>(a, row, lane, c0, reinterpret_cast<const T*>(tile4), width, c0 - tile_c0);
}

// ---- host: format and launch shape (pure; unit tested) ----------------------------------------------
struct PackedRows {
  std::vector<int64_t> first;  // per row, a multiple of kGroup
  std::vector<int> len;
  std::vector<uint16_t> cols;  // padded entries: column 0
  std::vector<int64_t> source; // per padded entry, its index in the CSR arrays, or -1 for padding
};

// False (with *why) when a column does not fit 16 bits.
bool BuildPackedRows(int64_t rows, int64_t cols, const int32_t* row_offsets, const int32_t* col_indices,
                     PackedRows* out, const char** why) {
  if (cols > 65536) {
    *why = "K > 65536 does not fit 16-bit column indices";
    return false;
  }
  *out = PackedRows{};
  int64_t at = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int len = row_offsets[r + 1] - row_offsets[r];
    out->first.push_back(at);
    out->len.push_back(len);
    at += (len + kGroup - 1) / kGroup * kGroup;
  }
  out->cols.assign(std::max<int64_t>(at, kGroup), 0);
  out->source.assign(out->cols.size(), -1);
  for (int64_t r = 0; r < rows; ++r)
    for (int i = 0; i < out->len[r]; ++i) {
      out->cols[out->first[r] + i] = static_cast<uint16_t>(col_indices[row_offsets[r] + i]);
      out->source[out->first[r] + i] = row_offsets[r] + i;
    }
  return true;
}

struct LaunchShape {
  int vec = 1;             // V
  int col_lanes_log2 = 0;  // lanes over n = 1 << col_lanes_log2 (<= MAX_COL_LANES)
  int64_t tiles = 1;       // grid.y
};

LaunchShape ChooseLaunchShape(int64_t n, int elem_bytes, bool aligned) {
  LaunchShape s;
  s.vec = aligned && n % (16 / elem_bytes) == 0 ? 16 / elem_bytes : 1;
  const int64_t lanes_needed = (n + s.vec - 1) / s.vec;
  while ((1 << s.col_lanes_log2) < lanes_needed && (1 << s.col_lanes_log2) < MAX_COL_LANES) ++s.col_lanes_log2;
  const int64_t tile = int64_t{s.vec} << s.col_lanes_log2;
  s.tiles = (n + tile - 1) / tile;
  return s;
}

// The shared-B launch, when SHARED_B allows it, the vectors are 16 bytes, there are rows for a CTA on every
// SM, and a tile fits in max_smem bytes (halving the lanes over n until it does, up to twice the tiles).
struct SharedBPlan {
  bool use = false;
  LaunchShape shape;
  size_t smem = 0;
  int64_t blocks = 0;  // grid.x: persistent CTAs
};

SharedBPlan ChooseSharedB(const LaunchShape& global, int64_t rows, int64_t k, int64_t n, int elem_bytes,
                          int64_t max_smem, int sm_count) {
  SharedBPlan plan;
  if constexpr (!SHARED_B) return plan;
  if (global.vec * elem_bytes != 16 || rows < int64_t{SHARED_B_WARPS} * sm_count) return plan;
  for (int lanes_log2 = global.col_lanes_log2; lanes_log2 >= 0; --lanes_log2) {
    const int64_t width = int64_t{global.vec} << lanes_log2, bytes = k * width * elem_bytes;
    if ((n + width - 1) / width > 2 * global.tiles) break;  // each tile re-reads A: at most twice the tiles
    if (bytes > max_smem) continue;
    plan.use = true;
    plan.shape = LaunchShape{global.vec, lanes_log2, (n + width - 1) / width};
    plan.smem = static_cast<size_t>(bytes);
    plan.blocks = std::min<int64_t>(sm_count * std::max<int64_t>(1, max_smem / bytes),
                                    (rows + SHARED_B_WARPS - 1) / SHARED_B_WARPS);
    return plan;
  }
  return plan;
}

struct State {
  int32_t dtype = 0;
  int rows = 0;
  int64_t k = 0;
  int sm_count = 1, max_smem = 0;  // read from the device in prepare
  int64_t* row_first = nullptr;
  int* row_len = nullptr;
  uint16_t* cols = nullptr;
  void* vals = nullptr;
};

template <typename T> T HostConvert(float x);
template <> float HostConvert<float>(float x) { return x; }
template <> __half HostConvert<__half>(float x) { return __float2half_rn(x); }
template <> __nv_bfloat16 HostConvert<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <typename T>
cudaError_t UploadValues(const sd_problem* p, const PackedRows& f, void** out) {
  std::vector<T> host(f.source.size(), HostConvert<T>(0.0f));
  for (size_t i = 0; i < f.source.size(); ++i)
    if (f.source[i] >= 0) host[i] = HostConvert<T>(p->values[f.source[i]]);
  cudaError_t err = cudaMalloc(out, sizeof(T) * host.size());
  if (err != cudaSuccess) return err;
  return cudaMemcpy(*out, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice);
}

template <typename T>
int Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const bool aligned = reinterpret_cast<uintptr_t>(b) % 16 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0;
  const LaunchShape shape = ChooseLaunchShape(n, sizeof(T), aligned);
  const SharedBPlan shared = ChooseSharedB(shape, s->rows, s->k, n, sizeof(T), s->max_smem, s->sm_count);
  Args a{s->rows, n, s->k, shape.col_lanes_log2, s->row_first, s->row_len, s->cols, s->vals, b, c};
  if (shared.use) {
    if (shared.shape.tiles > 65535) return 1;
    a.col_lanes_log2 = shared.shape.col_lanes_log2;
    const dim3 grid(static_cast<unsigned>(shared.blocks), static_cast<unsigned>(shared.shape.tiles));
    PackedRowsSharedB<T, kVec><<<grid, SHARED_B_WARPS * 32, shared.smem, stream>>>(a);
    return 0;
  }
  if (shape.tiles > 65535) return 1;
  const dim3 grid((s->rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK, static_cast<unsigned>(shape.tiles));
  if (shape.vec == kVec) {
    PackedRowsSpmm<T, kVec><<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(a);
  } else {
    PackedRowsSpmm<T, 1><<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(a);
  }
  return 0;
}

// Lets the shared-B kernel of the dtype use up to the opt-in shared memory.
template <typename T>
cudaError_t ConfigureSharedB(int max_smem) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(&PackedRowsSharedB<T, 16 / sizeof(T)>),
                              cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem);
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if (p->rows <= 0 || p->rows > INT32_MAX || p->nnz > INT32_MAX) {
    snprintf(error, cap, "csr_packed_rows: unsupported shape %lld x %lld", static_cast<long long>(p->rows),
             static_cast<long long>(p->cols));
    return 1;
  }
  if ((p->dtype != SD_DTYPE_FP32 && p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) ||
      !SPARSEDITTO_BUILDS_DTYPE(p->dtype)) {
    snprintf(error, cap, "csr_packed_rows: unsupported dtype %d (or not in this build)", p->dtype);
    return 1;
  }
  PackedRows f;
  const char* why = nullptr;
  if (!BuildPackedRows(p->rows, p->cols, p->row_offsets, p->col_indices, &f, &why)) {
    snprintf(error, cap, "csr_packed_rows: %s (K = %lld)", why, static_cast<long long>(p->cols));
    return 1;
  }
  State* s = new State;
  s->dtype = p->dtype;
  s->rows = static_cast<int>(p->rows);
  s->k = p->cols;
  cudaError_t err = cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount, p->device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&s->max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (err == cudaSuccess) {
    switch (p->dtype) {
      case SD_DTYPE_FP32: if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) err = ConfigureSharedB<float>(s->max_smem); break;
      case SD_DTYPE_FP16: if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) err = ConfigureSharedB<__half>(s->max_smem); break;
      default: if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) err = ConfigureSharedB<__nv_bfloat16>(s->max_smem); break;
    }
  }
  if (err == cudaSuccess) err = cudaMalloc(&s->row_first, sizeof(int64_t) * f.first.size());
  if (err == cudaSuccess) err = cudaMalloc(&s->row_len, sizeof(int) * f.len.size());
  if (err == cudaSuccess) err = cudaMalloc(&s->cols, sizeof(uint16_t) * f.cols.size());
  if (err == cudaSuccess)
    err = cudaMemcpy(s->row_first, f.first.data(), sizeof(int64_t) * f.first.size(), cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(s->row_len, f.len.data(), sizeof(int) * f.len.size(), cudaMemcpyHostToDevice);
  if (err == cudaSuccess)
    err = cudaMemcpy(s->cols, f.cols.data(), sizeof(uint16_t) * f.cols.size(), cudaMemcpyHostToDevice);
  if (err == cudaSuccess) {
    switch (p->dtype) {
      case SD_DTYPE_FP32: err = UploadValues<float>(p, f, &s->vals); break;
      case SD_DTYPE_FP16: err = UploadValues<__half>(p, f, &s->vals); break;
      default: err = UploadValues<__nv_bfloat16>(p, f, &s->vals); break;
    }
  }
  if (err != cudaSuccess) {
    snprintf(error, cap, "csr_packed_rows prepare: %s", cudaGetErrorString(err));
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
  cudaFree(s->row_first);
  cudaFree(s->row_len);
  cudaFree(s->cols);
  cudaFree(s->vals);
  delete s;
}
