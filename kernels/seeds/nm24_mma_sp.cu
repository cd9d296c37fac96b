// 2:4 SpMM on the sparse tensor cores: mma.sp::ordered_metadata.m16n8k32 (fp16/bf16, fp32 accumulate).
// Strategy: the CUTLASS / cuSPARSELt sparse GEMM on warp-level MMA. prepare compresses A to K/2 values a
// row (two kept values per aligned group of four; fewer nonzeros get explicit zeros, so 1:4 works) plus
// 2-bit indices, stored in the order the instruction consumes them (as SpInfer / Flash-LLM do): per 16 x 32
// tile the 16x16 compressed values lane by lane (a lane's a0..a3 = 16 contiguous bytes); per two tiles a
// 128-byte metadata record where lane (g, t<2) finds a uint2 of its selector-0 words. A CTA computes
// BM x BN of C over K tiles of 64: a STAGES-deep (SMALL_STAGES for the small-n tile) cp.async pipeline stages A tiles, metadata and the 64 x BN
// slab of B (XOR-swizzled); A fragments are one 16-byte shared load, B one ldmatrix.x4.trans per 8
// columns. Tiles: 64 x 16 for n <= SMALL_N_MAX, else BM x BN; split-K over CTAs (fp32 partials summed in
// split order by each tile's last CTA: deterministic) when there are too few tiles. Edges: M padded
// to 128, K to 64 (zero values, valid metadata); B rows >= K, columns >= n zero-filled in shared memory;
// n % 8 != 0 or unaligned B: guarded scalar path.
// sparseditto:seed families=[n_m] nm=[2:4] dtypes=[fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>
#define BM 128                // sparseditto:tunable values=[64, 128]
#define BN 128                // sparseditto:tunable values=[64, 128]
#define WARPS_M 2             // sparseditto:tunable values=[2, 4]
#define WARPS_N 4             // sparseditto:tunable values=[2, 4]
#define STAGES 3              // sparseditto:tunable values=[2, 3, 4]
#define SMALL_STAGES 6        // sparseditto:tunable values=[3, 4, 6, 8]
#define SMALL_N_MAX 32        // sparseditto:tunable values=[16, 32, 64]
#define SPLIT_CTAS_PER_SM 4   // sparseditto:tunable values=[2, 4, 8]
static_assert(STAGES >= 2 && SMALL_STAGES >= 2, "double buffering at least");

