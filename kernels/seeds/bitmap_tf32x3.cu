// Seed: fp32 SpMM on tensor cores, error-compensated 3xTF32 on bitmap-compressed tiles of A ("load as sparse,
// compute as dense", as bitmap_tc does for fp16/bf16). fp32 may not run on plain TF32 (10 mantissa bits: the
// fp32 output check fails it), so every operand is split in two TF32 numbers, x = hi + lo with
// hi = tf32(x), lo = tf32(x - hi) (cvt.rna), and C += a_lo*b_hi + a_hi*b_lo + a_hi*b_hi on mma.sync
// m16n8k8 with fp32 accumulators (the small terms first, or in accumulators of their own with SMALL_ACC;
// a_lo*b_lo, about 2^-22 of a product, is left out):
// fp32-class error for 3 tensor-core products a term, which on small problems costs less than fp32 FMAs on
// the SIMT pipes or a CSR walk. A moves 1/8 byte per element plus 4 bytes per nonzero (8 with A_PRESPLIT,
// which stores hi and lo from prepare instead of splitting A in registers); B is split in registers after
// each shared-memory load.
// Format: for every row tile of 16 rows and every group of WARPS_K k-tiles of TILE_K columns, one contiguous
// record of 16-byte chunks: a header (uint16 start of each tile in the group, in chunks), then per tile its
// bitmaps, two per 8 columns (rows 0-7, rows 8-15), and its nonzeros in bitmap order, padded to 16 bytes.
// A bitmap's bit for (r, c) of its 8x8 block is 8r + 2(c % 4) + c / 4: lane L's two elements of the m16n8k8
// A fragment (row L / 4, columns L % 4 and L % 4 + 4) are bits 2L and 2L+1, one popcount for both.
// goff[rt * groups + g] is the first chunk of record (rt, g); M and K are padded (empty tiles) to whole CTAs.
// Fixed slots: each record padded to the longest one's size, so that a record's place follows from its index
// and a launch's first copies of A need no offset read from DRAM first: one DRAM latency less a launch, for
// the padding's bytes; used while those stay within SLOT_EXTRA_KB (about a DRAM latency's worth at 2048),
// else the offsets are read.
// run: CTA = WARPS_M x WARPS_K warps; warp (wm, wk) owns row tile wm and k-tile wk of each group (partials
// summed in shared memory at the end). Stages of records and B rows go through shared memory by cp.async;
// the B rows of the first stages are requested before any record offset is read, so their DRAM latency
// overlaps the offsets' (the problems this seed is for are a few microseconds: fixed cost is the target).
// When the grid alone leaves SMs idle, K is split over CTAs too (gridDim.z): fp32 partials go to a
// workspace and each tile's last CTA sums them in split order (deterministic); SPLIT_CTAS_PER_SM 0 never
// splits. Self-contained like every seed (the evaluator compiles one file against kernel_abi only), so its
// pipeline and split-K pieces follow bitmap_tc's rather than share them.
// sparseditto:seed families=[unstructured, file] dtypes=[fp32] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define TILE_K 32   // sparseditto:tunable values=[16, 32, 64]
#define N_TILE 64   // sparseditto:tunable values=[16, 32, 64, 128]
#define WARPS_M 2   // sparseditto:tunable values=[1, 2, 4]
#define WARPS_K 4   // sparseditto:tunable values=[1, 2, 4, 8]
#define STAGES 3    // sparseditto:tunable values=[2, 3, 4, 6]
#define SPLIT_CTAS_PER_SM 1  // sparseditto:tunable values=[0, 1, 2, 4]
#define A_PRESPLIT 0         // sparseditto:tunable values=[0, 1]
#define SMALL_ACC 1          // sparseditto:tunable values=[0, 1]
#define SLOT_EXTRA_KB 2048   // sparseditto:tunable values=[0, 512, 2048, 8192]

