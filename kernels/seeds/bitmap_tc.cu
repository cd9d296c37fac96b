// Seed: bitmap-compressed tiles of A on tensor cores, "load as sparse, compute as dense" (Flash-LLM, Xia et
// al., VLDB'24; SpInfer: the per-8x8 bitmap decoded straight into mma registers). For 50-90% unstructured
// sparsity in fp16/bf16, A moves 1/8 byte per element plus 2 bytes per nonzero, and the product runs dense on
// mma.sync m16n8k16 (fp32 accumulators): it pays where the product is memory bound (small n).
// prepare builds, for every row tile of 16 rows and every group of WARPS_K k-tiles of TILE_K columns, one
// contiguous record of 16-byte chunks: a header (uint16 start of each tile in the group, in chunks), then
// per tile its bitmaps (one uint64 per 8x8 sub-block, in the order the mma A fragment takes them: rows 0-7 /
// 8-15 of k 0-7, then of k 8-15, per 16 columns; bit 8*r+c) and its nonzero values in that order, padded to
// 16 bytes. goff[rt * groups + g] is the first chunk of record (rt, g). M and K are padded (with empty
// tiles) to whole row tiles (times WARPS_M) and whole groups.
// run: CTA = WARPS_M x WARPS_K warps; warp (wm, wk) owns row tile wm and k-tile wk of each group (split K
// inside the CTA, summed in shared memory at the end). Each stage copies the CTA's records and a
// (WARPS_K*TILE_K) x ncols tile of B into shared memory with cp.async; a lane decodes its A fragment
// registers from the bitmaps with popcounts, takes B fragments with ldmatrix.trans and issues mma.sync.
// When the grid alone cannot fill the GPU (small n), K is split over CTAs too (gridDim.z, contiguous group
// ranges): fp32 partials go to a workspace; each tile's last CTA sums them in split order (deterministic).
// sparseditto:seed families=[unstructured, file] dtypes=[fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define TILE_K 64   // sparseditto:tunable values=[32, 64]
#define N_TILE 128  // sparseditto:tunable values=[16, 32, 64, 128]
#define WARPS_M 2   // sparseditto:tunable values=[1, 2, 4]
#define WARPS_K 4   // sparseditto:tunable values=[1, 2, 4]
#define STAGES 3    // sparseditto:tunable values=[2, 3, 4]
#define SPLIT_CTAS_PER_SM 2  // sparseditto:tunable values=[2, 4, 8]