namespace {
constexpr int kMPad = 128;  // rows padded to this (>= every BM)
constexpr int kBk = 64;     // logical K per pipeline stage: two m16n8k32 steps, one metadata record

template <int BM_, int BN_, int WM_, int WN_, int STAGES_>
struct Tile {
  static constexpr int kStages = STAGES_, kBm = BM_, kBn = BN_, kWn = WN_, kThreads = 32 * WM_ * WN_;
  static constexpr int kWtm = BM_ / WM_, kWtn = BN_ / WN_, kMi = kWtm / 16, kNi = kWtn / 8;
  static constexpr int kAElems = BM_ * kBk / 2, kMetaWords = (BM_ / 16) * 32, kBElems = kBk * BN_;  // per stage
  static constexpr size_t kSmem = STAGES_ * (2 * (kAElems + kBElems) + 4 * kMetaWords);
  static_assert(kWtm % 16 == 0 && kWtn % 8 == 0 && kMi >= 1 && kNi >= 1 && kMPad % BM_ == 0, "whole mma tiles");
};
using SmallTile = Tile<64, 16, 4, 1, SMALL_STAGES>;  // deep: a small-n CTA walks few K tiles, all in flight
using BigTile = Tile<BM, BN, WARPS_M, WARPS_N, STAGES>;
// ---- layouts shared by prepare and the kernel (host + device) ----------------------------------
// Compressed values: tile (mt, kc) = rows 16mt.., logical columns 32kc..; 256 values, lane-major.
__host__ __device__ __forceinline__ int64_t ValTile(int64_t mt, int64_t kc, int64_t kchunks) { return (mt * kchunks + kc) * 256; }
// In a tile lane 4g+t holds a0 = (row g, cc 2t..2t+1), a1 = (row g+8, same cc), a2 = (row g, cc 2t+8..),
// a3 = (row g+8, cc 2t+8..); cc = compressed column 0..15 = group cc/2 of the tile, kept value cc%2.
__host__ __device__ __forceinline__ int ValInTile(int r16, int cc) {
  const int g = r16 & 7, lane = 4 * g + ((cc & 7) >> 1), reg = (r16 >> 3) + 2 * (cc >> 3);
  return lane * 8 + reg * 2 + (cc & 1);
}
// Metadata: record (mt, kc/2) of 32 words; word ((g*2 + sel)*2 + kc%2) is lane (g, t=sel)'s operand for
// tile kc: bits 0-15 row g, bits 16-31 row g+8, logical columns 16*sel..16*sel+15 of the tile, 4 bits a
// group (low 2 bits: index of the first kept value, next 2: the second).
__host__ __device__ __forceinline__ int64_t MetaRecord(int64_t mt, int64_t kpair, int64_t kpairs) { return (mt * kpairs + kpair) * 32; }
__host__ __device__ __forceinline__ int MetaLaneWord(int lane) { return ((lane >> 2) * 2 + (lane & 1)) * 2; }
__device__ __forceinline__ uint32_t SmemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, int src_bytes) {  // dst: a shared address (SmemAddr)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void LdmX4T(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SmemAddr(p)) : "memory");
}
// D += A(16x32, 2:4 compressed to 16x16) * B(32x8); b_j holds k = 8j + 2t + {0,1}, n = g; selector 0.
// (::ordered_metadata needs CUDA >= 12.5; indices within a group are always increasing here.)
#define SD_MMA_SP_ASM(TY, d, a, b, e)                                                                   \
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32." TY "." TY ".f32 "              \
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;\n"                     \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                           \
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e))
template <typename T>
__device__ __forceinline__ void MmaSp(float (&d)[4], const uint4& a, const uint32_t (&b)[4], uint32_t e) {
  if constexpr (std::is_same<T, __half>::value) SD_MMA_SP_ASM("f16", d, a, b, e);
  else SD_MMA_SP_ASM("bf16", d, a, b, e);
}
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ uint32_t Bits(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ uint32_t Bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
// Swizzled 16-byte chunk c of row r in a B slab with CPR chunks per row (conflict-free ldmatrix).
template <int CPR>
__host__ __device__ __forceinline__ int SwzChunk(int r, int c) {
  if constexpr (CPR >= 8) return r * CPR + (c ^ (r & 7));
  const int lin = r * CPR + c;  // rows shorter than 128 bytes: swizzle within each 128-byte line
  return lin ^ ((lin >> 3) & 7);
}
// Per-lane shared-memory offsets a warp reads for k32 step q of a stage (A: 16 bytes = a0..a3; metadata:
// a uint2, .x for q = 0, .y for q = 1; B: the row of ldmatrix.x4.trans, lane l -> k row 32q + l, so matrix
// j = k 8j..8j+7 = b_j), and where an accumulator lands in the CTA tile. Host + device: the CPU test
// replays them against the PTX definitions.
template <class TL> __host__ __device__ int AFragOffset(int warp, int mi, int q, int lane) {
  return (((warp / TL::kWn) * TL::kMi + mi) * 2 + q) * 256 + lane * 8;
}
template <class TL> __host__ __device__ int MetaOffset(int warp, int mi, int lane) {
  return ((warp / TL::kWn) * TL::kMi + mi) * 32 + MetaLaneWord(lane);
}
template <class TL> __host__ __device__ __forceinline__ int BFragOffset(int warp, int ni, int q, int lane) {
  return SwzChunk<TL::kBn / 8>(q * 32 + lane, ((warp % TL::kWn) * TL::kWtn + ni * 8) / 8) * 8;
}
// Accumulator 2h + {0,1} of mma tile (mi, ni): C row lane/4 + 8h, columns 2*(lane%4) + {0,1}.
template <class TL> __host__ __device__ __forceinline__ void AccCoord(int warp, int lane, int mi, int ni, int h, int* r, int* c) {
  *r = (warp / TL::kWn) * TL::kWtm + mi * 16 + (lane >> 2) + 8 * h;
  *c = (warp % TL::kWn) * TL::kWtn + ni * 8 + 2 * (lane & 3);
}
struct Nm24Args {
  const void* vals; const uint32_t* meta; const void* b; void* c;
  float* ws;      // split-K partials [split][m][n], or null: write C
  int* counters;  // split-K: per tile, how many splits are done (0 between runs)
  int64_t m, k, n, kchunks;
  int ktiles, kt_per_split, pair_store /* n even, C 4-byte aligned */, vec /* n % 8 == 0, B 16-byte aligned */;
};
// A thread's 16-byte chunks of a stage: chunk t is i = t * kThreads + threadIdx.x of the values (kAChunks: 64 a row
// tile), the metadata (kMChunks: 8 a row tile) or B (kBChunks), t counted at compile time. With
// `for (i = threadIdx.x; i < N; i += kThreads)` the compiler could not bound the trip count and built general loops
// that recomputed each chunk's record, row, column and 64-bit offset for every K tile (dev/ptx_census/sass.py); here a
// thread's chunks are offsets fixed for the kernel (a thread's value chunks lie kThreads / 64 row tiles apart, its B
// chunks kRowStep rows apart in one column) and a K tile adds its own.
template <class TL> struct StagePlan {
  static constexpr int kAChunks = (TL::kBm / 16) * 64, kMChunks = (TL::kBm / 16) * 8, kBCpr = TL::kBn / 8, kBChunks = kBk * kBCpr;
  static constexpr int kA = (kAChunks + TL::kThreads - 1) / TL::kThreads, kM = (kMChunks + TL::kThreads - 1) / TL::kThreads;
  static constexpr int kB = (kBChunks + TL::kThreads - 1) / TL::kThreads, kRowStep = TL::kThreads / kBCpr;
  static constexpr int kATileStep = TL::kThreads / 64, kMTileStep = TL::kThreads / 8;  // row tiles between chunks t, t + 1
  static_assert(TL::kThreads % 64 == 0 && TL::kThreads % kBCpr == 0, "a thread's chunks a fixed stride apart");
  static __host__ __device__ __forceinline__ bool Has(int chunks, int t, int tid) { return chunks % TL::kThreads == 0 || t * TL::kThreads + tid < chunks; }
  static __host__ __device__ __forceinline__ int ATile(int t, int tid) { return tid / 64 + t * kATileStep; }  // row tile
  static __host__ __device__ __forceinline__ int MTile(int t, int tid) { return tid / 8 + t * kMTileStep; }
  static __host__ __device__ __forceinline__ int BRow(int t, int tid) { return tid / kBCpr + t * kRowStep; }
  static __host__ __device__ __forceinline__ int BCol(int tid) { return tid % kBCpr; }  // in chunks of 8
  int64_t a_src, m_src;  // chunk 0's value and metadata offsets for K tile 0 (a K tile adds 512 values, 32 words)
  int b_row;             // chunk 0's row of B's slab; 1 << 20 for columns past n
  int64_t b_src;         // chunk 0's element offset from the slab's first row (b_row * n + column)
};
template <class TL> __device__ __forceinline__ StagePlan<TL> MakeStagePlan(const Nm24Args& p, int mt0, int64_t n0) {
  using Plan = StagePlan<TL>;
  const int tid = static_cast<int>(threadIdx.x);
  Plan plan;
  plan.a_src = ValTile(mt0 + Plan::ATile(0, tid), 0, p.kchunks) + (tid % 64) * 8;
  plan.m_src = MetaRecord(mt0 + Plan::MTile(0, tid), 0, p.kchunks / 2) + (tid % 8) * 4;
  const int64_t col = n0 + Plan::BCol(tid) * 8;
  plan.b_row = col < p.n ? Plan::BRow(0, tid) : 1 << 20, plan.b_src = Plan::BRow(0, tid) * p.n + col;
  return plan;
}
template <typename T, class TL>
__device__ __forceinline__ void LoadStage(const Nm24Args& p, uint32_t sa, uint32_t sm, T* sb, int kt, int64_t n0, const StagePlan<TL>& plan) {
  using Plan = StagePlan<TL>;
  const int tid = static_cast<int>(threadIdx.x);
  const T* vals = static_cast<const T*>(p.vals) + plan.a_src + static_cast<int64_t>(kt) * 512;
#pragma unroll
  for (int t = 0; t < Plan::kA; ++t)  // chunk t: ATile rows further on, the same place in its tile
    if (Plan::Has(Plan::kAChunks, t, tid)) CpAsync16(sa + (t * TL::kThreads + tid) * 16, vals + static_cast<int64_t>(t * Plan::kATileStep) * p.kchunks * 256, 16);
  const uint32_t* meta = p.meta + plan.m_src + static_cast<int64_t>(kt) * 32;
#pragma unroll
  for (int t = 0; t < Plan::kM; ++t)
    if (Plan::Has(Plan::kMChunks, t, tid)) CpAsync16(sm + (t * TL::kThreads + tid) * 16, meta + static_cast<int64_t>(t * Plan::kMTileStep) * (p.kchunks / 2) * 32, 16);
  const T* b = static_cast<const T*>(p.b);
  const int64_t k0 = static_cast<int64_t>(kt) * kBk;
  if (p.vec) {  // n % 8 == 0: a chunk is wholly inside or wholly outside
    const T* rows = b + k0 * p.n;  // row k0 < K: a valid address for the zero-filled chunks
    const int rows_left = p.k - k0 < kBk ? static_cast<int>(p.k - k0) : kBk;
    const uint32_t sbu = SmemAddr(sb);
#pragma unroll
    for (int t = 0; t < Plan::kB; ++t) {
      if (!Plan::Has(Plan::kBChunks, t, tid)) continue;
      const bool in = plan.b_row + t * Plan::kRowStep < rows_left;
      CpAsync16(sbu + SwzChunk<Plan::kBCpr>(Plan::BRow(t, tid), Plan::BCol(tid)) * 16,
                in ? rows + plan.b_src + static_cast<int64_t>(t) * Plan::kRowStep * p.n : rows, in ? 16 : 0);
    }
    return;
  }
  constexpr int CPR = TL::kBn / 8;
  for (int i = threadIdx.x; i < kBk * CPR; i += TL::kThreads) {  // n % 8 != 0 or B unaligned: element by element
    const int r = i / CPR, c = i % CPR;
    const int64_t k = k0 + r, col = n0 + c * 8;
    const uint16_t* row = reinterpret_cast<const uint16_t*>(b) + (k < p.k ? k : 0) * p.n;
    alignas(16) uint16_t w[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) w[e] = (k < p.k && col + e < p.n) ? __ldg(row + col + e) : uint16_t(0);
    *reinterpret_cast<uint4*>(sb + SwzChunk<CPR>(r, c) * 8) = *reinterpret_cast<const uint4*>(w);
  }
}

template <typename T, class TL>
__device__ __forceinline__ void ComputeStage(const T* sa, const uint32_t* sm, const T* sb,
                                             float (&acc)[TL::kMi][TL::kNi][4]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint2 meta[TL::kMi];
#pragma unroll
  for (int mi = 0; mi < TL::kMi; ++mi) meta[mi] = *reinterpret_cast<const uint2*>(sm + MetaOffset<TL>(warp, mi, lane));
#pragma unroll
  for (int q = 0; q < 2; ++q) {  // the two k32 steps of the stage
    uint4 a[TL::kMi];
    uint32_t bf[TL::kNi][4];
#pragma unroll
    for (int mi = 0; mi < TL::kMi; ++mi) a[mi] = *reinterpret_cast<const uint4*>(sa + AFragOffset<TL>(warp, mi, q, lane));
#pragma unroll
    for (int ni = 0; ni < TL::kNi; ++ni) LdmX4T(bf[ni], sb + BFragOffset<TL>(warp, ni, q, lane));
#pragma unroll
    for (int t = 0; t < TL::kMi * TL::kNi; ++t) {
      const int mi = t / TL::kNi, ni = t % TL::kNi;
      MmaSp<T>(acc[mi][ni], a[mi], bf[ni], q ? meta[mi].y : meta[mi].x);
    }
  }
}

template <class TL, class F>  // f(row, col, mi, ni, h) for each accumulator pair inside C
__device__ __forceinline__ void ForEachAcc(const Nm24Args& p, int64_t row_base, int64_t n0, F f) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int t = 0; t < TL::kMi * TL::kNi * 2; ++t) {
    const int mi = t / (TL::kNi * 2), ni = (t / 2) % TL::kNi, h = t % 2;
    int r, c;
    AccCoord<TL>(warp, lane, mi, ni, h, &r, &c);
    if (row_base + r < p.m && n0 + c < p.n) f(row_base + r, n0 + c, mi, ni, h);
  }
}

