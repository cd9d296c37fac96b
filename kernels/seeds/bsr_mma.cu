// Block-sparse (BSR) SpMM on tensor cores: mma.sync.m16n8k16, fp16/bf16 operands, fp32 accumulators.
//
// Strategy: the block-sparse GEMM of Triton/OpenAI blocksparse and cuSPARSE bsrmm. A is re-blocked into
// BSR with square BLOCK x BLOCK dense blocks (BLOCK = the task's block size: 16, 32 or 64). One CTA owns
// one block-row x N_TILE columns of C and walks the nonzero blocks of its block-row: for each it stages
// the A block and the BLOCK x N_TILE slab of B (the rows of the block's column) into XOR-swizzled shared
// memory through a STAGES-deep (BIG_STAGES for the large-n tile) cp.async pipeline, reads fragments with
// ldmatrix (.trans for B) and issues mma.sync with fp32 accumulators; C is stored once, converted to the
// dtype: through a shared C tile in 16-byte row chunks when n % 8 == 0 and C is 16-byte aligned (whole
// 32-byte sectors instead of the fragments' scattered 4-byte stores; a small gain on block 32), else from the
// fragments. Block-rows
// are launched heaviest first (longest-processing-time order). For n <= SMALL_N_MAX a second instance with
// a 16-column tile and BLOCK/16 warps is used, for n <= MID_N_MAX a 64-column tile: at n = 128 a 128-column
// tile gives one CTA a block-row (64 CTAs for 4096 rows of block 64), too few for the SMs (docs/lab/seed_choices.md).
// prepare builds: block-row pointers, block-column indices, dense zero-padded blocks in the dtype (M and
// K padded up to a multiple of BLOCK), and the heaviest-first block-row order.
// Edges: B rows >= K and columns >= n are zero-filled in shared memory (cp.async src-size 0); when
// n % 8 != 0 or B is not 16-byte aligned the B slab goes through a guarded scalar path; C stores are
// guarded at M and n (pairs when n is even).
// sparseditto:seed families=[block] dtypes=[fp16, bf16] archs=[sm_80, sm_90] block_sizes=[16, 32, 64]
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>
#define N_TILE 128       // sparseditto:tunable values=[64, 128, 256]
#define WARPS 4          // sparseditto:tunable values=[4, 8]
#define STAGES 3         // sparseditto:tunable values=[2, 3, 4]
#define BIG_STAGES 2     // sparseditto:tunable values=[2, 3, 4]
#define SMALL_N_MAX 32   // sparseditto:tunable values=[0, 16, 32, 64]
#define MID_N_MAX 256    // sparseditto:tunable values=[0, 128, 256, 512]
static_assert(STAGES >= 2 && BIG_STAGES >= 2, "double buffering at least");