namespace {
constexpr int kThreads = WARPS_M * WARPS_K * 32;
constexpr int kGroupK = WARPS_K * TILE_K;        // columns of A (rows of B) per pipeline stage
constexpr int kBitmapsPerTile = 2 * TILE_K / 8;  // 8x8 blocks of a 16 x TILE_K tile
constexpr int kBitmapChunks = kBitmapsPerTile / 2;
constexpr int kMaxWordsPerValue = 2;             // A_PRESPLIT: hi and lo
// SMALL_ACC: the two correction products of a term go to accumulators of their own, added to the main ones after
// the K loop: a chain of 2 dependent mma a k step instead of 3, for N_TILE / 2 more registers.
constexpr int kSmallRows = SMALL_ACC ? N_TILE / 8 : 1;
static_assert(TILE_K % 16 == 0 && N_TILE % 16 == 0, "whole 16-byte bitmap chunks; B rows padded conflict-free");
static_assert(WARPS_K <= 8 && STAGES >= 2, "8 tile starts a header; a pipeline");
static_assert(kThreads <= 512, "at most 16 warps: 128 registers a thread hold the widest n tile unspilled");
static_assert(1 + WARPS_K * (kBitmapChunks + 16 * TILE_K * kMaxWordsPerValue / 4) < 65536,
              "tile starts fit the uint16 group header");

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
__host__ __device__ inline float BitsToFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}
// x rounded to TF32 (10 explicit mantissa bits, the low 13 bits zero) to nearest, ties away: cvt.rna.tf32.f32.
__host__ __device__ inline uint32_t Tf32Bits(float x) {
  uint32_t u;
#ifdef __CUDA_ARCH__
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
#else
  std::memcpy(&u, &x, sizeof(u));
  u = (u + 0x1000u) & 0xFFFFE000u;
#endif
  return u;
}
// x = hi + lo to about 2^-22 of x: the 3xTF32 operand split.
__host__ __device__ inline void SplitTf32(float x, uint32_t* hi, uint32_t* lo) {
  *hi = Tf32Bits(x);
  *lo = Tf32Bits(x - BitsToFloat(*hi));
}
// Block and bit of (r, c), r < 16, c < TILE_K, in a tile: blocks in k order, rows 0-7 before 8-15.
inline int BlockOf(int r, int c) { return (c / 8) * 2 + r / 8; }
inline int BitOf(int r, int c) { return (r % 8) * 8 + 2 * (c % 4) + (c % 8) / 4; }
// Tile w's start (in chunks from the record's start) in the record's header chunk.
__host__ __device__ inline uint32_t TileStart(const uint32_t* header, int w) {
  return (header[w / 2] >> (16 * (w % 2))) & 0xFFFFu;
}
// Lane `lane`'s two elements of a block (bits 2 lane and 2 lane + 1): out[e] holds kWords words of element e
// (the fp32 value, or hi and lo), zeros where the bit is clear. `values`: the block's nonzeros in bit order.
template <int kWords>
__host__ __device__ inline void LaneValues(uint64_t bitmap, const uint32_t* values, int lane, uint32_t (&out)[2][kWords]) {
  const int bit = 2 * lane;
  int index = Popcount64(bitmap & ((uint64_t{1} << bit) - 1));
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const bool set = (bitmap >> (bit + e)) & 1;
#pragma unroll
    for (int w = 0; w < kWords; ++w) out[e][w] = set ? values[index * kWords + w] : 0u;
    index += set;
  }
}
// The hi and lo A fragments of k step kb (m16n8k8 .tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4),
// a3 (g + 8, t + 4); g = lane / 4, t = lane % 4). `base` counts the tile's nonzeros before the step.
template <bool kPresplit>
__host__ __device__ inline void DecodeA(const uint64_t* bitmaps, const uint32_t* values, int kb, int lane, int* base,
                                        uint32_t (&hi)[4], uint32_t (&lo)[4]) {
  constexpr int kWords = kPresplit ? 2 : 1;
#pragma unroll
  for (int half = 0; half < 2; ++half) {  // rows 0-7: a0, a2; rows 8-15: a1, a3
    const uint64_t bm = bitmaps[2 * kb + half];
    uint32_t v[2][kWords];
    LaneValues<kWords>(bm, values + *base * kWords, lane, v);
    *base += Popcount64(bm);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      if constexpr (kPresplit) hi[half + 2 * e] = v[e][0], lo[half + 2 * e] = v[e][kWords - 1];
      else SplitTf32(BitsToFloat(v[e][0]), &hi[half + 2 * e], &lo[half + 2 * e]);
    }
  }
}