// Writes C; under split-K writes this split's fp32 partial instead, and the tile's last CTA to finish
// sums the partials in split order (deterministic), writes C and re-arms the tile's counter.
template <typename T, class TL>
__device__ __forceinline__ void StoreTile(const Nm24Args& p, int64_t row_base, int64_t n0,
                                          const float (&acc)[TL::kMi][TL::kNi][4]) {
  auto store_c = [&](int64_t row, int64_t col, float x, float y) {
    T* out = static_cast<T*>(p.c) + row * p.n + col;
    if (p.pair_store) { *reinterpret_cast<uint32_t*>(out) = Bits(FromF<T>(x)) | (Bits(FromF<T>(y)) << 16); return; }
    out[0] = FromF<T>(x);
    if (col + 1 < p.n) out[1] = FromF<T>(y);
  };
  ForEachAcc<TL>(p, row_base, n0, [&](int64_t row, int64_t col, int mi, int ni, int h) {
    if (p.ws == nullptr) return store_c(row, col, acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
    float* out = p.ws + (blockIdx.z * p.m + row) * p.n + col;
    out[0] = acc[mi][ni][2 * h];
    if (col + 1 < p.n) out[1] = acc[mi][ni][2 * h + 1];
  });
  if (p.ws == nullptr) return;
  __shared__ int last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    int* counter = p.counters + blockIdx.y * gridDim.x + blockIdx.x;
    last = atomicAdd(counter, 1) == static_cast<int>(gridDim.z) - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  ForEachAcc<TL>(p, row_base, n0, [&](int64_t row, int64_t col, int, int, int) {
    float x = 0.0f, y = 0.0f;
    for (unsigned z = 0; z < gridDim.z; ++z) {
      const float* in = p.ws + (z * p.m + row) * p.n + col;
      x += __ldcg(in);
      if (col + 1 < p.n) y += __ldcg(in + 1);
    }
    store_c(row, col, x, y);
  });
}

template <typename T, class TL>
__global__ void __launch_bounds__(TL::kThreads) Nm24Kernel(Nm24Args p) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* sa = reinterpret_cast<T*>(smem);
  constexpr int kStages = TL::kStages;
  T* sb = sa + kStages * TL::kAElems;
  uint32_t* sm = reinterpret_cast<uint32_t*>(sb + kStages * TL::kBElems);
  const int mt0 = blockIdx.x * (TL::kBm / 16);
  const int64_t n0 = static_cast<int64_t>(blockIdx.y) * TL::kBn;
  const int kt0 = blockIdx.z * p.kt_per_split, count = min(p.ktiles, kt0 + p.kt_per_split) - kt0;
  float acc[TL::kMi][TL::kNi][4] = {};
  const StagePlan<TL> plan = MakeStagePlan<TL>(p, mt0, n0);
  auto load = [&](int j, int s) {  // K tile kt0 + j into stage s
    LoadStage<T, TL>(p, SmemAddr(sa + s * TL::kAElems), SmemAddr(sm + s * TL::kMetaWords), sb + s * TL::kBElems, kt0 + j, n0, plan);
  };
#pragma unroll
  for (int j = 0; j < kStages - 1; ++j) { if (j < count) load(j, j); CpAsyncCommit(); }
  for (int j = 0; j < count; ++j) {
    CpAsyncWait<kStages - 2>();
    __syncthreads();  // stage j landed for all; stage j-1 fully consumed, so it may be refilled
    if (j + kStages - 1 < count) load(j + kStages - 1, (j + kStages - 1) % kStages);
    CpAsyncCommit();
    const int s = j % kStages;
    ComputeStage<T, TL>(sa + s * TL::kAElems, sm + s * TL::kMetaWords, sb + s * TL::kBElems, acc);
  }
  StoreTile<T, TL>(p, static_cast<int64_t>(mt0) * 16, n0, acc);
}