namespace {
// ---- tiling -------------------------------------------------------------------------------------
// CTA tile BLOCK x NT, warps WM x WN, warp tile (BLOCK/WM) x (NT/WN) of MI x NI mma tiles (16 x 8).
template <int BLOCK_, int NT_, int WM_, int WN_, int STAGES_>
struct Tile {
  static constexpr int kBlock = BLOCK_, kNt = NT_, kWn = WN_, kThreads = 32 * WM_ * WN_, kStages = STAGES_;
  static constexpr int kWtm = BLOCK_ / WM_, kWtn = NT_ / WN_, kMi = kWtm / 16, kNi = kWtn / 8;
  static constexpr int kAElems = BLOCK_ * BLOCK_, kBElems = BLOCK_ * NT_;
  static_assert(kWtm % 16 == 0 && kWtn % 8 == 0 && kMi >= 1 && kNi >= 1, "warp tile of whole mma tiles");
  static_assert(NT_ % 8 == 0 && BLOCK_ % 16 == 0, "16-byte chunks");
  static constexpr int kCRowBytes = NT_ * 2 + 16;  // C tile staged for the store; 16 bytes of pad: no bank conflicts
  static_assert(BLOCK_ * kCRowBytes <= STAGES_ * (kAElems + kBElems) * 2, "the C tile fits where the stages were");
};
// Two stages for the large-n tile, three for the others: each was the faster at its n (docs/lab/seed_choices.md).
template <int BLOCK> using BigTile = Tile<BLOCK, N_TILE, (BLOCK == 64 ? 2 : 1), WARPS / (BLOCK == 64 ? 2 : 1), BIG_STAGES>;
template <int BLOCK> using MidTile = Tile<BLOCK, 64, (BLOCK == 64 ? 2 : 1), WARPS / (BLOCK == 64 ? 2 : 1), STAGES>;
template <int BLOCK> using SmallTile = Tile<BLOCK, 16, BLOCK / 16, 1, STAGES>;

// Swizzled index of 16-byte chunk c of row r in a tile with CPR chunks per row: eight consecutive rows
// at one logical chunk land in eight different 128-byte bank groups (conflict-free ldmatrix).
template <int CPR>
__host__ __device__ __forceinline__ int SwzChunk(int r, int c) {
  if constexpr (CPR >= 8) return r * CPR + (c ^ (r & 7));
  const int lin = r * CPR + c;  // rows shorter than 128 bytes: swizzle within each 128-byte line
  return lin ^ ((lin >> 3) & 7);
}

// Per-lane shared-memory offsets (elements) a warp's ldmatrix.x4 reads, and where an accumulator lands
// in the CTA tile; host + device so the CPU test replays them against the PTX definitions. Lanes 0-15
// address rows 0..15 of a 16x16 sub-tile at its first 8-column chunk, lanes 16-31 at the second. A:
// regs = {rows 0-7 k 0-7, rows 8-15 k 0-7, rows 0-7 k 8-15, rows 8-15 k 8-15} = a0..a3. B (.trans, rows
// = k): regs = {k 0-7, k 8-15} x {n-tile ni, ni+1} = b0, b1 of ni then b0, b1 of ni+1.
template <class TL> __host__ __device__ __forceinline__ int AFragOffset(int warp, int mi, int kk, int lane) {
  return SwzChunk<TL::kBlock / 8>((warp / TL::kWn) * TL::kWtm + mi * 16 + (lane & 15), kk * 2 + (lane >> 4)) * 8;
}
template <class TL> __host__ __device__ __forceinline__ int BFragOffset(int warp, int ni, int kk, int lane) {
  return SwzChunk<TL::kNt / 8>(kk * 16 + (lane & 15), ((warp % TL::kWn) * TL::kWtn + ni * 8) / 8 + (lane >> 4)) * 8;
}
// ldmatrix.x4.trans registers -> {b0, b1} of n-tile ni and of ni + 1.
template <typename R> __host__ __device__ __forceinline__ void SplitX4(const R (&r)[4], R (&lo)[2], R (&hi)[2]) {
  lo[0] = r[0], lo[1] = r[1], hi[0] = r[2], hi[1] = r[3];
}
// Accumulator 2h + {0,1} of mma tile (mi, ni): C row lane/4 + 8h, columns 2*(lane%4) + {0,1}.
template <class TL> __host__ __device__ __forceinline__ void AccCoord(int warp, int lane, int mi, int ni, int h, int* r, int* c) {
  *r = (warp / TL::kWn) * TL::kWtm + mi * 16 + (lane >> 2) + 8 * h;
  *c = (warp % TL::kWn) * TL::kWtn + ni * 8 + 2 * (lane & 3);
}
// ---- device primitives --------------------------------------------------------------------------
__device__ __forceinline__ uint32_t SmemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, int src_bytes) {  // dst: a shared address (SmemAddr)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
// ldmatrix at a shared-memory byte address (SmemAddr): a stage's base plus a lane's offset, one add.
#define SD_LDM_X4(SUFFIX, r, smem)                                                                \
  asm volatile("ldmatrix.sync.aligned.m8n8.x4" SUFFIX ".shared.b16 {%0,%1,%2,%3}, [%4];\n"             \
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem) : "memory")
__device__ __forceinline__ void LdmX4(uint32_t (&r)[4], uint32_t smem) { SD_LDM_X4("", r, smem); }
__device__ __forceinline__ void LdmX4T(uint32_t (&r)[4], uint32_t smem) { SD_LDM_X4(".trans", r, smem); }
// Used only when a tunable choice leaves an odd count of n8 tiles (maybe_unused: no nvcc #177 otherwise).
[[maybe_unused]] __device__ __forceinline__ void LdmX2T(uint32_t (&r)[2], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(smem) : "memory");
}
#define SD_MMA16816(TY, d, a, b)                                                                   \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, " \
               "{%8,%9}, {%0,%1,%2,%3};\n"                                                            \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                        \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