namespace {
constexpr int kThreads = WARPS_M * WARPS_K * 32;
constexpr int kGroupK = WARPS_K * TILE_K;          // columns of A (rows of B) per pipeline stage
constexpr int kBitmapsPerTile = 16 * TILE_K / 64;  // 8x8 sub-blocks of a 16 x TILE_K tile
constexpr int kBitmapChunks = kBitmapsPerTile * 8 / 16;
static_assert(TILE_K % 16 == 0 && N_TILE % 16 == 0, "whole m16n8k16 steps; B fragments 16 columns at a time");
static_assert(WARPS_K <= 8 && STAGES >= 2 && kThreads <= 1024, "8 tile starts a header; a pipeline; CTA size");
static_assert(1 + WARPS_K * (kBitmapChunks + 2 * TILE_K) < 65536, "tile starts fit the uint16 group header");

inline int CeilDiv(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }
// K splits over CTAs for a grid of row_ctas x n_tiles CTAs on sm_count SMs: the nearest to SPLIT_CTAS_PER_SM
// CTAs per SM, at most groups / 2 (a split walks at least 2 groups); 1 when the grid alone is that large.
int ChooseSplits(int64_t row_ctas, int64_t n_tiles, int groups, int sm_count) {
  const int64_t ctas = std::max<int64_t>(1, row_ctas * n_tiles), want = int64_t{SPLIT_CTAS_PER_SM} * sm_count;
  const int64_t nearest = (2 * want + ctas) / (2 * ctas);  // round(want / ctas)
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({nearest, groups / 2, 65535})));
}
// Split z walks groups [SplitBegin(z), SplitBegin(z + 1)); split sizes differ by at most one.
__host__ __device__ inline int SplitBegin(int z, int splits, int groups) {
  return static_cast<int>(int64_t{z} * groups / splits);
}
// Workspace float of split z's partial of output tile `tile`: accumulator r of n8 step j of lane `lane` of
// row tile wm. A split's partial is WARPS_M * 16 * ncols floats; a tile's splits are contiguous.
__host__ __device__ inline size_t WsIndex(size_t tile, int z, int splits, int wm, int ncols, int j, int r, int lane) {
  return ((tile * splits + z) * WARPS_M + wm) * (size_t{16} * ncols) + j * 128 + r * 32 + lane;
}
__host__ __device__ inline int Popcount64(uint64_t x) {
#ifdef __CUDA_ARCH__
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}
// The two elements lane `lane` holds of an 8x8 sub-block in an mma A fragment register (positions 2*lane
// and 2*lane+1 of the row-major sub-block; low half = lower position). `values` are the sub-block's packed
// nonzeros in position order.
__host__ __device__ inline uint32_t LanePair(uint64_t bitmap, const uint16_t* values, int lane) {
  const int bit = 2 * lane;
  int index = Popcount64(bitmap & ((uint64_t{1} << bit) - 1));
  uint32_t lo = 0, hi = 0;
  if ((bitmap >> bit) & 1) lo = values[index++];
  if ((bitmap >> (bit + 1)) & 1) hi = values[index];
  return lo | (hi << 16);
}
template <bool kBf16>
__host__ __device__ inline uint16_t ToBits(float v) {
  if constexpr (kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  return __half_as_ushort(__float2half_rn(v));
}
// Sub-block of the tile that holds (r, c), r < 16, c < TILE_K; and the bit inside it.
inline int SubBlockOf(int r, int c) { return (c / 16) * 4 + (c % 16) / 8 * 2 + r / 8; }
inline int BitOf(int r, int c) { return (r % 8) * 8 + c % 8; }

// ---- host: the format ---------------------------------------------------------------------------
struct BitmapFormat {
  int row_tiles = 0;  // multiple of WARPS_M
  int groups = 0;     // per row tile; groups * kGroupK >= cols
  std::vector<uint16_t> data;  // 16-byte chunks of 8 uint16
  std::vector<uint32_t> goff;  // row_tiles * groups + 1 chunk offsets
  uint32_t max_group_chunks = 0;
};

// `bits` holds the nnz values already in the 16-bit dtype. False (with *error) on sizes out of range.
bool BuildBitmapFormat(int64_t rows, int64_t cols, const int32_t* row_offsets, const int32_t* col_indices,
                       const uint16_t* bits, BitmapFormat* f, std::string* error) {
  if (rows < 1 || cols < 1 || rows > (int64_t{1} << 30) || cols > (int64_t{1} << 30))
    return (*error = "matrix size out of range", false);
  *f = BitmapFormat{CeilDiv(CeilDiv(rows, 16), WARPS_M) * WARPS_M, CeilDiv(cols, kGroupK)};
  std::vector<uint64_t> bm(static_cast<size_t>(f->groups) * WARPS_K * kBitmapsPerTile);  // of the row tile
  std::vector<size_t> start(bm.size());  // first value (uint16 index in data) of each sub-block
  for (int rt = 0; rt < f->row_tiles; ++rt) {
    const int64_t r0 = int64_t{rt} * 16, r1 = std::min<int64_t>(r0 + 16, rows);  // r1 <= r0: padding tile
    std::fill(bm.begin(), bm.end(), 0);
    for (int64_t r = r0; r < r1; ++r)
      for (int32_t e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
        const int c = col_indices[e];
        bm[size_t(c / TILE_K) * kBitmapsPerTile + SubBlockOf(r - r0, c % TILE_K)] |=
            uint64_t{1} << BitOf(r - r0, c % TILE_K);
      }
    for (int g = 0; g < f->groups; ++g) {
      const size_t first = f->data.size();
      f->goff.push_back(static_cast<uint32_t>(first / 8));
      f->data.resize(first + 8, 0);  // header
      for (int w = 0; w < WARPS_K; ++w) {
        const size_t tile = static_cast<size_t>(g) * WARPS_K + w;
        f->data[first + w] = static_cast<uint16_t>((f->data.size() - first) / 8);
        const size_t at = f->data.size();
        f->data.resize(at + kBitmapChunks * 8, 0);
        size_t nnz = 0;
        for (int s = 0; s < kBitmapsPerTile; ++s) {
          const uint64_t b = bm[tile * kBitmapsPerTile + s];
          std::memcpy(&f->data[at + s * 4], &b, sizeof(b));
          start[tile * kBitmapsPerTile + s] = at + kBitmapChunks * 8 + nnz;
          nnz += Popcount64(b);
        }
        f->data.resize(f->data.size() + (nnz + 7) / 8 * 8, 0);
      }
      f->max_group_chunks = std::max(f->max_group_chunks, static_cast<uint32_t>((f->data.size() - first) / 8));
    }
    for (int64_t r = r0; r < r1; ++r)  // values, at the rank of their bit in the sub-block
      for (int32_t e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
        const int c = col_indices[e], bit = BitOf(r - r0, c % TILE_K);
        const size_t sb = size_t(c / TILE_K) * kBitmapsPerTile + SubBlockOf(r - r0, c % TILE_K);
        f->data[start[sb] + Popcount64(bm[sb] & ((uint64_t{1} << bit) - 1))] = bits[e];
      }
    if (f->data.size() / 8 > 0xFFFFFFF0u) return (*error = "format larger than 64 GiB", false);
  }
  f->goff.push_back(static_cast<uint32_t>(f->data.size() / 8));
  return true;
}

// ---- device ---------------------------------------------------------------------------------------
struct Params {
  const uint4* data;
  const uint32_t* goff;
  const uint16_t* b;  // fp16 / bf16 bits, like c
  uint16_t* c;
  float* ws;      // split K (gridDim.z > 1): the partials, see WsIndex
  int* counters;  // split K: per output tile, how many splits are done (0 between launches)
  int rows, cols, n, ncols, groups, region_chunks;
  bool vector_b, pair_c;  // B rows copied 16 bytes at a time (n % 8 == 0, B 16-byte aligned); C two values at
                          // a time (n even, C 4-byte aligned)
};

__device__ __forceinline__ uint32_t SharedAddress(const void* p) { return __cvta_generic_to_shared(p); }
// 16-byte async copy; fills zeros when !valid (src-size 0: nothing is read).
__device__ __forceinline__ void CpAsync16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending)); }
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4], const uint16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SharedAddress(p)));
}
#define MMA_ASM(TY)                                                                                          \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, " \
               "{%0,%1,%2,%3};"                                                                                \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