// ---- host: compression + metadata (unit tested) ------------------------------------------------
struct Nm24Host {
  int64_t rows = 0, cols = 0, mp = 0, kp = 0;  // mp % 128 == 0, kp % 64 == 0
  std::vector<float> vals;                     // (mp/16) * (kp/32) tiles of 256, see ValTile/ValInTile
  std::vector<uint32_t> meta;                  // (mp/16) * (kp/64) records of 32 words, see MetaRecord
};
// Compresses canonical CSR; entries with value 0 are dropped. False when a group of four has more than
// two nonzeros or the input is malformed.
bool BuildNm24(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, Nm24Host* out,
               std::string* why) {
  if (rows <= 0 || cols <= 0) return (*why = "bad shape", false);
  out->rows = rows, out->cols = cols;
  out->mp = (rows + kMPad - 1) / kMPad * kMPad, out->kp = (cols + kBk - 1) / kBk * kBk;
  const int64_t kchunks = out->kp / 32, groups = out->kp / 4;  // every group defaults to indices (0, 1):
  out->vals.assign(out->mp / 16 * kchunks * 256, 0.0f);
  out->meta.assign(out->mp / 16 * (kchunks / 2) * 32, 0x44444444u);
  std::vector<int8_t> idx(groups * 2);  // per group of the current row: kept positions and values
  std::vector<float> kept(groups * 2);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(idx.begin(), idx.end(), -1);
    std::fill(kept.begin(), kept.end(), 0.0f);
    if (ro[r] > ro[r + 1]) return (*why = "row offsets decrease", false);
    for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
      if (ci[e] < 0 || ci[e] >= cols) return (*why = "column index out of range", false);
      if (v[e] == 0.0f) continue;
      const int64_t gi = ci[e] / 4;
      const int slot = idx[2 * gi] < 0 ? 0 : idx[2 * gi + 1] < 0 ? 1 : 2;
      if (slot == 2) return (*why = "more than 2 nonzeros in a group of 4 in row " + std::to_string(r), false);
      idx[2 * gi + slot] = static_cast<int8_t>(ci[e] % 4);  // CSR columns increase: idx0 < idx1
      kept[2 * gi + slot] = v[e];
    }
    const int64_t mt = r / 16;
    const int r16 = static_cast<int>(r % 16), g = r16 % 8, half = r16 / 8;
    for (int64_t gi = 0; gi < groups; ++gi) {
      int i0 = idx[2 * gi], i1 = idx[2 * gi + 1];
      if (i0 < 0) { i0 = 0; i1 = 1; }          // empty group: indices (0, 1), zeros
      else if (i1 < 0 && i0 < 3) { i1 = 3; }   // one nonzero: pair it with an explicit zero at 3
      else if (i1 < 0) { i0 = 2; i1 = 3; std::swap(kept[2 * gi], kept[2 * gi + 1]); }  // nonzero at 3: zero at 2
      const int64_t kc = gi / 8;
      const int j = static_cast<int>(gi % 8), sel = j / 4;
      out->vals[ValTile(mt, kc, kchunks) + ValInTile(r16, 2 * j)] = kept[2 * gi];
      out->vals[ValTile(mt, kc, kchunks) + ValInTile(r16, 2 * j + 1)] = kept[2 * gi + 1];
      uint32_t& word = out->meta[MetaRecord(mt, kc / 2, kchunks / 2) + MetaLaneWord(4 * g + sel) + kc % 2];
      const int shift = half * 16 + (j % 4) * 4;
      word = (word & ~(0xFu << shift)) | (static_cast<uint32_t>(i0 | (i1 << 2)) << shift);
    }
  }
  return true;
}
// How a run is cut: which tile instance, how many K splits (aiming at SPLIT_CTAS_PER_SM CTAs per SM while
// the fp32 partials stay under about half of A's bytes), K tiles per split, how many output tiles.
struct Plan { bool small = false; int splits = 1, kt_per_split = 1; int64_t tiles = 0; };
Plan MakePlan(int64_t rows, int64_t mp, int64_t kp, int64_t n, int sms, int64_t ws_floats, int64_t max_tiles) {
  Plan plan;
  plan.small = n <= SMALL_N_MAX;
  const int bm = plan.small ? SmallTile::kBm : BigTile::kBm, bn = plan.small ? SmallTile::kBn : BigTile::kBn;
  const int64_t tiles = (mp / bm) * ((n + bn - 1) / bn), ktiles = kp / kBk;
  int64_t splits = 1;
  if (tiles < static_cast<int64_t>(SPLIT_CTAS_PER_SM) * sms && tiles <= max_tiles) {
    splits = (static_cast<int64_t>(SPLIT_CTAS_PER_SM) * sms + tiles - 1) / tiles;
    splits = std::min(splits, std::max<int64_t>(1, kp * 9 / (128 * n)));  // partials <= ~half A's bytes
    splits = std::min<int64_t>({splits, std::max<int64_t>(1, ktiles / 2), 64});
    while (splits > 1 && splits * rows * n > ws_floats) --splits;  // bounded by the workspace
  }
  plan.tiles = tiles;
  plan.kt_per_split = static_cast<int>((ktiles + splits - 1) / splits);
  plan.splits = static_cast<int>((ktiles + plan.kt_per_split - 1) / plan.kt_per_split);
  return plan;
}
struct State {
  int dtype = 0, sms = 1;
  int64_t m = 0, k = 0, mp = 0, kp = 0, ws_floats = 0, max_tiles = 0;
  void* vals = nullptr; uint32_t* meta = nullptr; float* ws = nullptr; int* counters = nullptr;  // split-K
};
template <typename T, class TL> cudaError_t Configure(int optin) {
  if (TL::kSmem > static_cast<size_t>(optin)) return cudaErrorInvalidConfiguration;
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(&Nm24Kernel<T, TL>),
                              cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(TL::kSmem));
}
template <typename T> cudaError_t ConfigureAll(int optin) {
  const cudaError_t e = Configure<T, SmallTile>(optin);
  return e != cudaSuccess ? e : Configure<T, BigTile>(optin);
}
template <typename T, class TL> void LaunchTile(const Nm24Args& a, int64_t mp, int splits, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(mp / TL::kBm), static_cast<unsigned>((a.n + TL::kBn - 1) / TL::kBn), splits);
  Nm24Kernel<T, TL><<<grid, TL::kThreads, TL::kSmem, stream>>>(a);
}
template <typename T> void Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const Plan plan = MakePlan(s->m, s->mp, s->kp, n, s->sms, s->ws_floats, s->max_tiles);
  Nm24Args a{s->vals, s->meta, b, c, plan.splits > 1 ? s->ws : nullptr, s->counters, s->m, s->k, n, s->kp / 32,
             static_cast<int>(s->kp / kBk), plan.kt_per_split,
             (n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0) ? 1 : 0,
             (n % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0};
  if (plan.small) LaunchTile<T, SmallTile>(a, s->mp, plan.splits, stream);
  else LaunchTile<T, BigTile>(a, s->mp, plan.splits, stream);
}
template <typename T> cudaError_t Upload(const std::vector<T>& h, void** d) {
  cudaError_t e = cudaMalloc(d, sizeof(T) * h.size());
  return e == cudaSuccess ? cudaMemcpy(*d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice) : e;
}
template <typename T> cudaError_t UploadValues(const std::vector<float>& v, void** d) {
  std::vector<T> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = T(v[i]);  // round to nearest; exact for the harness's values
  return Upload(h, d);
}

}  // namespace

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->vals), cudaFree(s->meta), cudaFree(s->ws), cudaFree(s->counters);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  Nm24Host h;
  std::string why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  if ((p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) || !SPARSEDITTO_BUILDS_DTYPE(p->dtype) ||
      !BuildNm24(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, &h, &why)) {
    snprintf(error, cap, "nm24_mma_sp: %s", why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, 1, p->rows, p->cols, h.mp, h.kp};
  int optin = 0;
  cudaError_t e = cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  const bool fp16 = p->dtype == SD_DTYPE_FP16;
  if (e == cudaSuccess) e = fp16 ? UploadValues<__half>(h.vals, &s->vals) : UploadValues<__nv_bfloat16>(h.vals, &s->vals);
  if (e == cudaSuccess) e = Upload(h.meta, reinterpret_cast<void**>(&s->meta));
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && fp16) e = ConfigureAll<__half>(optin);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && !fp16) e = ConfigureAll<__nv_bfloat16>(optin);
  for (int i = 0; e == cudaSuccess && i < p->num_n_values; ++i) {  // workspace for the largest split-K plan
    const Plan plan = MakePlan(s->m, s->mp, s->kp, p->n_values[i], s->sms, INT64_MAX, INT64_MAX);
    if (plan.splits > 1) s->ws_floats = std::max(s->ws_floats, plan.splits * s->m * p->n_values[i]), s->max_tiles = std::max(s->max_tiles, plan.tiles);
  }
  if (e == cudaSuccess && s->ws_floats > 0) e = cudaMalloc(&s->ws, sizeof(float) * s->ws_floats);
  if (e == cudaSuccess && s->max_tiles > 0) e = cudaMalloc(&s->counters, sizeof(int) * s->max_tiles);
  if (e == cudaSuccess && s->max_tiles > 0) e = cudaMemset(s->counters, 0, sizeof(int) * s->max_tiles);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    snprintf(error, cap, "nm24_mma_sp prepare: %s", cudaGetErrorString(e));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  if (n < 1) return 1;
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (s->dtype == SD_DTYPE_FP16) Launch<__half>(s, b, c, n, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (s->dtype == SD_DTYPE_BF16) Launch<__nv_bfloat16>(s, b, c, n, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