template <typename T>
__device__ __forceinline__ void Mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same<T, __half>::value) SD_MMA16816("f16", d, a, b);
  else SD_MMA16816("bf16", d, a, b);
}
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ uint32_t Bits(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ uint32_t Bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
template <typename T> __device__ __forceinline__ uint32_t PackF2(float lo, float hi) { return Bits(FromF<T>(lo)) | (Bits(FromF<T>(hi)) << 16); }
struct BsrArgs {
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const void* vals;      // nnzb blocks of BLOCK*BLOCK, row-major inside a block
  const int32_t* order;  // block-rows, heaviest first
  const void* b;
  void* c;
  int64_t m, k, n;
  int pair_store;  // n even and C 4-byte aligned
  int staged;      // n % 8 == 0 and C 16-byte aligned: C leaves through shared memory in 16-byte row chunks
  int vec;         // n % 8 == 0 and B 16-byte aligned: cp.async B chunks
};
// ---- roles --------------------------------------------------------------------------------------
// A thread's 16-byte chunks of a stage: chunk t is i = t * kThreads + threadIdx.x of the A block (kAChunks) or the
// B slab (kBChunks), t counted at compile time. With `for (i = threadIdx.x; i < N; i += kThreads)` the compiler could
// not bound the trip count and built a general loop that recomputed each chunk's swizzle, row, column and 64-bit
// offset for every block (dev/ptx_census/sass.py: block 32's loop about 400 SASS instructions a block for 16 HMMA,
// about 120 now); here what a chunk's place costs is computed once a kernel and a block adds its stage and its rows. A
// thread's B chunks share a column and lie kRowStep rows apart (kThreads is a multiple of a row's chunks), so the
// plan holds one offset, not one a chunk.
template <class TL> struct StagePlan {
  static constexpr int kACpr = TL::kBlock / 8, kBCpr = TL::kNt / 8, kRowStep = TL::kThreads / kBCpr;
  static constexpr int kAChunks = TL::kBlock * kACpr, kBChunks = TL::kBlock * kBCpr;
  static constexpr int kA = (kAChunks + TL::kThreads - 1) / TL::kThreads, kB = (kBChunks + TL::kThreads - 1) / TL::kThreads;
  static_assert(TL::kThreads % kBCpr == 0, "a thread's B chunks share a column");
  static __host__ __device__ __forceinline__ bool Has(int chunks, int t, int tid) { return chunks % TL::kThreads == 0 || t * TL::kThreads + tid < chunks; }
  // Chunk t's byte offset in its stage (swizzled), computed where it is used: from the thread and t alone, which the
  // compiler folds to one offset and a constant a chunk where the tile allows, rather than registers a chunk.
  static __host__ __device__ __forceinline__ uint32_t ADst(int t, int tid) {
    const int i = t * TL::kThreads + tid;
    return SwzChunk<kACpr>(i / kACpr, i % kACpr) * 16;
  }
  static __host__ __device__ __forceinline__ int BRow(int t, int tid) { return tid / kBCpr + t * kRowStep; }
  static __host__ __device__ __forceinline__ int BCol(int tid) { return tid % kBCpr; }  // in chunks of 8
  static __host__ __device__ __forceinline__ uint32_t BDst(int t, int tid) { return SwzChunk<kBCpr>(BRow(t, tid), BCol(tid)) * 16; }
  int b_row;                      // the row of chunk 0 in the slab (chunk t: + t kRowStep); 1 << 20 for columns past n
  int64_t b_src;                  // chunk 0's element offset from the slab's first row (b_row * n + column)
};
template <class TL> __device__ __forceinline__ StagePlan<TL> MakeStagePlan(const BsrArgs& p, int64_t n0) {
  using Plan = StagePlan<TL>;
  Plan plan;
  const int tid = static_cast<int>(threadIdx.x), r = Plan::BRow(0, tid);
  const int64_t col = n0 + Plan::BCol(tid) * 8;
  plan.b_row = col < p.n ? r : 1 << 20, plan.b_src = r * p.n + col;
  return plan;
}
// The A block at a_src and, when n % 8 == 0 (a chunk wholly inside or outside n), the B slab of rows k0 .. k0+BLOCK-1
// into the stage at shared addresses sa, sb; zero outside K x n.
template <typename T, class TL>
__device__ __forceinline__ void LoadStage(uint32_t sa, uint32_t sb, const T* a_src, const BsrArgs& p, int64_t k0, const StagePlan<TL>& plan) {
  using Plan = StagePlan<TL>;
  const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int t = 0; t < Plan::kA; ++t)
    if (Plan::Has(Plan::kAChunks, t, tid)) CpAsync16(sa + Plan::ADst(t, tid), a_src + (t * TL::kThreads + tid) * 8, 16);
  if (!p.vec) return;
  const T* rows = static_cast<const T*>(p.b) + k0 * p.n;  // row k0 < K: a valid address for the zero-filled chunks
  const int rows_left = p.k - k0 < TL::kBlock ? static_cast<int>(p.k - k0) : TL::kBlock;
#pragma unroll
  for (int t = 0; t < Plan::kB; ++t) {
    if (!Plan::Has(Plan::kBChunks, t, tid)) continue;
    const bool in = plan.b_row + t * Plan::kRowStep < rows_left;
    CpAsync16(sb + Plan::BDst(t, tid), in ? rows + plan.b_src + static_cast<int64_t>(t) * Plan::kRowStep * p.n : rows, in ? 16 : 0);
  }
}