template <bool kBf16>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (kBf16) MMA_ASM("bf16");
  else MMA_ASM("f16");
}
// Shared memory: [goff table: WARPS_M x (groups+1)] [A: STAGES x WARPS_M regions] [B: STAGES x kGroupK x ldb].
__host__ __device__ inline int TableBytes(int groups) { return (WARPS_M * (groups + 1) * 4 + 15) / 16 * 16; }
__host__ __device__ inline int BStageElems(int ncols) { return kGroupK * (ncols + 8); }

// Role: copy group g of the CTA's row tiles and the matching B rows into stage `buf`.
__device__ void LoadStage(const Params& p, const uint32_t* table, uint4* sa, uint16_t* sb, int g, int buf,
                          int n0) {
  for (int w = 0; w < WARPS_M; ++w) {
    const uint32_t first = table[w * (p.groups + 1) + g];
    const int count = static_cast<int>(table[w * (p.groups + 1) + g + 1] - first);
    uint4* dst = sa + (buf * WARPS_M + w) * p.region_chunks;
    for (int i = threadIdx.x; i < count; i += kThreads) CpAsync16(dst + i, p.data + first + i, true);
  }
  const int k0 = g * kGroupK, ldb = p.ncols + 8;
  uint16_t* dst = sb + buf * BStageElems(p.ncols);
  if (p.vector_b) {
    const int per_row = p.ncols / 8;
    for (int i = threadIdx.x; i < kGroupK * per_row; i += kThreads) {
      const int r = i / per_row, col = n0 + (i % per_row) * 8, k = k0 + r;
      const bool ok = k < p.cols && col < p.n;
      CpAsync16(dst + r * ldb + (i % per_row) * 8, ok ? p.b + static_cast<size_t>(k) * p.n + col : p.b, ok);
    }
  } else {
    for (int i = threadIdx.x; i < kGroupK * p.ncols; i += kThreads) {
      const int r = i / p.ncols, col = n0 + i % p.ncols, k = k0 + r;
      dst[r * ldb + i % p.ncols] = (k < p.cols && col < p.n) ? p.b[static_cast<size_t>(k) * p.n + col] : 0;
    }
  }
}