// ---- host: the format ---------------------------------------------------------------------------
struct BitmapFormat {
  int row_tiles = 0;  // multiple of WARPS_M
  int groups = 0;     // per row tile; groups * kGroupK >= cols
  bool presplit = false;       // a nonzero is 2 words (hi, lo) instead of its fp32 bits
  std::vector<uint32_t> data;  // 16-byte chunks of 4 words
  std::vector<uint32_t> goff;  // row_tiles * groups + 1 chunk offsets
  uint32_t max_group_chunks = 0;
};

// False (with *error) on sizes out of range.
bool BuildBitmapFormat(int64_t rows, int64_t cols, const int32_t* row_offsets, const int32_t* col_indices,
                       const float* values, bool presplit, BitmapFormat* f, std::string* error) {
  if (rows < 1 || cols < 1 || rows > (int64_t{1} << 30) || cols > (int64_t{1} << 30))
    return (*error = "matrix size out of range", false);
  *f = BitmapFormat{CeilDiv(CeilDiv(rows, 16), WARPS_M) * WARPS_M, CeilDiv(cols, kGroupK), presplit};
  const int words = presplit ? 2 : 1;
  std::vector<uint64_t> bm(static_cast<size_t>(f->groups) * WARPS_K * kBitmapsPerTile);  // of the row tile
  std::vector<size_t> start(bm.size());  // first value word (index in data) of each block
  for (int rt = 0; rt < f->row_tiles; ++rt) {
    const int64_t r0 = int64_t{rt} * 16, r1 = std::min<int64_t>(r0 + 16, rows);  // r1 <= r0: padding tile
    std::fill(bm.begin(), bm.end(), 0);
    for (int64_t r = r0; r < r1; ++r)
      for (int32_t e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
        const int c = col_indices[e];
        bm[size_t(c / TILE_K) * kBitmapsPerTile + BlockOf(r - r0, c % TILE_K)] |= uint64_t{1} << BitOf(r - r0, c % TILE_K);
      }
    for (int g = 0; g < f->groups; ++g) {
      const size_t first = f->data.size();
      f->goff.push_back(static_cast<uint32_t>(first / 4));
      f->data.resize(first + 4, 0);  // header
      for (int w = 0; w < WARPS_K; ++w) {
        const size_t tile = static_cast<size_t>(g) * WARPS_K + w, at = f->data.size();
        f->data[first + w / 2] |= static_cast<uint32_t>((at - first) / 4) << (16 * (w % 2));
        f->data.resize(at + kBitmapChunks * 4, 0);
        size_t nnz = 0;
        for (int s = 0; s < kBitmapsPerTile; ++s) {
          const uint64_t b = bm[tile * kBitmapsPerTile + s];
          std::memcpy(&f->data[at + s * 2], &b, sizeof(b));
          start[tile * kBitmapsPerTile + s] = at + kBitmapChunks * 4 + nnz * words;
          nnz += Popcount64(b);
        }
        f->data.resize(f->data.size() + (nnz * words + 3) / 4 * 4, 0);
      }
      f->max_group_chunks = std::max(f->max_group_chunks, static_cast<uint32_t>((f->data.size() - first) / 4));
    }
    for (int64_t r = r0; r < r1; ++r)  // values, at the rank of their bit in the block
      for (int32_t e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
        const int c = col_indices[e], bit = BitOf(r - r0, c % TILE_K);
        const size_t b = size_t(c / TILE_K) * kBitmapsPerTile + BlockOf(r - r0, c % TILE_K);
        uint32_t* out = &f->data[start[b] + Popcount64(bm[b] & ((uint64_t{1} << bit) - 1)) * words];
        if (presplit) SplitTf32(values[e], &out[0], &out[1]);
        else std::memcpy(out, &values[e], sizeof(float));
      }
    if (f->data.size() / 4 > 0xFFFFFFF0u) return (*error = "format larger than 64 GiB", false);
  }
  f->goff.push_back(static_cast<uint32_t>(f->data.size() / 4));
  return true;
}