// B rows k0 .. k0+BLOCK-1, columns n0 .. n0+NT-1 when n % 8 != 0 or B is not 16-byte aligned: element by element,
// zero outside K x n.
template <typename T, class TL>
__device__ __forceinline__ void LoadBSlabScalar(T* dst, const BsrArgs& p, int64_t k0, int64_t n0) {
  constexpr int CPR = TL::kNt / 8;
  const T* b = static_cast<const T*>(p.b);
  for (int i = threadIdx.x; i < TL::kBlock * CPR; i += TL::kThreads) {
    const int r = i / CPR, c = i % CPR;
    const int64_t k = k0 + r, col = n0 + c * 8;
    const uint16_t* bs = reinterpret_cast<const uint16_t*>(b);
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t c0 = col + 2 * e;
      const uint32_t lo = (k < p.k && c0 < p.n) ? __ldg(bs + k * p.n + c0) : 0u;
      const uint32_t hi = (k < p.k && c0 + 1 < p.n) ? __ldg(bs + k * p.n + c0 + 1) : 0u;
      w[e] = lo | (hi << 16);
    }
    *reinterpret_cast<uint4*>(dst + SwzChunk<CPR>(r, c) * 8) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

template <typename T, class TL>
__device__ __forceinline__ void ComputeBlock(uint32_t sa, uint32_t sb, float (&acc)[TL::kMi][TL::kNi][4]) {  // stage addresses
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int kk = 0; kk < TL::kBlock / 16; ++kk) {
    uint32_t a[TL::kMi][4], bf[TL::kNi][2];
#pragma unroll
    for (int mi = 0; mi < TL::kMi; ++mi) LdmX4(a[mi], sa + 2 * AFragOffset<TL>(warp, mi, kk, lane));
#pragma unroll
    for (int ni = 0; ni + 1 < TL::kNi; ni += 2) {
      uint32_t r[4];
      LdmX4T(r, sb + 2 * BFragOffset<TL>(warp, ni, kk, lane));
      SplitX4(r, bf[ni], bf[ni + 1]);
    }
    if constexpr (TL::kNi % 2 == 1) LdmX2T(bf[TL::kNi - 1], sb + 2 * BFragOffset<TL>(warp, TL::kNi - 1, kk, lane & 15));
#pragma unroll
    for (int mi = 0; mi < TL::kMi; ++mi) {
#pragma unroll
      for (int ni = 0; ni < TL::kNi; ++ni) Mma16816<T>(acc[mi][ni], a[mi], bf[ni]);
    }
  }
}