// Role: this warp's tile of stage `buf`: decode A fragments from the bitmaps, mma against B.
template <bool kBf16>
__device__ void ComputeStage(const Params& p, const uint4* sa, const uint16_t* sb, int buf, int wm, int wk,
                             int lane, float (&acc)[N_TILE / 8][4]) {
  const unsigned char* region = reinterpret_cast<const unsigned char*>(sa + (buf * WARPS_M + wm) * p.region_chunks);
  const unsigned char* tile = region + reinterpret_cast<const uint16_t*>(region)[wk] * 16;
  const uint64_t* bitmaps = reinterpret_cast<const uint64_t*>(tile);
  const uint16_t* values = reinterpret_cast<const uint16_t*>(tile + kBitmapChunks * 16);
  const int ldb = p.ncols + 8;
  const uint16_t* bs = sb + buf * BStageElems(p.ncols) + wk * TILE_K * ldb;
  int base = 0;
#pragma unroll
  for (int kb = 0; kb < TILE_K / 16; ++kb) {
    uint32_t a[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint64_t bm = bitmaps[kb * 4 + s];
      a[s] = LanePair(bm, values + base, lane);
      base += Popcount64(bm);
    }
#pragma unroll
    for (int jp = 0; jp < N_TILE / 16; ++jp) {
      if (jp * 16 >= p.ncols) break;
      uint32_t b[4];
      LdMatrixX4Trans(b, bs + (kb * 16 + (lane & 15)) * ldb + jp * 16 + (lane >> 4) * 8);
      Mma<kBf16>(acc[2 * jp], a, b[0], b[1]);
      Mma<kBf16>(acc[2 * jp + 1], a, b[2], b[3]);
    }
  }
}

template <bool kBf16>
__device__ __forceinline__ void StorePair(const Params& p, int row, int col, float v0, float v1) {
  if (row >= p.rows || col >= p.n) return;
  uint16_t* out = p.c + static_cast<size_t>(row) * p.n + col;
  const uint16_t h0 = ToBits<kBf16>(v0), h1 = ToBits<kBf16>(v1);
  if (p.pair_c) return void(*reinterpret_cast<uint32_t*>(out) = h0 | (uint32_t{h1} << 16));
  out[0] = h0;
  if (col + 1 < p.n) out[1] = h1;
}
template <class F>  // f(j, r) for accumulator r of each n8 step j the n tile has
__device__ __forceinline__ void ForEachAcc(int ncols, F f) {
#pragma unroll
  for (int j = 0; j < N_TILE / 8; ++j)
    if (j * 8 < ncols)
#pragma unroll
      for (int r = 0; r < 4; ++r) f(j, r);
}
// Role: sum the WARPS_K partial tiles in shared memory (fixed order); under split K write this split's sum
// to the workspace, and the tile's last CTA sums all splits in split order. Store C.
template <bool kBf16>
__device__ void ReduceAndStore(const Params& p, float* red, int wm, int wk, int lane, float (&acc)[N_TILE / 8][4]) {
  auto slot = [&](int w, int j, int r) -> float& {  // warp (wm, w > 0)'s accumulator in shared memory
    return red[((w - 1) * WARPS_M + wm) * (N_TILE * 16) + j * 128 + r * 32 + lane];
  };
  if (WARPS_K > 1) {
    if (wk > 0) ForEachAcc(p.ncols, [&](int j, int r) { slot(wk, j, r) = acc[j][r]; });
    __syncthreads();
    for (int w = 1; w < WARPS_K && wk == 0; ++w) ForEachAcc(p.ncols, [&](int j, int r) { acc[j][r] += slot(w, j, r); });
  }
  if (gridDim.z > 1) {  // every thread reaches both barriers
    const size_t tile = static_cast<size_t>(blockIdx.y) * gridDim.x + blockIdx.x;
    const size_t stride = WsIndex(0, 1, 1, 0, p.ncols, 0, 0, 0);  // from split z to z + 1
    float* part = p.ws + WsIndex(tile, 0, gridDim.z, wm, p.ncols, 0, 0, lane);
    if (wk == 0) ForEachAcc(p.ncols, [&](int j, int r) { part[blockIdx.z * stride + j * 128 + r * 32] = acc[j][r]; });
    __threadfence();  // this split's partial is visible GPU-wide before its count is
    __syncthreads();
    int last = 0;
    if (threadIdx.x == 0) {
      last = atomicAdd(p.counters + tile, 1) == static_cast<int>(gridDim.z) - 1;
      if (last) p.counters[tile] = 0;  // every split has counted: re-armed for the next launch
    }
    if (!__syncthreads_or(last)) return;
    __threadfence();
    if (wk == 0) ForEachAcc(p.ncols, [&](int j, int r) {
      float sum = 0.0f;  // in split order, whichever CTA came last: deterministic
      for (unsigned z = 0; z < gridDim.z; ++z) sum += __ldcg(part + z * stride + j * 128 + r * 32);
      acc[j][r] = sum;
    });
  }
  if (wk > 0) return;
  const int row = (blockIdx.x * WARPS_M + wm) * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < N_TILE / 8; ++j) {
    if (j * 8 >= p.ncols) break;
    const int col = blockIdx.y * p.ncols + j * 8 + (lane % 4) * 2;
    StorePair<kBf16>(p, row, col, acc[j][0], acc[j][1]);
    StorePair<kBf16>(p, row + 8, col, acc[j][2], acc[j][3]);
  }
}