// The records of `f` in fixed slots: record i at chunk i * max_group_chunks of *slots, zeros after it. False
// (nothing written) when max_extra_bytes is 0, or the slots would take more than max_extra_bytes more than the
// compact records, or more chunks than a uint32 counts.
bool PadRecordsToSlots(const BitmapFormat& f, size_t max_extra_bytes, std::vector<uint32_t>* slots) {
  const size_t records = f.goff.size() - 1, chunks = records * f.max_group_chunks;
  if (max_extra_bytes == 0 || (chunks - f.goff.back()) * 16 > max_extra_bytes || chunks > 0xFFFFFFF0u) return false;
  slots->assign(chunks * 4, 0);
  for (size_t i = 0; i < records; ++i)
    std::copy(f.data.begin() + size_t{f.goff[i]} * 4, f.data.begin() + size_t{f.goff[i + 1]} * 4,
              slots->begin() + i * f.max_group_chunks * 4);
  return true;
}

// ---- device ---------------------------------------------------------------------------------------
struct Params {
  const uint4* data;     // the records, compact (goff) or in fixed slots of region_chunks chunks
  const uint32_t* goff;
  const float* b;
  float* c;
  float* ws;      // split K (gridDim.z > 1): the partials, see WsIndex
  int* counters;  // split K: per output tile, how many splits are done (0 between launches)
  int rows, cols, n, ncols, groups, region_chunks;
  bool fixed_slots;
  bool vector_b, pair_c;  // B rows copied 16 bytes at a time (n % 4 == 0, B 16-byte aligned); C two values at
                          // a time (n even, C 8-byte aligned)
};

__device__ __forceinline__ uint32_t SharedAddress(const void* p) { return __cvta_generic_to_shared(p); }
// 16-byte async copy; fills zeros when !valid (src-size 0: nothing is read).
__device__ __forceinline__ void CpAsync16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending)); }
__device__ __forceinline__ void MmaTf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Shared memory: [goff table: WARPS_M x (groups+1)] [A: STAGES x WARPS_M regions] [B: STAGES x kGroupK x ldb].
// ldb = ncols + 8 (ncols % 16 == 0): the 4 k rows a B fragment load touches fall in distinct banks.
__host__ __device__ inline int TableBytes(int groups) { return (WARPS_M * (groups + 1) * 4 + 15) / 16 * 16; }
__host__ __device__ inline int BStageFloats(int ncols) { return kGroupK * (ncols + 8); }

// Role: copy group g of the CTA's row tiles (its sparse records) into stage `buf`.
__device__ void LoadSparseTile(const Params& p, const uint32_t* table, uint4* sa, int g, int buf) {
  for (int w = 0; w < WARPS_M; ++w) {
    const size_t slot = (static_cast<size_t>(blockIdx.x) * WARPS_M + w) * p.groups + g;
    const size_t first = p.fixed_slots ? slot * p.region_chunks : table[w * (p.groups + 1) + g];
    const int count = p.fixed_slots ? p.region_chunks : static_cast<int>(table[w * (p.groups + 1) + g + 1] - first);
    uint4* dst = sa + (buf * WARPS_M + w) * p.region_chunks;
    for (int i = threadIdx.x; i < count; i += kThreads) CpAsync16(dst + i, p.data + first + i, true);
  }
}
// Role: copy the kGroupK rows of B that group g multiplies (ncols columns from n0) into stage `buf`; zeros
// past K and n.
__device__ void LoadDenseTile(const Params& p, float* sb, int g, int buf, int n0) {
  const int k0 = g * kGroupK, ldb = p.ncols + 8;
  float* dst = sb + buf * BStageFloats(p.ncols);
  if (p.vector_b) {
    const int per_row = p.ncols / 4;
    for (int i = threadIdx.x; i < kGroupK * per_row; i += kThreads) {
      const int r = i / per_row, col = n0 + (i % per_row) * 4, k = k0 + r;
      const bool ok = k < p.cols && col < p.n;
      CpAsync16(dst + r * ldb + (i % per_row) * 4, ok ? p.b + static_cast<size_t>(k) * p.n + col : p.b, ok);
    }
  } else {
    for (int i = threadIdx.x; i < kGroupK * p.ncols; i += kThreads) {
      const int r = i / p.ncols, col = n0 + i % p.ncols, k = k0 + r;
      dst[r * ldb + i % p.ncols] = (k < p.cols && col < p.n) ? p.b[static_cast<size_t>(k) * p.n + col] : 0.0f;
    }
  }
}