template <typename T, class TL>
__device__ __forceinline__ void StoreTile(const BsrArgs& p, int64_t row_base, int64_t n0,
                                          const float (&acc)[TL::kMi][TL::kNi][4]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T* c = static_cast<T*>(p.c);
#pragma unroll
  for (int t = 0; t < TL::kMi * TL::kNi * 2; ++t) {
    const int mi = t / (TL::kNi * 2), ni = (t / 2) % TL::kNi, h = t % 2;
    int r, cc;
    AccCoord<TL>(warp, lane, mi, ni, h, &r, &cc);
    const int64_t row = row_base + r, col = n0 + cc;
    if (row >= p.m || col >= p.n) continue;
    T* out = c + row * p.n + col;
    const float x = acc[mi][ni][2 * h], y = acc[mi][ni][2 * h + 1];
    if (p.pair_store) { *reinterpret_cast<uint32_t*>(out) = PackF2<T>(x, y); continue; }
    out[0] = FromF<T>(x);
    if (col + 1 < p.n) out[1] = FromF<T>(y);
  }
}

// Byte offset of C tile value (row, col) where the staged epilogue puts it.
template <class TL> __host__ __device__ __forceinline__ int CStageOffset(int row, int col) { return row * TL::kCRowBytes + col * 2; }
// The staged epilogue: accumulator pairs into the shared C tile as 4-byte words, then whole 16-byte row chunks
// to C — full 32-byte sectors, where stores from the fragments write 4 bytes of a row per lane.
template <typename T, class TL>
__device__ __forceinline__ void StageTile(unsigned char* smem, const float (&acc)[TL::kMi][TL::kNi][4]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int t = 0; t < TL::kMi * TL::kNi * 2; ++t) {
    const int mi = t / (TL::kNi * 2), ni = (t / 2) % TL::kNi, h = t % 2;
    int r, cc;
    AccCoord<TL>(warp, lane, mi, ni, h, &r, &cc);
    *reinterpret_cast<uint32_t*>(smem + CStageOffset<TL>(r, cc)) = PackF2<T>(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
  }
}
template <typename T, class TL>
__device__ __forceinline__ void StoreStaged(const BsrArgs& p, const unsigned char* smem, int64_t row_base, int64_t n0) {
  constexpr int kChunks = TL::kNt / 8;
  T* c = static_cast<T*>(p.c);
  for (int i = threadIdx.x; i < TL::kBlock * kChunks; i += TL::kThreads) {
    const int r = i / kChunks, ch = i % kChunks;
    const int64_t row = row_base + r, col = n0 + ch * 8;
    if (row < p.m && col < p.n) *reinterpret_cast<uint4*>(c + row * p.n + col) = *reinterpret_cast<const uint4*>(smem + CStageOffset<TL>(r, ch * 8));
  }
}

template <typename T, class TL>
__global__ void __launch_bounds__(TL::kThreads) BsrMmaKernel(BsrArgs p) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* sa = reinterpret_cast<T*>(smem);
  T* sb = sa + TL::kStages * TL::kAElems;
  const int brow = p.order[blockIdx.x];
  const int64_t n0 = static_cast<int64_t>(blockIdx.y) * TL::kNt;
  const int first = p.row_ptr[brow], count = p.row_ptr[brow + 1] - first;
  const T* vals = static_cast<const T*>(p.vals);
  float acc[TL::kMi][TL::kNi][4] = {};
  const StagePlan<TL> plan = MakeStagePlan<TL>(p, n0);
  auto load = [&](int j) {  // nonzero block j of this block-row into stage j % kStages
    const int s = j % TL::kStages;
    const int64_t k0 = static_cast<int64_t>(p.col_idx[first + j]) * TL::kBlock;
    LoadStage<T, TL>(SmemAddr(sa + s * TL::kAElems), SmemAddr(sb + s * TL::kBElems), vals + static_cast<int64_t>(first + j) * TL::kAElems, p, k0, plan);
    if (!p.vec) LoadBSlabScalar<T, TL>(sb + s * TL::kBElems, p, k0, n0);
  };
#pragma unroll
  for (int j = 0; j < TL::kStages - 1; ++j) { if (j < count) load(j); CpAsyncCommit(); }
  for (int j = 0; j < count; ++j) {
    CpAsyncWait<TL::kStages - 2>();
    __syncthreads();  // stage j landed for all; stage j-1 fully consumed, so it may be refilled
    if (j + TL::kStages - 1 < count) load(j + TL::kStages - 1);
    CpAsyncCommit();
    ComputeBlock<T, TL>(SmemAddr(sa + (j % TL::kStages) * TL::kAElems), SmemAddr(sb + (j % TL::kStages) * TL::kBElems), acc);
  }
  if (p.staged) {
    CpAsyncWait<0>();  // the trailing (empty) groups; every stage consumed
    __syncthreads();
    StageTile<T, TL>(smem, acc);
    __syncthreads();
    StoreStaged<T, TL>(p, smem, static_cast<int64_t>(brow) * TL::kBlock, n0);
  } else {
    StoreTile<T, TL>(p, static_cast<int64_t>(brow) * TL::kBlock, n0, acc);
  }
}