template <bool kBf16>
__global__ void __launch_bounds__(kThreads) BitmapSpmm(Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x % 32, wm = (threadIdx.x / 32) % WARPS_M, wk = threadIdx.x / 32 / WARPS_M;
  const int n0 = blockIdx.y * p.ncols, g0 = SplitBegin(blockIdx.z, gridDim.z, p.groups);
  const int count = SplitBegin(blockIdx.z + 1, gridDim.z, p.groups) - g0;  // this split's groups g0..
  uint32_t* table = reinterpret_cast<uint32_t*>(smem);  // entries g0..g0+count of each row tile are loaded
  uint4* sa = reinterpret_cast<uint4*>(smem + TableBytes(p.groups));
  uint16_t* sb = reinterpret_cast<uint16_t*>(sa + STAGES * WARPS_M * p.region_chunks);
  for (int i = threadIdx.x; i < WARPS_M * (count + 1); i += kThreads) {
    const int w = i / (count + 1), g = g0 + i % (count + 1);
    table[w * (p.groups + 1) + g] = p.goff[static_cast<size_t>(blockIdx.x * WARPS_M + w) * p.groups + g];
  }
  __syncthreads();
  float acc[N_TILE / 8][4] = {};
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < count) LoadStage(p, table, sa, sb, g0 + s, s, n0);
    CpAsyncCommit();
  }
  for (int i = 0; i < count; ++i) {
    CpAsyncWait<STAGES - 2>();
    __syncthreads();  // stage i visible to all; stage i-1 consumed by all
    if (i + STAGES - 1 < count) LoadStage(p, table, sa, sb, g0 + i + STAGES - 1, (i + STAGES - 1) % STAGES, n0);
    CpAsyncCommit();
    ComputeStage<kBf16>(p, sa, sb, i % STAGES, wm, wk, lane, acc);
  }
  CpAsyncWait<0>();
  __syncthreads();  // shared memory is reused for the reduction
  ReduceAndStore<kBf16>(p, reinterpret_cast<float*>(smem), wm, wk, lane, acc);
}

// ---- host: ABI ------------------------------------------------------------------------------------
struct State {
  bool bf16 = false;
  int rows = 0, cols = 0, groups = 0, region_chunks = 0, max_smem = 0, sms = 1;
  uint4* data = nullptr;
  uint32_t* goff = nullptr;
  float* ws = nullptr;      // split K: ws_floats floats, for the largest split plan of the n_values, and
  int* counters = nullptr;  // `tiles` counters (0 between launches); launches that overlap on the GPU would race
  size_t ws_floats = 0, tiles = 0;
};
size_t SmemBytes(const State* s, int ncols) {
  const size_t pipeline = TableBytes(s->groups) + size_t{STAGES} * WARPS_M * s->region_chunks * 16 +
                          size_t{STAGES} * BStageElems(ncols) * 2;
  const size_t reduce = size_t{WARPS_K - 1} * WARPS_M * N_TILE * 16 * 4;  // ReduceAndStore's slots
  return std::max(pipeline, reduce);
}
using KernelFn = void (*)(Params);
KernelFn Kernel(bool bf16) {
  KernelFn f = nullptr;  // a dtype left out of this build never gets past prepare
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (bf16) f = BitmapSpmm<true>;
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (!bf16) f = BitmapSpmm<false>;
  return f;
}