// Role: this warp's tile of stage `buf`: decode A fragments, split B fragments, 3 mma a term.
template <bool kPresplit>
__device__ void ComputeStage(const Params& p, const uint4* sa, const float* sb, int buf, int wm, int wk, int lane,
                             float (&acc)[N_TILE / 8][4], float (&small)[kSmallRows][4]) {
  float(*corr)[4] = SMALL_ACC ? small : acc;  // where a_lo*b_hi and a_hi*b_lo go
  const uint32_t* region = reinterpret_cast<const uint32_t*>(sa + (buf * WARPS_M + wm) * p.region_chunks);
  const uint32_t* tile = region + TileStart(region, wk) * 4;
  const uint64_t* bitmaps = reinterpret_cast<const uint64_t*>(tile);
  const uint32_t* values = tile + kBitmapChunks * 4;
  const int ldb = p.ncols + 8;
  const float* bs = sb + buf * BStageFloats(p.ncols) + (wk * TILE_K + lane % 4) * ldb + lane / 4;
  int base = 0;
#pragma unroll
  for (int kb = 0; kb < TILE_K / 8; ++kb) {
    uint32_t a_hi[4], a_lo[4];
    DecodeA<kPresplit>(bitmaps, values, kb, lane, &base, a_hi, a_lo);
#pragma unroll
    for (int j = 0; j < N_TILE / 8; ++j) {
      if (j * 8 >= p.ncols) break;
      uint32_t b_hi[2], b_lo[2];  // b0 (k = t, n = g), b1 (k = t + 4, n = g)
      SplitTf32(bs[kb * 8 * ldb + j * 8], &b_hi[0], &b_lo[0]);
      SplitTf32(bs[(kb * 8 + 4) * ldb + j * 8], &b_hi[1], &b_lo[1]);
      MmaTf32(corr[j], a_lo, b_hi[0], b_hi[1]);
      MmaTf32(corr[j], a_hi, b_lo[0], b_lo[1]);
      MmaTf32(acc[j], a_hi, b_hi[0], b_hi[1]);
    }
  }
}

__device__ __forceinline__ void StorePair(const Params& p, int row, int col, float v0, float v1) {
  if (row >= p.rows || col >= p.n) return;
  float* out = p.c + static_cast<size_t>(row) * p.n + col;
  if (p.pair_c) return void(*reinterpret_cast<float2*>(out) = make_float2(v0, v1));
  out[0] = v0;
  if (col + 1 < p.n) out[1] = v1;
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
    StorePair(p, row, col, acc[j][0], acc[j][1]);
    StorePair(p, row + 8, col, acc[j][2], acc[j][3]);
  }
}

template <bool kPresplit>
__global__ void __launch_bounds__(kThreads) Bitmap3xTf32Spmm(Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x % 32, wm = (threadIdx.x / 32) % WARPS_M, wk = threadIdx.x / 32 / WARPS_M;
  const int n0 = blockIdx.y * p.ncols, g0 = SplitBegin(blockIdx.z, gridDim.z, p.groups);
  const int count = SplitBegin(blockIdx.z + 1, gridDim.z, p.groups) - g0;  // this split's groups g0..
  uint32_t* table = reinterpret_cast<uint32_t*>(smem);  // entries g0..g0+count of each row tile are loaded
  uint4* sa = reinterpret_cast<uint4*>(smem + TableBytes(p.groups));
  float* sb = reinterpret_cast<float*>(sa + STAGES * WARPS_M * p.region_chunks);
  // B of the first stages before the table: those copies need no offsets, so their latency overlaps the
  // table's. They join the first commit group, with A of stage 0.
  for (int s = 0; s < STAGES - 1 && s < count; ++s) LoadDenseTile(p, sb, g0 + s, s, n0);
  for (int i = threadIdx.x; i < WARPS_M * (count + 1) && !p.fixed_slots; i += kThreads) {
    const int w = i / (count + 1), g = g0 + i % (count + 1);
    table[w * (p.groups + 1) + g] = p.goff[static_cast<size_t>(blockIdx.x * WARPS_M + w) * p.groups + g];
  }
  __syncthreads();
  float acc[N_TILE / 8][4] = {}, small[kSmallRows][4] = {};
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < count) LoadSparseTile(p, table, sa, g0 + s, s);
    CpAsyncCommit();
  }
  for (int i = 0; i < count; ++i) {
    CpAsyncWait<STAGES - 2>();
    __syncthreads();  // stage i visible to all; stage i-1 consumed by all
    if (i + STAGES - 1 < count) {
      LoadSparseTile(p, table, sa, g0 + i + STAGES - 1, (i + STAGES - 1) % STAGES);
      LoadDenseTile(p, sb, g0 + i + STAGES - 1, (i + STAGES - 1) % STAGES, n0);
    }
    CpAsyncCommit();
    ComputeStage<kPresplit>(p, sa, sb, i % STAGES, wm, wk, lane, acc, small);
  }
  if (SMALL_ACC) ForEachAcc(p.ncols, [&](int j, int r) { acc[j][r] += small[SMALL_ACC ? j : 0][r]; });
  CpAsyncWait<0>();
  __syncthreads();  // shared memory is reused for the reduction
  ReduceAndStore(p, reinterpret_cast<float*>(smem), wm, wk, lane, acc);
}