template <class TL> constexpr size_t SmemBytes() { return TL::kStages * (TL::kAElems + TL::kBElems) * 2; }

// ---- host: BSR builder (unit tested) -------------------------------------------------------------
struct BsrHost {
  int block = 0;
  int64_t block_rows = 0, block_cols = 0;
  std::vector<int32_t> row_ptr;  // block_rows + 1
  std::vector<int32_t> col_idx;  // nnzb, increasing within a block-row
  std::vector<float> values;     // nnzb * block * block, zero-padded
  std::vector<int32_t> order;    // block-rows by decreasing block count (stable)
};

// Builds BSR from canonical CSR; any entry anywhere is placed (blocks need not be full). False with a
// reason on malformed input or sizes beyond int32 block indices.
bool BuildBsr(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, int block,
              BsrHost* out, std::string* why) {
  why->clear();
  if (block <= 0 || rows <= 0 || cols <= 0) { *why = "bad shape or block"; return false; }
  out->block = block;
  out->block_rows = (rows + block - 1) / block;
  out->block_cols = (cols + block - 1) / block;
  if (out->block_rows > INT32_MAX - 1 || out->block_cols > INT32_MAX) { *why = "too many blocks"; return false; }
  out->row_ptr.assign(out->block_rows + 1, 0);
  out->col_idx.clear();
  out->values.clear();
  std::vector<int64_t> mark(out->block_cols, -1), slot(out->block_cols, 0);
  std::vector<int32_t> here;
  const int64_t bb = static_cast<int64_t>(block) * block;
  for (int64_t br = 0; br < out->block_rows; ++br) {
    const int64_t r0 = br * block, r1 = std::min(rows, r0 + block);
    here.clear();
    for (int64_t r = r0; r < r1; ++r) {
      if (ro[r] > ro[r + 1]) { *why = "row offsets decrease"; return false; }
      for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
        if (ci[e] < 0 || ci[e] >= cols) { *why = "column index out of range"; return false; }
        const int32_t bc = ci[e] / block;
        if (mark[bc] != br) { mark[bc] = br; here.push_back(bc); }
      }
    }
    std::sort(here.begin(), here.end());
    const int64_t base = static_cast<int64_t>(out->col_idx.size());
    if (base + static_cast<int64_t>(here.size()) > INT32_MAX) { *why = "too many nonzero blocks"; return false; }
    for (size_t i = 0; i < here.size(); ++i) slot[here[i]] = base + static_cast<int64_t>(i);
    out->col_idx.insert(out->col_idx.end(), here.begin(), here.end());
    out->values.resize(out->col_idx.size() * bb, 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
        const int32_t bc = ci[e] / block;
        out->values[slot[bc] * bb + (r - r0) * block + (ci[e] - static_cast<int64_t>(bc) * block)] = v[e];
      }
    }
    out->row_ptr[br + 1] = static_cast<int32_t>(out->col_idx.size());
  }
  out->order.resize(out->block_rows);
  for (int64_t i = 0; i < out->block_rows; ++i) out->order[i] = static_cast<int32_t>(i);
  std::stable_sort(out->order.begin(), out->order.end(), [&](int32_t x, int32_t y) {
    return out->row_ptr[x + 1] - out->row_ptr[x] > out->row_ptr[y + 1] - out->row_ptr[y];
  });
  return true;
}

// ---- host: state, launch -------------------------------------------------------------------------
struct State {
  int dtype = 0, block = 0;
  int64_t m = 0, k = 0, block_rows = 0;
  int32_t *row_ptr = nullptr, *col_idx = nullptr, *order = nullptr;
  void* vals = nullptr;
};

