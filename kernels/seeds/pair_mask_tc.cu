// Seed: unstructured sparsity on tensor cores for small n, decoded with one popcount per register.
// Format ("pair masks"): A in tiles of 16 rows x 64 columns; a tile is 16 sub-blocks of 8x8 in the order the
// mma.sync m16n8k16 A fragment takes them (s = 4 * kb + j: k step kb of 16 columns; j = rows 0-7 / 8-15 of
// columns 0-7, then of columns 8-15). Lane L's fragment register of a sub-block is the pair of elements (row
// L / 4, columns 2 (L % 4) and +1); a sub-block keeps a 32-bit mask of its pairs that hold a nonzero and those
// pairs whole (32 bits, a zero half included), so a lane gets its register with one popcount and one 32-bit
// shared-memory load. Why: bitmap_tc's per-element bits make its decode issue-bound on popcounts (the XU
// pipe; the same time at 50% and 90% sparsity; ncu in docs/lab/seed_choices.md). The price is bytes: 0.44
// bytes per element at 90% sparsity against a bitmap's 0.33 (dense fp16: 2), 1.56 at 50% against 1.13.
// A record (16-byte chunks): masks[16] (uint32), starts[16] (uint16: pairs of the tile before sub-block s),
// the pairs (uint32), padded to 16 bytes. A row tile's records lie back to back in K order; toff[rt * k_tiles
// + kt] is the first chunk of record (rt, kt); toff has one entry more.
// run: a warp owns (row tile, K split, n tile) and streams its records through its own STAGES-deep ring in
// shared memory (cp.async; __syncwarp only). A CTA's WARPS warps share a K split: the CTA copies that split's
// rows of B (N_TILE columns) to shared memory once. K is split until the GPU has ~ITEMS_PER_SM warps per SM
// (and a slab fits SLAB_KB); each warp then writes an fp32 partial, and the last warp of a row tile to finish
// sums the partials in split order (deterministic) and stores C.
// sparseditto:seed families=[unstructured, file] dtypes=[fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#define N_TILE 16        // sparseditto:tunable values=[16, 32, 64]
#define WARPS 16         // sparseditto:tunable values=[4, 8, 16]
#define STAGES 4         // sparseditto:tunable values=[2, 3, 4, 6]
#define ITEMS_PER_SM 16  // sparseditto:tunable values=[8, 16, 32]
#define SLAB_KB 64       // sparseditto:tunable values=[32, 64, 96]