// ---- host: ABI ------------------------------------------------------------------------------------
struct State {
  int rows = 0, cols = 0, groups = 0, region_chunks = 0, max_smem = 0, sms = 1;
  bool fixed_slots = false;  // data holds the records in fixed slots (PadRecordsToSlots)
  uint4* data = nullptr;
  uint32_t* goff = nullptr;
  float* ws = nullptr;      // split K: ws_floats floats, for the largest split plan of the n_values, and
  int* counters = nullptr;  // `tiles` counters (0 between launches); launches that overlap on the GPU would race
  size_t ws_floats = 0, tiles = 0;
};
size_t SmemBytes(const State* s, int ncols) {
  const size_t pipeline = TableBytes(s->groups) + size_t{STAGES} * WARPS_M * s->region_chunks * 16 +
                          size_t{STAGES} * BStageFloats(ncols) * 4;
  const size_t reduce = size_t{WARPS_K - 1} * WARPS_M * N_TILE * 16 * 4;  // ReduceAndStore's slots
  return std::max(pipeline, reduce);
}
using KernelFn = void (*)(Params);
KernelFn Kernel() {
  KernelFn f = nullptr;  // a build for another dtype never gets past prepare
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) f = Bitmap3xTf32Spmm<A_PRESPLIT != 0>;
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
  BitmapFormat f;
  std::string why = "dtype " + std::to_string(p->dtype) + " unsupported (fp32 only) or not in this build";
  if (p->dtype != SD_DTYPE_FP32 || Kernel() == nullptr ||
      !BuildBitmapFormat(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, A_PRESPLIT != 0, &f, &why)) {
    snprintf(error, cap, "bitmap_tf32x3 prepare: %s", why.c_str());
    return 1;
  }
  State* s = new State{static_cast<int>(p->rows), static_cast<int>(p->cols), f.groups,
                       static_cast<int>(f.max_group_chunks)};
  std::vector<uint32_t> slots;
  s->fixed_slots = PadRecordsToSlots(f, size_t{SLOT_EXTRA_KB} * 1024, &slots);
  const std::vector<uint32_t>& words = s->fixed_slots ? slots : f.data;
  cudaError_t err = cudaDeviceGetAttribute(&s->max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, p->device);
  if (err == cudaSuccess) err = cudaMalloc(&s->data, words.size() * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&s->goff, f.goff.size() * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMemcpy(s->data, words.data(), words.size() * 4, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(s->goff, f.goff.data(), f.goff.size() * 4, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaFuncSetAttribute(Kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize, s->max_smem);
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
    snprintf(error, cap, "bitmap_tf32x3 prepare: %s (shared memory: %zu bytes needed, %d available)",
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
  Params p{s->data, s->goff, static_cast<const float*>(b), static_cast<float*>(c), s->ws, s->counters,
           s->rows, s->cols, static_cast<int>(n), plan.ncols, s->groups, s->region_chunks, s->fixed_slots,
           n % 4 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0,
           n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 8 == 0};
  Kernel()<<<plan.grid, kThreads, plan.smem, stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