template <typename T, class TL>
cudaError_t Configure(int optin) {
  if (SmemBytes<TL>() > static_cast<size_t>(optin)) return cudaErrorInvalidConfiguration;
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(&BsrMmaKernel<T, TL>),
                              cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(SmemBytes<TL>()));
}
template <typename T, int BLOCK>
cudaError_t ConfigureBoth(int optin) {
  cudaError_t e = Configure<T, BigTile<BLOCK>>(optin);
  if (e == cudaSuccess) e = Configure<T, MidTile<BLOCK>>(optin);
  return e == cudaSuccess ? Configure<T, SmallTile<BLOCK>>(optin) : e;
}
template <typename T>
cudaError_t ConfigureAll(int block, int optin) {
  return block == 16 ? ConfigureBoth<T, 16>(optin) : block == 32 ? ConfigureBoth<T, 32>(optin) : ConfigureBoth<T, 64>(optin);
}

template <typename T, class TL>
void LaunchTile(const BsrArgs& a, int64_t block_rows, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(block_rows), static_cast<unsigned>((a.n + TL::kNt - 1) / TL::kNt));
  BsrMmaKernel<T, TL><<<grid, TL::kThreads, SmemBytes<TL>(), stream>>>(a);
}
template <typename T, int BLOCK>
void LaunchBlock(const State* s, const BsrArgs& a, cudaStream_t stream) {
  if (a.n <= SMALL_N_MAX) LaunchTile<T, SmallTile<BLOCK>>(a, s->block_rows, stream);
  else if (a.n <= MID_N_MAX) LaunchTile<T, MidTile<BLOCK>>(a, s->block_rows, stream);
  else LaunchTile<T, BigTile<BLOCK>>(a, s->block_rows, stream);
}
template <typename T>
void Launch(const State* s, const BsrArgs& a, cudaStream_t stream) {
  if (s->block == 16) LaunchBlock<T, 16>(s, a, stream);
  else if (s->block == 32) LaunchBlock<T, 32>(s, a, stream);
  else LaunchBlock<T, 64>(s, a, stream);
}

template <typename T> cudaError_t Upload(const std::vector<T>& h, void** d) {
  cudaError_t e = cudaMalloc(d, sizeof(T) * std::max<size_t>(h.size(), 1));
  if (e == cudaSuccess && !h.empty()) e = cudaMemcpy(*d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice);
  return e;
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
  cudaFree(s->row_ptr);
  cudaFree(s->col_idx);
  cudaFree(s->order);
  cudaFree(s->vals);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  const int block = p->pattern.block_rows;
  BsrHost h;
  std::string why;
  if ((p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) || !SPARSEDITTO_BUILDS_DTYPE(p->dtype)) {
    why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  } else if (block != p->pattern.block_cols || (block != 16 && block != 32 && block != 64)) {
    why = "needs square blocks of 16, 32 or 64";
  } else {
    BuildBsr(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, block, &h, &why);
  }
  if (!why.empty()) {
    snprintf(error, cap, "bsr_mma: %s", why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, block, p->rows, p->cols, h.block_rows};
  int optin = 0;
  cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (e == cudaSuccess) e = Upload(h.row_ptr, reinterpret_cast<void**>(&s->row_ptr));
  if (e == cudaSuccess) e = Upload(h.col_idx, reinterpret_cast<void**>(&s->col_idx));
  if (e == cudaSuccess) e = Upload(h.order, reinterpret_cast<void**>(&s->order));
  if (e == cudaSuccess) {
    e = p->dtype == SD_DTYPE_FP16 ? UploadValues<__half>(h.values, &s->vals) : UploadValues<__nv_bfloat16>(h.values, &s->vals);
  }
  if (e == cudaSuccess) {
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (p->dtype == SD_DTYPE_FP16) e = ConfigureAll<__half>(block, optin);
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (p->dtype == SD_DTYPE_BF16) e = ConfigureAll<__nv_bfloat16>(block, optin);
  }
  if (e != cudaSuccess) {
    snprintf(error, cap, "bsr_mma prepare: %s", cudaGetErrorString(e));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  if (n < 1) return 1;
  BsrArgs a{s->row_ptr, s->col_idx, s->vals, s->order, b, c, s->m, s->k, n,
            (n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0) ? 1 : 0,
            (n % 8 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0) ? 1 : 0,
            (n % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0};
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (s->dtype == SD_DTYPE_FP16) Launch<__half>(s, a, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (s->dtype == SD_DTYPE_BF16) Launch<__nv_bfloat16>(s, a, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