// How run(n) launches: the widest n tile (a multiple of 16, at most N_TILE) whose pipeline fits in shared
// memory; grid row CTAs x n tiles x K splits; the workspace floats the splits need. False: n cannot run.
struct Plan { int ncols = 16; dim3 grid; size_t smem = 0, ws_floats = 0; };
bool MakePlan(const State* s, int64_t n, Plan* plan) {
  if (n < 1 || n > (int64_t{1} << 30)) return false;
  plan->ncols = std::min<int>(N_TILE, CeilDiv(n, 16) * 16);
  while (plan->ncols > 16 && SmemBytes(s, plan->ncols) > static_cast<size_t>(s->max_smem)) plan->ncols -= 16;
  plan->smem = SmemBytes(s, plan->ncols);
  const int row_ctas = CeilDiv(CeilDiv(s->rows, 16), WARPS_M), n_tiles = CeilDiv(n, plan->ncols);
  const int splits = ChooseSplits(row_ctas, n_tiles, s->groups, s->sms);
  plan->grid = dim3(row_ctas, n_tiles, splits);
  plan->ws_floats = splits > 1 ? size_t{16} * WARPS_M * plan->ncols * row_ctas * n_tiles * splits : 0;
  return plan->smem <= static_cast<size_t>(s->max_smem) && n_tiles <= 65535;
}
}  // namespace

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->data), cudaFree(s->goff), cudaFree(s->ws), cudaFree(s->counters);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  const bool bf16 = p->dtype == SD_DTYPE_BF16, supported = (bf16 || p->dtype == SD_DTYPE_FP16) && SPARSEDITTO_BUILDS_DTYPE(p->dtype);
  std::vector<uint16_t> bits(supported ? p->nnz : 0);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = bf16 ? ToBits<true>(p->values[i]) : ToBits<false>(p->values[i]);
  BitmapFormat f;
  std::string why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  if (!supported || !BuildBitmapFormat(p->rows, p->cols, p->row_offsets, p->col_indices, bits.data(), &f, &why)) {
    snprintf(error, cap, "bitmap_tc prepare: %s", why.c_str());
    return 1;
  }
  State* s = new State{bf16, static_cast<int>(p->rows), static_cast<int>(p->cols), f.groups,
                       static_cast<int>(f.max_group_chunks)};
  cudaError_t err = cudaDeviceGetAttribute(&s->max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, p->device);
  if (err == cudaSuccess) err = cudaMalloc(&s->data, f.data.size() * sizeof(uint16_t));
  if (err == cudaSuccess) err = cudaMalloc(&s->goff, f.goff.size() * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMemcpy(s->data, f.data.data(), f.data.size() * 2, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(s->goff, f.goff.data(), f.goff.size() * 4, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaFuncSetAttribute(Kernel(bf16), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     s->max_smem);
  for (int i = 0; err == cudaSuccess && i < p->num_n_values; ++i) {  // workspace for the largest split plan
    Plan plan;
    if (!MakePlan(s, p->n_values[i], &plan) || plan.grid.z == 1) continue;
    s->ws_floats = std::max(s->ws_floats, plan.ws_floats);
    s->tiles = std::max(s->tiles, size_t{plan.grid.x} * plan.grid.y);
  }
  if (err == cudaSuccess && s->ws_floats > 0) err = cudaMalloc(&s->ws, s->ws_floats * sizeof(float));
  if (err == cudaSuccess && s->tiles > 0) err = cudaMalloc(&s->counters, s->tiles * sizeof(int));
  if (err == cudaSuccess && s->tiles > 0) err = cudaMemset(s->counters, 0, s->tiles * sizeof(int));
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess || SmemBytes(s, 16) > static_cast<size_t>(s->max_smem)) {
    snprintf(error, cap, "bitmap_tc prepare: %s (shared memory: %zu bytes needed, %d available)",
             cudaGetErrorString(err), SmemBytes(s, 16), s->max_smem);
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  Plan plan;
  if (!MakePlan(s, n, &plan)) return 1;
  // An n prepare did not size the workspace for (not in n_values) runs unsplit.
  if (plan.ws_floats > s->ws_floats || size_t{plan.grid.x} * plan.grid.y > s->tiles) plan.grid.z = 1;
  Params p{s->data, s->goff, static_cast<const uint16_t*>(b), static_cast<uint16_t*>(c), s->ws, s->counters,
           s->rows, s->cols, static_cast<int>(n), plan.ncols, s->groups, s->region_chunks,
           n % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0,
           n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0};
  Kernel(s->bf16)<<<plan.grid, kThreads, plan.smem, stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