namespace {
constexpr int kThreads = WARPS * 32;
constexpr int kTileK = 64, kSubBlocks = 16;  // a tile: 16 rows x kTileK columns = 16 sub-blocks of 8x8
constexpr int kHeaderChunks = 6;             // 16 masks (64 bytes) + 16 starts (32 bytes)
static_assert(N_TILE % 16 == 0 && N_TILE <= 64, "whole ldmatrix.x4 steps of 16 columns; accumulators in registers");
static_assert(STAGES >= 2 && WARPS >= 1 && WARPS <= 32 && SLAB_KB >= 8, "a pipeline; a CTA; a slab");

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
__host__ __device__ inline int Popcount32(uint32_t x) {
#ifdef __CUDA_ARCH__
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}
// Where element (r, c) of a tile (r < 16, c < kTileK) lives: its sub-block, its pair (= lane), its half.
inline int SubBlockOf(int r, int c) { return (c / 16) * 4 + (c % 16) / 8 * 2 + r / 8; }
inline int PairOf(int r, int c) { return (r % 8) * 4 + (c % 8) / 2; }
inline int HalfOf(int c) { return c % 2; }
// Lane `lane`'s fragment register of a sub-block: `pairs` are the record's pairs, `start` the sub-block's first.
// Branch-free: the load is issued for every lane (so the 16 of a record are independent) and may read the word
// one past the record's last pair, which the ring slot always has (RecordSlotChunks), then masked off.
__host__ __device__ inline uint32_t LaneRegister(uint32_t mask, uint32_t start, const uint32_t* pairs, int lane) {
  const uint32_t v = pairs[start + Popcount32(mask & ((1u << lane) - 1u))];
  return (mask >> lane) & 1u ? v : 0u;
}
template <bool kBf16>
__host__ __device__ inline uint16_t ToBits(float v) {
  if constexpr (kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  return __half_as_ushort(__float2half_rn(v));
}

// ---- host: the format ---------------------------------------------------------------------------
struct PairFormat {
  int row_tiles = 0, k_tiles = 0;
  std::vector<uint32_t> data;  // 16-byte chunks of 4 words
  std::vector<uint32_t> toff;  // row_tiles * k_tiles + 1 chunk offsets
  uint32_t max_record_chunks = 0;
};

// `bits`: the nnz values already in the 16-bit dtype. False (with *error) on sizes out of range.
bool BuildPairFormat(int64_t rows, int64_t cols, const int32_t* row_offsets, const int32_t* col_indices,
                     const uint16_t* bits, PairFormat* f, std::string* error) {
  if (rows < 1 || cols < 1 || rows > (int64_t{1} << 30) || cols > (int64_t{1} << 30))
    return (*error = "matrix size out of range", false);
  *f = PairFormat{static_cast<int>(CeilDiv(rows, 16)), static_cast<int>(CeilDiv(cols, kTileK))};
  std::vector<uint32_t> pairs(size_t{32} * kSubBlocks * f->k_tiles), masks(size_t{kSubBlocks} * f->k_tiles);
  for (int rt = 0; rt < f->row_tiles; ++rt) {
    std::fill(pairs.begin(), pairs.end(), 0), std::fill(masks.begin(), masks.end(), 0);
    for (int64_t r = int64_t{rt} * 16; r < std::min<int64_t>(rows, int64_t{rt} * 16 + 16); ++r)
      for (int32_t e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
        const int c = col_indices[e] % kTileK, tr = static_cast<int>(r % 16);
        const size_t sb = size_t(col_indices[e] / kTileK) * kSubBlocks + SubBlockOf(tr, c);
        pairs[sb * 32 + PairOf(tr, c)] |= uint32_t{bits[e]} << (16 * HalfOf(c));
        masks[sb] |= 1u << PairOf(tr, c);
      }
    for (int kt = 0; kt < f->k_tiles; ++kt) {
      const size_t first = f->data.size();
      f->toff.push_back(static_cast<uint32_t>(first / 4));
      f->data.resize(first + kHeaderChunks * 4, 0);
      uint32_t count = 0;
      for (int s = 0; s < kSubBlocks; ++s) {
        const size_t sb = size_t(kt) * kSubBlocks + s;
        f->data[first + s] = masks[sb];
        f->data[first + 16 + s / 2] |= count << (16 * (s % 2));
        for (int lane = 0; lane < 32; ++lane)
          if ((masks[sb] >> lane) & 1u) f->data.push_back(pairs[sb * 32 + lane]), ++count;
      }
      f->data.resize((f->data.size() + 3) / 4 * 4, 0);
      f->max_record_chunks = std::max(f->max_record_chunks, static_cast<uint32_t>((f->data.size() - first) / 4));
    }
    if (f->data.size() / 4 > 0xFFFFFFF0u) return (*error = "format larger than 64 GiB", false);
  }
  f->toff.push_back(static_cast<uint32_t>(f->data.size() / 4));
  return true;
}

// How run(n) launches. Splits: the K tiles per split such that ~ITEMS_PER_SM warps per SM have work and
// the split's B slab fits; a CTA of WARPS warps (row tiles) per split and n tile.
struct Plan {
  int ncols = 16, split_tiles = 1, splits = 1;
  dim3 grid;
  size_t smem = 0, ws_floats = 0, tiles = 0;  // tiles: counters (row tiles x n tiles) when split
};
__host__ __device__ inline size_t SlabBytes(int split_tiles, int ncols) { return size_t{kTileK} * split_tiles * (ncols + 8) * 2; }
// A ring slot: the largest record and one chunk more, for LaneRegister's read past the last pair.
inline uint32_t RecordSlotChunks(uint32_t max_record_chunks) { return max_record_chunks + 1; }
inline size_t RingBytes(uint32_t slot_chunks) { return size_t{WARPS} * STAGES * slot_chunks * 16; }
// False: n cannot run (out of range, or no slab of one K tile fits beside the rings).
bool MakePlan(int row_tiles, int k_tiles, uint32_t slot_chunks, int sms, int max_smem, int64_t n, Plan* plan) {
  if (n < 1 || n > (int64_t{1} << 30)) return false;
  plan->ncols = static_cast<int>(std::min<int64_t>(N_TILE, CeilDiv(n, 16) * 16));
  const int64_t n_tiles = CeilDiv(n, plan->ncols), items = int64_t{row_tiles} * n_tiles;
  const size_t room = std::min<size_t>(size_t{SLAB_KB} * 1024, std::max<int64_t>(0, max_smem - int64_t(RingBytes(slot_chunks))));
  const int64_t fit = room / SlabBytes(1, plan->ncols);
  if (fit < 1) return false;
  const int64_t want = std::clamp<int64_t>((int64_t{ITEMS_PER_SM} * sms + items / 2) / items, 1, k_tiles);
  plan->split_tiles = static_cast<int>(std::min<int64_t>(CeilDiv(k_tiles, want), fit));
  plan->splits = static_cast<int>(CeilDiv(k_tiles, plan->split_tiles));
  plan->grid = dim3(static_cast<unsigned>(CeilDiv(row_tiles, WARPS)), plan->splits, static_cast<unsigned>(n_tiles));
  plan->smem = SlabBytes(plan->split_tiles, plan->ncols) + RingBytes(slot_chunks);
  plan->tiles = plan->splits > 1 ? static_cast<size_t>(items) : 0;
  plan->ws_floats = plan->tiles * plan->splits * 16 * plan->ncols;
  return plan->splits <= 65535 && n_tiles <= 65535;
}
// Workspace float of split z's partial of (n tile, row tile) `tile`: accumulator r of n8 step j of `lane`.
__host__ __device__ inline size_t WsIndex(size_t tile, int z, int splits, int ncols, int j, int r, int lane) {
  return (tile * splits + z) * (size_t{16} * ncols) + j * 128 + r * 32 + lane;
}

// ---- device ---------------------------------------------------------------------------------------
struct Params {
  const uint4* data;
  const uint32_t* toff;
  const uint16_t* b;  // fp16 / bf16 bits, like c
  uint16_t* c;
  float* ws;      // splits > 1: the partials, see WsIndex
  int* counters;  // splits > 1: per (n tile, row tile), splits done (0 between launches)
  int rows, cols, n, row_tiles, k_tiles, split_tiles, ncols, slot_chunks;
  bool vector_b, pair_c;  // B copied 16 bytes at a time (n % 8 == 0, 16-byte aligned); C 2 values at a time
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

// Role: copy the split's rows of B (columns n0.., zero-filled past K and n) into the slab; all threads.
__device__ void LoadSlab(const Params& p, uint16_t* slab, int k0, int k_rows, int n0) {
  const int ldb = p.ncols + 8;
  if (p.vector_b) {
    const int per_row = p.ncols / 8;
    for (int i = threadIdx.x; i < k_rows * per_row; i += kThreads) {
      const int r = i / per_row, col = n0 + (i % per_row) * 8, k = k0 + r;
      const bool ok = k < p.cols && col < p.n;
      CpAsync16(slab + r * ldb + (i % per_row) * 8, ok ? p.b + static_cast<size_t>(k) * p.n + col : p.b, ok);
    }
  } else {
    for (int i = threadIdx.x; i < k_rows * p.ncols; i += kThreads) {
      const int r = i / p.ncols, col = n0 + i % p.ncols, k = k0 + r;
      slab[r * ldb + i % p.ncols] = (k < p.cols && col < p.n) ? p.b[static_cast<size_t>(k) * p.n + col] : 0;
    }
  }
}

// Role: the chunk bounds of a warp's records, read 32 toff entries at a time into lane registers.
struct RecordCursor {
  const uint32_t* toff;  // the warp's first record's entry; entries 0..count are valid
  int count, base = -64;
  uint32_t held = 0;
  __device__ void Prefetch(int lane) { base = 0, held = __ldg(toff + min(lane, count)); }
  __device__ void Bounds(int i, int lane, uint32_t* begin, uint32_t* end) {
    if (i < base || i + 1 >= base + 32) base = i, held = __ldg(toff + min(i + lane, count));  // warp-uniform
    *begin = __shfl_sync(0xffffffffu, held, i - base), *end = __shfl_sync(0xffffffffu, held, i + 1 - base);
  }
};
// Role: copy record i of the warp into its ring slot; one commit group whether or not there is a record.
__device__ __forceinline__ void IssueRecord(const Params& p, RecordCursor& cur, uint4* ring, int i, int lane) {
  if (i < cur.count) {
    uint32_t begin, end;
    cur.Bounds(i, lane, &begin, &end);
    uint4* slot = ring + (i % STAGES) * p.slot_chunks;
    const uint4* src = p.data + begin;
    const int chunks = static_cast<int>(end - begin);
#pragma unroll 1
    for (int c = lane; c < chunks; c += 32) CpAsync16(slot + c, src + c, true);
  }
  CpAsyncCommit();
}

// Role: one record: decode the 16 fragment registers of each k step, mma against the slab's B fragments.
template <bool kBf16, int kSteps>
__device__ __forceinline__ void ComputeRecord(const uint4* rec, const uint16_t* slab_lane, int ldb, int lane,
                                              float (&acc)[N_TILE / 8][4]) {
  uint32_t masks[kSubBlocks], starts[kSubBlocks / 2];
#pragma unroll
  for (int q = 0; q < 4; ++q) reinterpret_cast<uint4*>(masks)[q] = rec[q];
#pragma unroll
  for (int q = 0; q < 2; ++q) reinterpret_cast<uint4*>(starts)[q] = rec[4 + q];
  const uint32_t* pairs = reinterpret_cast<const uint32_t*>(rec + kHeaderChunks);
  uint32_t a[kSubBlocks];  // all 16 first: independent shared loads in flight together
#pragma unroll
  for (int s = 0; s < kSubBlocks; ++s)
    a[s] = LaneRegister(masks[s], (starts[s / 2] >> (16 * (s % 2))) & 0xFFFFu, pairs, lane);
#pragma unroll
  for (int kb = 0; kb < kTileK / 16; ++kb)
#pragma unroll
    for (int jp = 0; jp < kSteps; ++jp) {
      uint32_t b[4];
      LdMatrixX4Trans(b, slab_lane + kb * 16 * ldb + jp * 16);
      const uint32_t(&ak)[4] = *reinterpret_cast<const uint32_t(*)[4]>(a + 4 * kb);
      Mma<kBf16>(acc[2 * jp], ak, b[0], b[1]);
      Mma<kBf16>(acc[2 * jp + 1], ak, b[2], b[3]);
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
// Role: under split K publish this warp's partial; the tile's last warp sums all splits in split order. Store C.
template <bool kBf16>
__device__ void ReduceAndStore(const Params& p, int rt, int lane, float (&acc)[N_TILE / 8][4]) {
  const int splits = gridDim.y;
  if (splits > 1) {
    const size_t tile = static_cast<size_t>(blockIdx.z) * p.row_tiles + rt;
    float* part = p.ws + WsIndex(tile, 0, splits, p.ncols, 0, 0, lane);
    const size_t stride = size_t{16} * p.ncols;
#pragma unroll
    for (int j = 0; j < N_TILE / 8; ++j)
      if (j * 8 < p.ncols)
#pragma unroll
        for (int r = 0; r < 4; ++r) part[blockIdx.y * stride + j * 128 + r * 32] = acc[j][r];
    __threadfence();  // this split's partial is visible GPU-wide before its count is
    __syncwarp();
    int last = 0;
    if (lane == 0) {
      last = atomicAdd(p.counters + tile, 1) == splits - 1;
      if (last) p.counters[tile] = 0;  // every split has counted: re-armed for the next launch
    }
    if (!__shfl_sync(0xffffffffu, last, 0)) return;
    __threadfence();
#pragma unroll
    for (int j = 0; j < N_TILE / 8; ++j)
      if (j * 8 < p.ncols)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          float sum = 0.0f;  // in split order, whichever warp came last: deterministic
          for (int z = 0; z < splits; ++z) sum += __ldcg(part + z * stride + j * 128 + r * 32);
          acc[j][r] = sum;
        }
  }
  const int row = rt * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < N_TILE / 8; ++j) {
    if (j * 8 >= p.ncols) break;
    const int col = blockIdx.z * p.ncols + j * 8 + (lane % 4) * 2;
    StorePair<kBf16>(p, row, col, acc[j][0], acc[j][1]);
    StorePair<kBf16>(p, row + 8, col, acc[j][2], acc[j][3]);
  }
}

// kSteps = ncols / 16: the n tile's ldmatrix/mma steps, a compile-time count.
template <bool kBf16, int kSteps>
__global__ void __launch_bounds__(kThreads) PairMaskSpmm(Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, rt = blockIdx.x * WARPS + warp;
  const int kt0 = blockIdx.y * p.split_tiles, count = min(p.split_tiles, p.k_tiles - kt0);
  uint16_t* slab = reinterpret_cast<uint16_t*>(smem);
  uint4* ring = reinterpret_cast<uint4*>(smem + SlabBytes(p.split_tiles, p.ncols)) + warp * STAGES * p.slot_chunks;
  const bool active = rt < p.row_tiles;  // whole warps; inactive ones only help with the slab
  RecordCursor cur{p.toff + static_cast<size_t>(rt) * p.k_tiles + kt0, active ? count : 0};
  if (active) cur.Prefetch(lane);  // its latency overlaps the slab copy's issue
  LoadSlab(p, slab, kt0 * kTileK, count * kTileK, blockIdx.z * p.ncols);
  CpAsyncCommit();
  for (int i = 0; i < STAGES - 1; ++i) IssueRecord(p, cur, ring, i, lane);
  CpAsyncWait<STAGES - 2>();  // the slab and record 0
  __syncthreads();            // every thread's part of the slab
  if (!active) return;
  float acc[N_TILE / 8][4] = {};
  const int ldb = p.ncols + 8;
  const uint16_t* slab_lane = slab + (lane & 15) * ldb + (lane >> 4) * 8;  // this lane's ldmatrix row
  for (int i = 0; i < count; ++i) {
    if (i > 0) CpAsyncWait<STAGES - 2>(), __syncwarp();  // record i landed; slot of i-1 consumed by all lanes
    IssueRecord(p, cur, ring, i + STAGES - 1, lane);
    ComputeRecord<kBf16, kSteps>(ring + (i % STAGES) * p.slot_chunks, slab_lane + i * kTileK * ldb, ldb, lane, acc);
  }
  ReduceAndStore<kBf16>(p, rt, lane, acc);
}

// ---- host: ABI ------------------------------------------------------------------------------------
struct State {
  bool bf16 = false;
  int rows = 0, cols = 0, row_tiles = 0, k_tiles = 0, max_smem = 0, sms = 1;
  uint32_t slot_chunks = 0;
  uint4* data = nullptr;
  uint32_t* toff = nullptr;
  float* ws = nullptr;      // split K: ws_floats, for the largest plan of the n_values; and
  int* counters = nullptr;  // `tiles` counters (0 between launches); launches that overlap on the GPU would race
  size_t ws_floats = 0, tiles = 0;
};
bool MakePlan(const State* s, int64_t n, Plan* plan) {
  return MakePlan(s->row_tiles, s->k_tiles, s->slot_chunks, s->sms, s->max_smem, n, plan);
}
using KernelFn = void (*)(Params);
template <bool kBf16, int... kSteps>
KernelFn Pick(int steps, std::integer_sequence<int, kSteps...>) {
  KernelFn f = nullptr;
  ((f = steps == kSteps + 1 ? PairMaskSpmm<kBf16, kSteps + 1> : f), ...);
  return f;
}
// The kernel for an n tile of `ncols` columns (a multiple of 16, at most N_TILE).
KernelFn Kernel(bool bf16, int ncols) {
  const auto steps = std::make_integer_sequence<int, N_TILE / 16>{};
  KernelFn f = nullptr;  // a dtype left out of this build never gets past prepare
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (bf16) f = Pick<true>(ncols / 16, steps);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (!bf16) f = Pick<false>(ncols / 16, steps);
  return f;
}
}  // namespace

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->data), cudaFree(s->toff), cudaFree(s->ws), cudaFree(s->counters);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  const bool bf16 = p->dtype == SD_DTYPE_BF16, supported = (bf16 || p->dtype == SD_DTYPE_FP16) && SPARSEDITTO_BUILDS_DTYPE(p->dtype);
  std::vector<uint16_t> bits(supported ? p->nnz : 0);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = bf16 ? ToBits<true>(p->values[i]) : ToBits<false>(p->values[i]);
  PairFormat f;
  std::string why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  if (!supported || !BuildPairFormat(p->rows, p->cols, p->row_offsets, p->col_indices, bits.data(), &f, &why)) {
    snprintf(error, cap, "pair_mask_tc prepare: %s", why.c_str());
    return 1;
  }
  State* s = new State{bf16, static_cast<int>(p->rows), static_cast<int>(p->cols), f.row_tiles, f.k_tiles};
  s->slot_chunks = RecordSlotChunks(f.max_record_chunks);
  cudaError_t err = cudaDeviceGetAttribute(&s->max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, p->device);
  if (err == cudaSuccess) err = cudaMalloc(&s->data, f.data.size() * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&s->toff, f.toff.size() * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMemcpy(s->data, f.data.data(), f.data.size() * 4, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(s->toff, f.toff.data(), f.toff.size() * 4, cudaMemcpyHostToDevice);
  for (int ncols = 16; err == cudaSuccess && ncols <= N_TILE; ncols += 16)
    err = cudaFuncSetAttribute(Kernel(bf16, ncols), cudaFuncAttributeMaxDynamicSharedMemorySize, s->max_smem);
  Plan plan;
  const bool fits = MakePlan(s, 16, &plan);
  for (int i = 0; err == cudaSuccess && i < p->num_n_values; ++i) {  // workspace for the largest split plan
    if (!MakePlan(s, p->n_values[i], &plan)) continue;
    s->ws_floats = std::max(s->ws_floats, plan.ws_floats), s->tiles = std::max(s->tiles, plan.tiles);
  }
  if (err == cudaSuccess && s->ws_floats > 0) err = cudaMalloc(&s->ws, s->ws_floats * sizeof(float));
  if (err == cudaSuccess && s->tiles > 0) err = cudaMalloc(&s->counters, s->tiles * sizeof(int));
  if (err == cudaSuccess && s->tiles > 0) err = cudaMemset(s->counters, 0, s->tiles * sizeof(int));
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess || !fits) {
    snprintf(error, cap, "pair_mask_tc prepare: %s (shared memory: rings of %zu bytes and a slab, %d available)",
             cudaGetErrorString(err), RingBytes(s->slot_chunks), s->max_smem);
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
  if (plan.ws_floats > s->ws_floats || plan.tiles > s->tiles) {  // an n prepare did not size for: unsplit
    plan.split_tiles = s->k_tiles, plan.splits = 1, plan.grid.y = 1;
    plan.smem = SlabBytes(s->k_tiles, plan.ncols) + RingBytes(s->slot_chunks);
    if (plan.smem > static_cast<size_t>(s->max_smem)) return 1;
  }
  Params p{s->data, s->toff, static_cast<const uint16_t*>(b), static_cast<uint16_t*>(c), s->ws, s->counters,
           s->rows, s->cols, static_cast<int>(n), s->row_tiles, s->k_tiles, plan.split_tiles, plan.ncols,
           static_cast<int>(s->slot_chunks), n % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0,
           n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0};
  Kernel(s->bf16, plan.ncols)<<<plan.grid, kThreads, plan.smem, stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
