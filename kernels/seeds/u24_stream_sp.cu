// Unstructured sparsity at 50-75% for small n on Hopper: A stored 2:4 (the first two nonzeros of every aligned
// group of four columns, nm24_stream_sp's compressed values and metadata) plus a residual of the rest, streamed
// from DRAM into the 2:4 sparse tensor cores.
// Strategy: at n <= 16 the product is a stream of A, so bytes per element decide. Dense fp16 is 2 bytes an
// element (dense_stream); 2:4 is 1.125 (values and metadata), and at 70% sparsity 8% of the groups hold a third or
// fourth nonzero, about 0.023 values an element, 4 bytes each in the residual: about 1.22 bytes an element, while
// nm24_stream_sp streams 1.125 at 1.6-1.7x cuBLAS dense on the LLM shapes. At 50% it is about 1.5 (a third of the
// groups overflow), where dense_stream may stay ahead. The main loop is nm24_stream_sp's (every warp owns one
// 16-row tile and one K range, two batches of UNROLL K tiles of loads in flight straight into registers, the
// CTA's WARPS row tiles share one B slab, K split over a thread-block cluster whose partials are pushed to each
// row tile's owner rank over distributed shared memory and summed there in rank order); the residual is
// u14_stream_sp's: one list per (row tile, row % 8), ordered by K tile, of 4-byte entries (value, row / 8,
// column), the warp's slices copied into shared memory by cp.async while the B slab lands and walked by the row
// pair's four lanes after the main loop. A larger n re-streams A once per 16 columns: a small-n seed.
// prepare builds nm24_stream_sp's layout from the first two nonzeros of each group (M padded to 128, K to 64;
// K <= 32768: a residual column has 15 bits) and the residual lists with, per (row tile, K tile boundary,
// row % 8), where each list's slice starts. Edges and layouts (KN, and PyTorch's NK) as nm24_stream_sp's.
// BALANCE_ROWS 1 stores the rows dealt to the row tiles by nonzero count (RowOrder) and the store maps them back.
// THIRDS > 0 moves the third values of up to THIRDS groups a record from the residual into a record of 4-byte
// entries that a second mma.sp on the same B fragments consumes (the walk costs ~25 instructions a lane an entry;
// the mma.sp path a few a K tile): at 70% about the bytes of the residual entries it replaces, few of their
// instructions. Default 32: on uniform 70% rows at n = 16 it was 3-10% faster than 0 (and than 24), slower at 90%,
// where u14_stream_sp is the seed used. SPREAD_RESIDUAL, RESIDUAL_FIRST, BALANCE_ROWS default 0: spread and balanced
// is 2.3-2.9x faster on skewed rows, 4% slower on uniform 70% at 4096² (1% faster at 4096×11008), 15% slower at 90%
// (the search turns them on per task; dev/skewed_residual/README.md).
// sparseditto:seed families=[unstructured, file] dtypes=[fp16, bf16] archs=[sm_90]
// sparseditto:family stream  (WARPS, UNROLL, CTAS_PER_SM, SLAB_KB mean the same in each: crossover may mix them)
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>
#define WARPS 8         // sparseditto:tunable values=[4, 8]
#define UNROLL 4        // sparseditto:tunable values=[2, 4]
#define CTAS_PER_SM 2   // sparseditto:tunable values=[1, 2]
#define SLAB_KB 96      // sparseditto:tunable values=[48, 96]
#define SPREAD_RESIDUAL 0  // sparseditto:tunable values=[0, 1]
#define RESIDUAL_FIRST 0   // sparseditto:tunable values=[0, 1]
#define BALANCE_ROWS 0     // sparseditto:tunable values=[0, 1]
#define THIRDS 32          // sparseditto:tunable values=[0, 24, 32]

namespace {
constexpr int kMPad = 128;      // rows padded to this
constexpr int kBk = 64;         // K tile: two m16n8k32 steps, one metadata record
constexpr int kNt = 16;         // n columns per CTA: two n8 mma tiles
constexpr int kMaxSplits = 8;   // portable cluster size
constexpr int kThreads = 32 * WARPS;
// The owner's slots (rank, owned tile), a 16 x 16 fp32 partial each, lane by lane: PushSlot stays below WARPS + splits
// - 1, so they are sized for the run's split count and the scratch and slab start right after them: a plan with few
// splits and a long slab then fits two CTAs an SM where eight splits' slots would not (u70 8192² at 3 splits: 115 KB
// against 120; on an H100 53.0 µs against 58.7 at n = 16, the same at 4096×11008: docs/results/session_h100_2026-12-08.md).
__host__ __device__ constexpr int RedBytes(int splits) { return (WARPS + splits - 1) * 32 * 8 * 4; }
constexpr int kRedBytes = RedBytes(kMaxSplits);  // the most any plan takes
// The K split's push reduce: rank `split` stores its partial of row tile `warp` into slot PushSlot of the tile's
// owner (rank PushOwner), and an owner reads the slots of its tile w at (w / splits) * splits + 0 .. splits - 1:
// rank order.
__host__ __device__ __forceinline__ int PushOwner(int warp, int splits) { return warp % splits; }
__host__ __device__ __forceinline__ int PushSlot(int warp, int split, int splits) { return (warp / splits) * splits + split; }
// THIRDS > 0: a warp's scratch for spreading a record's third values to their lanes (256 value words, 256 nibbles).
constexpr int kThirds = THIRDS;
constexpr int kThirdsScratchBytes = THIRDS ? WARPS * (256 * 4 + 256) : 0;
constexpr int kPrefixBytes = kRedBytes + kThirdsScratchBytes;  // the most shared memory before the slab
constexpr int kSlabRowBytes = kNt * 2;          // one B row of the slab
constexpr int kMaxSlabTiles = SLAB_KB * 1024 / (kBk * kSlabRowBytes);
static_assert(kMPad % (16 * WARPS) == 0, "a CTA's row tiles divide the padded rows");
static_assert(UNROLL >= 1 && kMaxSlabTiles >= 1, "tiling");
// ---- layouts shared by prepare and the kernel (host + device) ----------------------------------
// Compressed values: tile (mt, kc) = rows 16mt.., logical columns 32kc..; 256 values, lane-major.
__host__ __device__ __forceinline__ int64_t ValTile(int64_t mt, int64_t kc, int64_t kchunks) { return (mt * kchunks + kc) * 256; }
// In a tile lane 4g+t holds a0 = (row g, cc 2t..2t+1), a1 = (row g+8, same cc), a2 = (row g, cc 2t+8..),
// a3 = (row g+8, cc 2t+8..); cc = compressed column 0..15 = group cc/2 of the tile, kept value cc%2.
__host__ __device__ __forceinline__ int ValInTile(int r16, int cc) {
  const int g = r16 & 7, lane = 4 * g + ((cc & 7) >> 1), reg = (r16 >> 3) + 2 * (cc >> 3);
  return lane * 8 + reg * 2 + (cc & 1);
}
// Metadata: record (mt, kpair) of 32 words, nm24_stream_sp's layout: word ((g*2 + sel)*2 + q) is lane (g,
// t=sel)'s operand for step q: bits 0-15 row g, bits 16-31 row g+8, groups 4 sel .. 4 sel + 3, 4 bits a group.
__host__ __device__ __forceinline__ int64_t MetaRecord(int64_t mt, int64_t kpair, int64_t kpairs) { return (mt * kpairs + kpair) * 32; }
__host__ __device__ __forceinline__ int MetaLaneWord(int lane) { return ((lane >> 2) * 2 + (lane & 1)) * 2; }
// Thirds (THIRDS > 0): a group's third value, for the first THIRDS such groups of a record (row tile x K tile of 64,
// stored row then column order), goes to a second mma.sp on the same B fragments instead of the residual, whose walk
// costs ~25 instructions a lane an entry (at 70% sparsity 8% of groups have a third value, under 1% a fourth; fourths
// stay in the residual). Record (mt, kpair) of THIRDS 4-byte entries in slot order: value bits | slot << 16 | nibble
// << 24 (0: unused). A slot is a group's lane and register in the A fragment: lane * 8 + step * 4 + register.
__host__ __device__ __forceinline__ int64_t ThirdRecord(int64_t mt, int64_t kpair, int64_t kpairs) { return (mt * kpairs + kpair) * kThirds; }
__host__ __device__ __forceinline__ int ThirdSlot(int r16, int q, int group) {  // group 0..7 of k32 step q
  const int g = r16 & 7, lane = 4 * g + (group & 3), reg = (r16 >> 3) + 2 * (group >> 2);
  return lane * 8 + q * 4 + reg;
}
// A third value at position p: metadata (p, p + 1), value in the low half; at 3: (0, 3), value in the high half.
__host__ __device__ __forceinline__ uint32_t ThirdNibble(int p) { return p == 3 ? 0xCu : uint32_t(p | ((p + 1) << 2)); }
// Its mma.sp register.
[[maybe_unused]] __host__ __device__ __forceinline__ uint32_t ThirdReg(uint32_t bits16, uint32_t nibble) { return nibble == 0xCu ? bits16 << 16 : bits16; }
// The thirds' metadata as SpreadThirds leaves it: a byte a group, in the order of the nibbles of the mma.sp metadata
// word they make, so that a selector lane reads its word's eight bytes at once (ThirdMetaWord) where building it
// from the quad's registers took a nibble merge and four shuffles a step. Word MetaLaneWord(lane) + q (lane (g, sel),
// step q) is bytes 8 (its index) .. + 7: rows g then g + 8, groups 4 sel .. 4 sel + 3 each. ThirdMetaByte(slot): the
// byte of the group whose register is at `slot` (ThirdSlot). A byte holds its nibble XOR 0x4, so that an empty group
// (byte 0) reads as (0, 1).
[[maybe_unused]] __host__ __device__ __forceinline__ int ThirdMetaByte(int slot) {
  const int lane = slot >> 3, q = (slot >> 2) & 1, reg = slot & 3;  // reg: row half (reg & 1), group half (reg >> 1)
  return ((lane >> 2) * 4 + (reg >> 1) * 2 + q) * 8 + (reg & 1) * 4 + (lane & 3);
}
// The metadata word of eight such bytes (lo: bytes 0-3, hi: 4-7): byte i's nibble at bits 4i.
[[maybe_unused]] __host__ __device__ __forceinline__ uint32_t ThirdMetaWord(uint32_t lo, uint32_t hi) {
  lo |= lo >> 4, hi |= hi >> 4;  // bytes 0 and 2 of each now hold two nibbles
#ifdef __CUDA_ARCH__
  return __byte_perm(lo, hi, 0x6420u) ^ 0x44444444u;
#else
  return ((lo & 0xFFu) | ((lo >> 8) & 0xFF00u) | ((hi & 0xFFu) << 16) | ((hi << 8) & 0xFF000000u)) ^ 0x44444444u;
#endif
}
// Residual: the entries of rows 16mt + g and 16mt + g + 8 form list (mt, g), ordered by K tile; entry = value
// bits | (row in the tile / 8) << 16 | column << 17. ResidualStart(mt, kt, g, ktiles): index into the
// (row tile, K tile boundary 0..ktiles, g) table of where list (mt, g)'s entries of K tiles >= kt begin.
constexpr int64_t kMaxResidualCols = int64_t(1) << 15;
__host__ __device__ __forceinline__ uint32_t ResidualWord(uint32_t bits, int r16, uint32_t col) { return bits | (uint32_t(r16 >> 3) << 16) | (col << 17); }
__host__ __device__ __forceinline__ int64_t ResidualStart(int64_t mt, int64_t kt, int g, int64_t ktiles) { return (mt * (ktiles + 1) + kt) * 8 + g; }
// Swizzled 16-byte chunk c (0, 1) of slab row r: eight consecutive rows at one chunk land in eight
// different 16-byte bank groups (conflict-free ldmatrix).
__host__ __device__ __forceinline__ int SlabChunk(int r, int c) {
  const int lin = r * 2 + c;
  return lin ^ ((lin >> 3) & 7);
}
// Slab offset (elements) lane `lane` hands ldmatrix.x4.trans for K tile j, k32 step q, n8 tile ni: row
// 64j + 32q + lane, so matrix i = k rows 8i..8i+7 of the step = register b_i of mma.sp.
__host__ __device__ __forceinline__ int BFragOffset(int j, int q, int ni, int lane) {
  return SlabChunk(j * kBk + q * 32 + lane, ni) * 8;
}
// NK's slab: K tile j = 16 rows of X (n0 ..) x 64 K values, one 128-byte line a row; 16-byte chunk c of row r
// at chunk c ^ (r % 8) of the line, so the eight rows ldmatrix reads at one chunk are eight bank groups.
__host__ __device__ __forceinline__ int NkSlabOffset(int j, int r, int c) { return j * (kNt * kBk) + r * kBk + ((c ^ (r & 7)) * 8); }
// Slab offset lane `lane` hands ldmatrix.x4 for K tile j, k32 step q, n8 tile ni: X row 8ni + lane % 8, chunk
// 4q + lane / 8, so matrix i holds k = 8i .. 8i + 7 of the step for n = row, which is register b_i of mma.sp.
__host__ __device__ __forceinline__ int NkBFragOffset(int j, int q, int ni, int lane) {
  return NkSlabOffset(j, ni * 8 + (lane & 7), 4 * q + (lane >> 3));
}
// Both layouts' swizzles depend on a row's place within its K tile only, so K tile j's ldmatrix address is tile
// 0's plus j slab tiles (the host tests check every j, q, ni and lane): ComputeBatch adds the tile's bytes to an
// offset the loop computes once, where recomputing the swizzle for each ldmatrix costs integer instructions
// in every K tile (dev/ptx_census/sass.py counts them), which the loop issues beside its mma.
constexpr int kSlabTileBytes = kBk * kSlabRowBytes;
template <bool kNk> __host__ __device__ __forceinline__ uint32_t TileFragBytes(int q, int ni, int lane) {
  return 2u * (kNk ? NkBFragOffset(0, q, ni, lane) : BFragOffset(0, q, ni, lane));
}
// Slab element of B(k, col): k the split's K row (0 .. 64 count - 1), col the CTA's column 0 .. 15.
__host__ __device__ __forceinline__ int SlabElement(bool nk, int k, int col) {
  return nk ? NkSlabOffset(k / kBk, col, (k % kBk) / 8) + k % 8 : SlabChunk(k, col / 8) * 8 + col % 8;
}
// Where C(row, col) goes: C[row][col] (KN) or Y[col][row] (NK).
__host__ __device__ __forceinline__ int64_t OutIndex(bool nk, int64_t row, int64_t col, int64_t m, int64_t n) {
  return nk ? col * m + row : row * n + col;
}
// ---- device primitives --------------------------------------------------------------------------
__device__ __forceinline__ uint32_t SmemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void CpAsync16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SmemAddr(dst)), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ uint4 LdStream16(const void* p) {  // read once: no L1 allocation
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}
__device__ __forceinline__ float FromBits(__half, uint32_t b) { return __half2float(__ushort_as_half(static_cast<unsigned short>(b))); }
__device__ __forceinline__ float FromBits(__nv_bfloat16, uint32_t b) { return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(b))); }
[[maybe_unused]] __device__ __forceinline__ uint32_t LdStream4(const void* p) {
  uint32_t r;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(r) : "l"(p));
  return r;
}
__device__ __forceinline__ uint2 LdStream8(const void* p) {
  uint2 r;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];\n" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}
// ldmatrix at a shared-memory byte address (SmemAddr), so that a tile's address is one add to a lane's offset.
__device__ __forceinline__ void LdmX4(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem) : "memory");
}
__device__ __forceinline__ void LdmX4T(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem) : "memory");
}
__device__ __forceinline__ uint32_t MapRank(uint32_t local, int rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
__device__ __forceinline__ void StoreRemote4(uint32_t addr, const float (&v)[4]) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]) : "memory");
}
// D += A(16x32, 2:4 compressed to 16x16) * B(32x8); b_j holds k = 8j + 2t + {0,1}, n = g; selector 0.
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
struct StreamArgs {
  const void* vals; const uint32_t* meta; const uint32_t* residual; const uint32_t* rstart; const void* b; void* c;
  const uint32_t* thirds;  // THIRDS: the third-value records (ThirdRecord); else unused
  const int32_t* row_of;  // BALANCE_ROWS: stored row -> row of C (-1: none); else unused (stored row = row)
  int64_t m, k, n, kpairs;
  int ktiles, kt_per_split, pair_store /* KN, n even, C 4-byte aligned */, vec /* B's rows (KN: n, NK: K) % 8 == 0, B 16-byte aligned */;
  int slab_bytes, res_cap;  // the slab's shared bytes; entries of one list a warp stages in shared memory
};
// ---- roles --------------------------------------------------------------------------------------
// B rows 64*kt0 .. 64*(kt0+count)-1, columns n0 .. n0+15 into the slab; zero outside K x n. A chunk is 8 values
// along a row of B (KN: 8 columns; NK: 8 K of a row of X, a row's chunks taken by consecutive threads).
template <typename T, bool kNk>
__device__ __forceinline__ void LoadBSlab(T* sb, const StreamArgs& p, int kt0, int count, int64_t n0) {
  const T* b = static_cast<const T*>(p.b);
  for (int i = threadIdx.x; i < count * kBk * 2; i += kThreads) {
    const int r = kNk ? i / (count * 8) : i >> 1, c = kNk ? i % (count * 8) : i & 1;  // NK: X row r, chunk c
    const int64_t k = static_cast<int64_t>(kt0) * kBk + (kNk ? c * 8 : r), col = n0 + (kNk ? r : c * 8);
    T* d = sb + (kNk ? NkSlabOffset(c >> 3, r, c & 7) : SlabChunk(r, c) * 8);
    const bool in = k < p.k && col < p.n;
    const int64_t at = kNk ? col * p.k + k : k * p.n + col;
    if (p.vec) {  // a chunk is wholly inside or wholly outside
      CpAsync16(d, in ? b + at : b, in ? 16 : 0);
      continue;
    }
    const uint16_t* src = reinterpret_cast<const uint16_t*>(b);
    alignas(16) uint16_t w[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const bool inside = kNk ? (col < p.n && k + e < p.k) : (k < p.k && col + e < p.n);
      w[e] = inside ? __ldg(src + at + e) : uint16_t(0);
    }
    *reinterpret_cast<uint4*>(d) = *reinterpret_cast<const uint4*>(w);
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// A operands of K tiles j0 .. j0+UNROLL-1 of a warp's row tile (those < count): two 16-byte value loads
// and one 8-byte metadata load a lane per tile, all issued before any is used.
struct Batch {
  uint4 a[UNROLL][2];
  uint2 e[UNROLL];
#if THIRDS
  uint32_t t[UNROLL];  // lanes < THIRDS: one entry of the tile's third-value record
#endif
};
template <typename T>
__device__ __forceinline__ void LoadBatch(const T* vals, const uint32_t* meta, const uint32_t* thirds, int j0, int count, Batch& x) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
    x.a[u][0] = LdStream16(vals + static_cast<int64_t>(j0 + u) * 512);
    x.a[u][1] = LdStream16(vals + static_cast<int64_t>(j0 + u) * 512 + 256);
    x.e[u] = LdStream8(meta + static_cast<int64_t>(j0 + u) * 32);
#if THIRDS
    x.t[u] = (threadIdx.x & 31) < kThirds ? LdStream4(thirds + static_cast<int64_t>(j0 + u) * kThirds) : 0u;
#endif
  }
}
#if THIRDS
// A record's thirds into the warp's zeroed scratch: each entry's register at its slot and its nibble at its metadata
// byte (ThirdMetaByte; the lanes then read their slots and words step by step, MmaThirds, and zero them behind).
__device__ __forceinline__ void SpreadThirds(uint32_t entry, uint32_t* scratch) {
  const uint32_t slot = (entry >> 16) & 0xFFu, nibble = entry >> 24;
  if (nibble) scratch[slot] = ThirdReg(entry & 0xFFFFu, nibble), reinterpret_cast<uint8_t*>(scratch + 256)[ThirdMetaByte(slot)] = static_cast<uint8_t>(nibble ^ 0x4u);
  __syncwarp();
}
// Step q's third values as mma.sp's A operand (the lane's slots 8 lane + 4q .. + 3 and its word's metadata bytes),
// D += thirds * B; what was read is zeroed, and after step 1 the warp is in step for the next SpreadThirds. Lanes
// t = 2, 3 read the words of t = 0, 1, which zero them: mma.sp (sparsity selector 0) reads metadata from t = 0, 1 only.
template <typename T>
__device__ __forceinline__ void MmaThirds(uint32_t* scratch, int q, const uint32_t (&b0)[4], const uint32_t (&b1)[4], float (&acc)[2][4]) {
  const int lane = threadIdx.x & 31, t = lane & 3;
  uint4* slots = reinterpret_cast<uint4*>(scratch + lane * 8 + q * 4);
  uint2* bytes = reinterpret_cast<uint2*>(scratch + 256) + MetaLaneWord(lane) + q;
  const uint4 a = *slots;  // the registers (0: no third value)
  const uint2 word = *bytes;
  *slots = make_uint4(0, 0, 0, 0);
  if (t < 2) *bytes = make_uint2(0, 0);
  const uint32_t e = ThirdMetaWord(word.x, word.y);
  MmaSp<T>(acc[0], a, b0, e);
  MmaSp<T>(acc[1], a, b1, e);
  if (q == 1) __syncwarp();  // every slot read before the next record's entries land
}
#endif
template <typename T, bool kNk>
__device__ __forceinline__ void ComputeBatch(const Batch& x, const T* sb, uint32_t* scratch, int j0, int count, float (&acc)[2][4]) {
  const int lane = threadIdx.x & 31;
  const uint32_t batch = SmemAddr(sb) + j0 * kSlabTileBytes;  // K tile j0 of the slab
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
#if THIRDS
    SpreadThirds(x.t[u], scratch);
#endif
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      uint32_t b0[4], b1[4];
      const uint32_t tile = batch + u * kSlabTileBytes;
      if constexpr (kNk) {
        LdmX4(b0, tile + TileFragBytes<true>(q, 0, lane));
        LdmX4(b1, tile + TileFragBytes<true>(q, 1, lane));
      } else {
        LdmX4T(b0, tile + TileFragBytes<false>(q, 0, lane));
        LdmX4T(b1, tile + TileFragBytes<false>(q, 1, lane));
      }
      MmaSp<T>(acc[0], x.a[u][q], b0, q ? x.e[u].y : x.e[u].x);
      MmaSp<T>(acc[1], x.a[u][q], b1, q ? x.e[u].y : x.e[u].x);
#if THIRDS
      MmaThirds<T>(scratch, q, b0, b1, acc);
#endif
    }
  }
}

// The slices of the warp's eight residual lists for K tiles kt0 .. kt0+count-1: [begin, end) of list g (the
// lane's row pair), and its first res_cap entries copied to rs[g * res_cap ..] (cp.async, 4 bytes an entry;
// committed with the caller's next group).
struct ResidualSlice { uint32_t begin, end; };
__device__ __forceinline__ ResidualSlice FindResidual(const StreamArgs& p, int64_t mt, int kt0, int count) {
  const int g = (threadIdx.x & 31) >> 2;
  return {__ldg(p.rstart + ResidualStart(mt, kt0, g, p.ktiles)), __ldg(p.rstart + ResidualStart(mt, kt0 + count, g, p.ktiles))};
}
__device__ __forceinline__ void StageResidual(const StreamArgs& p, const ResidualSlice& r, uint32_t* rs) {
  const int lane = threadIdx.x & 31, g = lane >> 2;
  const uint32_t have = min(r.end - r.begin, static_cast<uint32_t>(p.res_cap));
  for (uint32_t i = lane & 3; i < have; i += 4)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(SmemAddr(rs + g * p.res_cap + i)), "l"(p.residual + r.begin + i) : "memory");
}
// Entry w against the slab: value * B[column][the lane's columns] into the accumulators of its row.
template <typename T, bool kNk>
__device__ __forceinline__ void AddResidual(uint32_t w, const T* sb, int kt0, float (&acc)[2][4]) {
  const int t = threadIdx.x & 3, row = static_cast<int>(w >> 17) - kt0 * kBk;
  const float v = FromBits(T(), w & 0xFFFFu);
  const bool high = (w >> 16) & 1u;
  const float lo = high ? 0.0f : v, hi = high ? v : 0.0f;  // one select an entry, four FMAs a column pair
#pragma unroll
  for (int ni = 0; ni < 2; ++ni) {
    const uint16_t* at = reinterpret_cast<const uint16_t*>(sb) + SlabElement(kNk, row, ni * 8 + 2 * t);  // B(row, 2t + {0, 1})
    const uint32_t pair = kNk ? at[0] | (uint32_t(reinterpret_cast<const uint16_t*>(sb)[SlabElement(true, row, ni * 8 + 2 * t + 1)]) << 16)
                              : *reinterpret_cast<const uint32_t*>(at);
    const float b0 = FromBits(T(), pair & 0xFFFFu), b1 = FromBits(T(), pair >> 16);
    acc[ni][0] = fmaf(lo, b0, acc[ni][0]), acc[ni][1] = fmaf(lo, b1, acc[ni][1]);  // constant indices: acc stays in registers
    acc[ni][2] = fmaf(hi, b0, acc[ni][2]), acc[ni][3] = fmaf(hi, b1, acc[ni][3]);
  }
}
// The warp's residual after its main loop. SPREAD_RESIDUAL 0: lanes 4g .. 4g+3 walk list g in order, so the warp
// waits on its longest list. SPREAD_RESIDUAL 1: the lists in turn, quad q taking entries q, q + 8, .. of each; the
// quads' partials of list g (each in quad g's fragment layout) are summed by shuffles and quad g adds them, so a
// list far longer than the rest (a dense row pair of a skewed matrix) costs an eighth of its length. Staged entries
// come from shared memory, any beyond res_cap from global. The default stays 0, the walk measured on a GPU, until
// the spread walk is timed against it on uniform and skewed rows (dev/skewed_residual); the search may pick 1.
template <typename T, bool kNk>
__device__ __forceinline__ void ApplyResidual(const StreamArgs& p, const ResidualSlice& r, const uint32_t* rs, const T* sb, int kt0,
                                              float (&acc)[2][4]) {
  const int q = (threadIdx.x & 31) >> 2;
  const uint32_t cap = static_cast<uint32_t>(p.res_cap);
#if SPREAD_RESIDUAL
#pragma unroll 1
  for (int g = 0; g < 8; ++g) {
    const uint32_t begin = __shfl_sync(0xffffffffu, r.begin, 4 * g), have = __shfl_sync(0xffffffffu, r.end, 4 * g) - begin;
    if (have == 0) continue;  // the same for every lane
    const uint32_t* staged = rs + g * p.res_cap;
    float part[2][4] = {};
#pragma unroll 4
    for (uint32_t i = q; i < have; i += 8) AddResidual<T, kNk>(i < cap ? staged[i] : __ldg(p.residual + begin + i), sb, kt0, part);
#pragma unroll
    for (int ni = 0; ni < 2; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float x = part[ni][j];
#pragma unroll
        for (int m = 4; m < 32; m <<= 1) x += __shfl_xor_sync(0xffffffffu, x, m);  // over the quads, lane t with lane t
        acc[ni][j] += q == g ? x : 0.0f;
      }
  }
#else
  const uint32_t have = r.end - r.begin, most = __reduce_max_sync(0xffffffffu, have);
  const uint32_t* mine = rs + q * p.res_cap;
#pragma unroll 4
  for (uint32_t i = 0; i < most; ++i) {
    if (i >= have) continue;
    AddResidual<T, kNk>(i < cap ? mine[i] : __ldg(p.residual + r.begin + i), sb, kt0, acc);
  }
#endif
}

// Accumulator i of n8 tile ni: stored row 16mt + lane/4 + 8(i/2) (C's row of that number, or row_of's under
// BALANCE_ROWS), column n0 + 8ni + 2(lane%4) + i%2, at OutIndex.
template <typename T, bool kNk>
__device__ __forceinline__ void StoreTile(const StreamArgs& p, int64_t mt, int64_t n0, const float (&acc)[2][4]) {
  const int lane = threadIdx.x & 31;
  T* c = static_cast<T*>(p.c);
#pragma unroll
  for (int ni = 0; ni < 2; ++ni)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t stored = mt * 16 + (lane >> 2) + 8 * h, col = n0 + ni * 8 + 2 * (lane & 3);
#if BALANCE_ROWS
      const int64_t row = __ldg(p.row_of + stored);
      if (row < 0 || col >= p.n) continue;
#else
      const int64_t row = stored;
      if (row >= p.m || col >= p.n) continue;
#endif
      const float x = acc[ni][2 * h], y = acc[ni][2 * h + 1];
      if (!kNk && p.pair_store) {
        *reinterpret_cast<uint32_t*>(c + OutIndex(false, row, col, p.m, p.n)) = Bits(FromF<T>(x)) | (Bits(FromF<T>(y)) << 16);
        continue;
      }
      c[OutIndex(kNk, row, col, p.m, p.n)] = FromF<T>(x);
      if (col + 1 < p.n) c[OutIndex(kNk, row, col + 1, p.m, p.n)] = FromF<T>(y);
    }
}

// Grid (splits, row groups, n tiles), cluster (splits, 1, 1): block x = K split = cluster rank.
template <typename T, bool kNk>
__global__ void __launch_bounds__(kThreads, CTAS_PER_SM) U24StreamKernel(StreamArgs p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  float* red = reinterpret_cast<float*>(smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, split = blockIdx.x, splits = gridDim.x;
  const int red_bytes = RedBytes(splits);  // MakePlan's
  T* sb = reinterpret_cast<T*>(smem + red_bytes + kThirdsScratchBytes);
  uint32_t* rs = reinterpret_cast<uint32_t*>(smem + red_bytes + kThirdsScratchBytes + p.slab_bytes) + warp * 8 * p.res_cap;
  uint32_t* scratch = reinterpret_cast<uint32_t*>(smem + red_bytes) + warp * (256 + 64);  // THIRDS only
#if THIRDS
  reinterpret_cast<uint4*>(scratch)[2 * lane] = reinterpret_cast<uint4*>(scratch)[2 * lane + 1] = make_uint4(0, 0, 0, 0);
  reinterpret_cast<uint2*>(scratch + 256)[lane] = make_uint2(0, 0);  // SpreadThirds keeps it zero between records
#endif
  const int64_t mt = static_cast<int64_t>(blockIdx.y) * WARPS + warp, n0 = static_cast<int64_t>(blockIdx.z) * kNt;
  const int kt0 = split * p.kt_per_split, count = min(p.ktiles - kt0, p.kt_per_split);
  // A rank stores into another's shared memory only once that rank has started: this arrive, the wait below.
  if (splits > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  LoadBSlab<T, kNk>(sb, p, kt0, count, n0);
  const T* vals = static_cast<const T*>(p.vals) + ValTile(mt, 2 * static_cast<int64_t>(kt0), 2 * p.kpairs) + lane * 8;
  const uint32_t* meta = p.meta + MetaRecord(mt, kt0, p.kpairs) + MetaLaneWord(lane);
  const uint32_t* thirds = THIRDS ? p.thirds + ThirdRecord(mt, kt0, p.kpairs) + lane : nullptr;
  const ResidualSlice res = FindResidual(p, mt, kt0, count);
  float acc[2][4] = {};
  Batch x, y;  // software pipeline: the next batch's loads are in flight while this one computes
  LoadBatch<T>(vals, meta, thirds, 0, count, x);
  StageResidual(p, res, rs);
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();  // the B slab and the residual landed (the first batch's loads were issued before the wait)
#if RESIDUAL_FIRST
  // The residual walk is instructions and shared-memory reads, the stream is waits on DRAM: walk it while the first
  // two batches land, then the same pipeline one batch ahead.
  LoadBatch<T>(vals, meta, thirds, UNROLL, count, y);
  ApplyResidual<T, kNk>(p, res, rs, sb, kt0, acc);
  for (int j0 = 0; j0 < count; j0 += 2 * UNROLL) {
    ComputeBatch<T, kNk>(x, sb, scratch, j0, count, acc);
    LoadBatch<T>(vals, meta, thirds, j0 + 2 * UNROLL, count, x);
    ComputeBatch<T, kNk>(y, sb, scratch, j0 + UNROLL, count, acc);
    LoadBatch<T>(vals, meta, thirds, j0 + 3 * UNROLL, count, y);
  }
#else
  for (int j0 = 0; j0 < count; j0 += 2 * UNROLL) {
    LoadBatch<T>(vals, meta, thirds, j0 + UNROLL, count, y);
    ComputeBatch<T, kNk>(x, sb, scratch, j0, count, acc);
    LoadBatch<T>(vals, meta, thirds, j0 + 2 * UNROLL, count, x);
    ComputeBatch<T, kNk>(y, sb, scratch, j0 + UNROLL, count, acc);
  }
  ApplyResidual<T, kNk>(p, res, rs, sb, kt0, acc);  // after the stream (RESIDUAL_FIRST 0: the order a GPU has timed)
#endif
  if (splits == 1) return StoreTile<T, kNk>(p, mt, n0, acc);
  // Push, not pull: each rank stores its partial of row tile `warp` into the owner's slot (rank, tile) over
  // DSMEM and arrives (release) on the cluster barrier; non-owners leave at once, owners wait (acquire) and sum.
  // The barrier, not an mbarrier the owner counts pushes on, orders the stores: racecheck follows it (it reports a
  // DSMEM store into a block that only an mbarrier keeps alive as a store into a block that may have exited), and
  // on an H100 the two ran equally fast (dev/racecheck_sync).
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");  // every rank has started
  const int owner = PushOwner(warp, splits), slot = PushSlot(warp, split, splits);
  const uint32_t dst = MapRank(SmemAddr(red + (slot * 32 + lane) * 8), owner);
  StoreRemote4(dst, acc[0]), StoreRemote4(dst + 16, acc[1]);
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  if (owner != split) return;
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");  // every rank's pushes landed
  float sum[2][4] = {};
  for (int s = 0; s < splits; ++s) {  // rank order: deterministic
    const float4* theirs = reinterpret_cast<const float4*>(red + (PushSlot(warp, s, splits) * 32 + lane) * 8);
    const float4 x = theirs[0], y = theirs[1];
    sum[0][0] += x.x, sum[0][1] += x.y, sum[0][2] += x.z, sum[0][3] += x.w;
    sum[1][0] += y.x, sum[1][1] += y.y, sum[1][2] += y.z, sum[1][3] += y.w;
  }
  StoreTile<T, kNk>(p, mt, n0, sum);
#endif
}

// ---- host: the 1:4 format with its residual (unit tested) ---------------------------------------
struct U24Host {
  int64_t rows = 0, cols = 0, mp = 0, kp = 0;  // mp % 128 == 0, kp % 64 == 0
  std::vector<float> vals;                     // (mp/16) * (kp/32) tiles of 256, see ValTile/ValInTile
  std::vector<uint32_t> meta;                  // (mp/16) * (kp/64) records of 32 words, see MetaRecord
  std::vector<uint32_t> residual_row, residual_col;  // row in the tile (0-15), column; lists (mt, g) in order
  std::vector<float> residual_val;
  std::vector<uint32_t> rstart;                // (mp/16) * (kp/64 + 1) * 8, see ResidualStart
  std::vector<int32_t> row_of;                 // mp: stored row -> row of the matrix, -1 for padding (see RowOrder)
  int thirds = 0;                              // third-value entries a record (THIRDS of the build)
  std::vector<float> third_val;                // thirds > 0: (mp/16) * (kp/64) records of 256 slots (ThirdSlot)
  std::vector<uint8_t> third_nibble;           // per slot: ThirdNibble, 0 where the slot holds none
};
// Stored row -> matrix row (-1: padding), u14_stream_sp's: identity unless `balance`, then the rows by nonzero count
// dealt to the row tiles in turns, the k-th a tile gets at tile row k (k < 8) or 23 - k, so the residual that
// heavy rows carry spreads over every tile and list.
std::vector<int32_t> RowOrder(int64_t rows, int64_t mp, const int32_t* ro, bool balance) {
  std::vector<int32_t> row_of(mp, -1);
  if (!balance) {
    for (int64_t r = 0; r < rows; ++r) row_of[r] = static_cast<int32_t>(r);
    return row_of;
  }
  std::vector<int32_t> by_count(rows);
  for (int64_t r = 0; r < rows; ++r) by_count[r] = static_cast<int32_t>(r);
  std::stable_sort(by_count.begin(), by_count.end(),
                   [ro](int32_t x, int32_t y) { return int64_t(ro[x + 1]) - ro[x] > int64_t(ro[y + 1]) - ro[y]; });
  const int64_t tiles = (rows + 15) / 16;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t turn = i / tiles, at = i % tiles, tile = turn % 2 ? tiles - 1 - at : at;
    row_of[tile * 16 + (turn < 8 ? turn : 23 - turn)] = by_count[i];
  }
  return row_of;
}
// Keeps the first two nonzeros of every group of four in nm24_stream_sp's 2:4 layout (metadata as it builds it:
// an empty group (0, 1), one nonzero paired with an explicit zero) and lists the third and fourth in the
// residual; entries with value 0 are dropped. Rows are stored in RowOrder(.., balance)'s order. False on malformed
// input.
bool BuildU24(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, U24Host* out, std::string* why,
              bool balance = BALANCE_ROWS != 0, int thirds = kThirds) {
  if (rows <= 0 || cols <= 0) return (*why = "bad shape", false);
  for (int64_t r = 0; r < rows; ++r)
    if (ro[r] > ro[r + 1]) return (*why = "row offsets decrease", false);
  if (cols > kMaxResidualCols) return (*why = "K = " + std::to_string(cols) + " above " + std::to_string(kMaxResidualCols) + " (15-bit residual columns)", false);
  out->rows = rows, out->cols = cols;
  out->mp = (rows + kMPad - 1) / kMPad * kMPad, out->kp = (cols + kBk - 1) / kBk * kBk;
  const int64_t kchunks = out->kp / 32, kpairs = out->kp / kBk, groups = out->kp / 4, row_tiles = out->mp / 16;
  out->vals.assign(row_tiles * kchunks * 256, 0.0f);
  out->meta.assign(row_tiles * kpairs * 32, 0x44444444u);
  struct Extra { int64_t kt, e; int r16; };  // K tile, CSR entry, stored row in the tile
  std::vector<std::vector<Extra>> extra(row_tiles * 8);  // per list
  std::vector<int8_t> idx(groups * 2);  // per group of the current row: kept positions and values
  std::vector<float> kept(groups * 2);
  std::vector<int64_t> beyond(groups * 2);  // per group of the current row: CSR entries of its third and fourth values
  out->thirds = thirds;
  out->third_val.assign(thirds ? row_tiles * kpairs * 256 : 0, 0.0f);
  out->third_nibble.assign(out->third_val.size(), 0);
  std::vector<int> thirds_used(row_tiles * kpairs, 0);
  out->row_of = RowOrder(rows, out->mp, ro, balance);
  for (int64_t stored = 0; stored < out->mp; ++stored) {
    const int64_t r = out->row_of[stored];
    if (r < 0) continue;
    std::fill(idx.begin(), idx.end(), -1);
    std::fill(kept.begin(), kept.end(), 0.0f);
    std::fill(beyond.begin(), beyond.end(), -1);
    const int64_t mt = stored / 16;
    const int r16 = static_cast<int>(stored % 16), g = r16 % 8, half = r16 / 8;
    for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
      if (ci[e] < 0 || ci[e] >= cols || (e > ro[r] && ci[e] <= ci[e - 1])) return (*why = "column indices out of range or not increasing", false);
      if (v[e] == 0.0f) continue;
      const int64_t gi = ci[e] / 4;
      const int slot = idx[2 * gi] < 0 ? 0 : idx[2 * gi + 1] < 0 ? 1 : 2;
      if (slot == 2) {
        beyond[2 * gi + (beyond[2 * gi] < 0 ? 0 : 1)] = e;  // at most two more: the group has four columns
        continue;
      }
      idx[2 * gi + slot] = static_cast<int8_t>(ci[e] % 4);  // columns increase: idx0 < idx1
      kept[2 * gi + slot] = v[e];
    }
    for (int64_t gi = 0; gi < groups; ++gi) {
      int i0 = idx[2 * gi], i1 = idx[2 * gi + 1];
      if (i0 < 0) { i0 = 0; i1 = 1; }          // empty group: indices (0, 1), zeros
      else if (i1 < 0 && i0 < 3) { i1 = 3; }   // one nonzero: pair it with an explicit zero at 3
      else if (i1 < 0) { i0 = 2; i1 = 3; std::swap(kept[2 * gi], kept[2 * gi + 1]); }  // nonzero at 3: zero at 2
      const int64_t kc = gi / 8;
      const int j = static_cast<int>(gi % 8), sel = j / 4;
      out->vals[ValTile(mt, kc, kchunks) + ValInTile(r16, 2 * j)] = kept[2 * gi];
      out->vals[ValTile(mt, kc, kchunks) + ValInTile(r16, 2 * j + 1)] = kept[2 * gi + 1];
      uint32_t& word = out->meta[MetaRecord(mt, kc / 2, kpairs) + MetaLaneWord(4 * g + sel) + kc % 2];
      const int shift = half * 16 + (j % 4) * 4;
      word = (word & ~(0xFu << shift)) | (static_cast<uint32_t>(i0 | (i1 << 2)) << shift);
      const int64_t e3 = beyond[2 * gi], e4 = beyond[2 * gi + 1];
      if (e3 < 0) continue;
      const int64_t rec = mt * kpairs + kc / 2;
      if (thirds_used[rec] < thirds) {  // the record's next entry
        ++thirds_used[rec];
        const int64_t at = rec * 256 + ThirdSlot(r16, static_cast<int>(kc % 2), j);
        out->third_val[at] = v[e3], out->third_nibble[at] = static_cast<uint8_t>(ThirdNibble(ci[e3] % 4));
      } else {
        extra[mt * 8 + g].push_back({kc / 2, e3, r16});
      }
      if (e4 >= 0) extra[mt * 8 + g].push_back({kc / 2, e4, r16});
    }
  }
  out->residual_row.clear(), out->residual_col.clear(), out->residual_val.clear();
  out->rstart.assign(row_tiles * (kpairs + 1) * 8, 0);
  for (int64_t mt = 0; mt < row_tiles; ++mt)
    for (int g = 0; g < 8; ++g) {
      std::vector<Extra>& list = extra[mt * 8 + g];
      std::stable_sort(list.begin(), list.end(), [](const Extra& x, const Extra& y) { return x.kt < y.kt; });
      size_t i = 0;
      for (int64_t kt = 0; kt <= kpairs; ++kt) {
        out->rstart[ResidualStart(mt, kt, g, kpairs)] = static_cast<uint32_t>(out->residual_val.size());
        for (; i < list.size() && list[i].kt == kt; ++i) {
          const int64_t e = list[i].e;
          out->residual_row.push_back(static_cast<uint32_t>(list[i].r16));
          out->residual_col.push_back(static_cast<uint32_t>(ci[e]));
          out->residual_val.push_back(v[e]);
        }
      }
      if (out->residual_val.size() > 0x7FFFFFFFu) return (*why = "residual too large", false);
    }
  return true;
}
// How a run is cut: K splits (the cluster size) so that about CTAS_PER_SM CTAs per SM run, at most
// max_splits (<= 8) and at least as many as keep a split's B slab within SLAB_KB; splits == 0 when K needs
// more than 8 slabs. prepare weighs each lower max_splits too (FittedPlan, PickPlan).
struct Plan { int splits = 0, kt_per_split = 0, res_cap = 0, res_longest = 0; size_t smem = 0; int64_t clusters = 0; };
Plan MakePlan(int64_t mp, int64_t kp, int64_t n, int sms, int max_splits = kMaxSplits) {
  Plan plan;
  const int64_t ktiles = kp / kBk;
  plan.clusters = (mp / (16 * WARPS)) * ((n + kNt - 1) / kNt);
  int64_t s = (static_cast<int64_t>(CTAS_PER_SM) * sms + plan.clusters - 1) / plan.clusters;
  s = std::max<int64_t>({1, std::min<int64_t>({s, max_splits, kMaxSplits, ktiles}), (ktiles + kMaxSlabTiles - 1) / kMaxSlabTiles});
  const int64_t per = (ktiles + s - 1) / s;
  if (s > kMaxSplits || per > kMaxSlabTiles) return plan;
  plan.kt_per_split = static_cast<int>(per);
  plan.splits = static_cast<int>((ktiles + per - 1) / per);
  plan.smem = RedBytes(plan.splits) + kThirdsScratchBytes + static_cast<size_t>(per) * kBk * kSlabRowBytes;
  return plan;
}
// Shared memory a CTA may take: the CTAS_PER_SM share of the SM's, but at least the reduction and the largest
// slab (then fewer CTAs fit), at most the opt-in limit.
size_t SmemBudget(int optin_per_block, int per_sm) {
  const size_t share = static_cast<size_t>(per_sm) / CTAS_PER_SM - 1024, least = kPrefixBytes + size_t(kMaxSlabTiles) * kBk * kSlabRowBytes;
  return std::min<size_t>(optin_per_block, std::max(share, least));
}
// The plan with its residual staging: res_cap = the longest slice of any list over the plan's K ranges, as
// far as the shared memory left after the slab holds (8 lists a warp); longer slices read the rest from global.
Plan WithResidual(Plan plan, const std::vector<uint32_t>& rstart, int64_t mp, int64_t kp, size_t budget) {
  if (plan.splits == 0) return plan;
  const int64_t ktiles = kp / kBk;
  uint32_t longest = 0;
  for (int64_t mt = 0; mt < mp / 16; ++mt)
    for (int g = 0; g < 8; ++g)
      for (int64_t kt0 = 0; kt0 < ktiles; kt0 += plan.kt_per_split) {
        const int64_t end = std::min<int64_t>(kt0 + plan.kt_per_split, ktiles);
        longest = std::max(longest, rstart[ResidualStart(mt, end, g, ktiles)] - rstart[ResidualStart(mt, kt0, g, ktiles)]);
      }
  const size_t per_entry = size_t(WARPS) * 8 * 4, room = budget > plan.smem ? (budget - plan.smem) / per_entry : 0;
  plan.res_longest = static_cast<int>(longest);
  plan.res_cap = static_cast<int>(std::min<size_t>(longest, room));
  plan.smem += plan.res_cap * per_entry;
  return plan;
}
struct State {
  int dtype = 0, sms = 1;
  bool nk = false;  // sd_problem.layout == SD_LAYOUT_NK
  int64_t m = 0, k = 0, mp = 0, kp = 0;
  size_t smem_budget = 0;
  std::vector<uint32_t> rstart;  // host copy, to size each plan's residual staging
  void* vals = nullptr; uint32_t* meta = nullptr; uint32_t* residual = nullptr; uint32_t* rstart_d = nullptr;
  uint32_t* thirds = nullptr;  // THIRDS only
  int32_t* row_of = nullptr;  // BALANCE_ROWS only
  std::vector<std::pair<int64_t, Plan>> plans;  // per prepared n
};
cudaLaunchConfig_t LaunchConfig(const State* s, const Plan& plan, int64_t n, cudaStream_t stream, cudaLaunchAttribute* cluster) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(plan.splits, static_cast<unsigned>(s->mp / (16 * WARPS)), static_cast<unsigned>((n + kNt - 1) / kNt));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = plan.smem;
  config.stream = stream;
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim.x = plan.splits, cluster->val.clusterDim.y = 1, cluster->val.clusterDim.z = 1;
  config.attrs = cluster, config.numAttrs = 1;
  return config;
}
// Which plan runs, of those FittedPlan weighs (widest_first[0] has the most splits; active[i]: clusters of
// widest_first[i] the device holds at once): the widest that runs in one wave with its residual wholly staged,
// else the widest. Fewer splits buy one wave (a second wave of clusters costs more than the K parallelism it buys),
// but only when they get it: fewer splits that still leave a second wave only lengthen every CTA, and a plan whose
// residual lists outgrow shared memory walks the rest from global memory, one dependent load an entry (both
// slower on an H100: dev/u24_plan). Pure, for the unit test.
size_t PickPlan(const std::vector<Plan>& widest_first, const std::vector<int>& active) {
  for (size_t i = 0; i < widest_first.size() && i < active.size(); ++i)
    if (active[i] >= widest_first[i].clusters && widest_first[i].res_cap >= widest_first[i].res_longest) return i;
  return 0;
}
// The plan for n: every distinct split count from the widest down to the slab's least, weighed by PickPlan.
template <typename T, bool kNk> Plan FittedPlan(const State* s, int64_t n) {
  auto make = [s, n](int cap) { return WithResidual(MakePlan(s->mp, s->kp, n, s->sms, cap), s->rstart, s->mp, s->kp, s->smem_budget); };
  std::vector<Plan> widest_first{make(kMaxSplits)};
  for (int cap = widest_first[0].splits - 1; cap >= 1; --cap) {
    const Plan fewer = make(cap);
    if (fewer.splits == 0 || fewer.splits >= widest_first.back().splits) break;  // the slab needs these splits
    widest_first.push_back(fewer);
  }
  std::vector<int> active;
  for (const Plan& plan : widest_first) {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = LaunchConfig(s, plan, n, nullptr, &cluster);
    int held = 0;  // a query that fails counts as no cluster held (that plan is not picked for one wave); its error is cleared
    if (plan.splits > 0 && cudaOccupancyMaxActiveClusters(&held, U24StreamKernel<T, kNk>, &config) != cudaSuccess) {
      held = 0;
      (void)cudaGetLastError();
    }
    active.push_back(held);
  }
  return widest_first[PickPlan(widest_first, active)];
}
template <typename T, bool kNk> void Launch(const State* s, const Plan& plan, const void* b, void* c, int64_t n, cudaStream_t stream) {
  StreamArgs a{s->vals, s->meta, s->residual, s->rstart_d, b, c, s->thirds, s->row_of, s->m, s->k, n, s->kp / kBk, static_cast<int>(s->kp / kBk), plan.kt_per_split,
               (!kNk && n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0) ? 1 : 0,
               ((kNk ? s->k : n) % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0,
               plan.kt_per_split * kBk * kSlabRowBytes, plan.res_cap};
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config = LaunchConfig(s, plan, n, stream, &cluster);
  cudaLaunchKernelEx(&config, U24StreamKernel<T, kNk>, a);
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
template <typename T> uint32_t Bits16(float v) {
  const T x(v);  // round to nearest; exact for the harness's values
  uint16_t bits;
  memcpy(&bits, &x, 2);
  return bits;
}
// The third-value records (see ThirdRecord) as the kernel reads them: h.thirds entries a record.
template <typename T> std::vector<uint32_t> ThirdWords(const U24Host& h) {
  std::vector<uint32_t> words(std::max<size_t>(h.third_val.size() / 256 * h.thirds, 1), 0);
  for (size_t rec = 0; rec < h.third_val.size() / 256; ++rec)
    for (int slot = 0, used = 0; slot < 256; ++slot)
      if (h.third_nibble[rec * 256 + slot] != 0)
        words[rec * h.thirds + used++] = Bits16<T>(h.third_val[rec * 256 + slot]) | (uint32_t(slot) << 16) | (uint32_t(h.third_nibble[rec * 256 + slot]) << 24);
  return words;
}
template <typename T> cudaError_t UploadResidual(const U24Host& h, uint32_t** d) {  // see ResidualWord
  std::vector<uint32_t> entries(std::max<size_t>(h.residual_val.size(), 1), 0);
  for (size_t i = 0; i < h.residual_val.size(); ++i)
    entries[i] = ResidualWord(Bits16<T>(h.residual_val[i]), static_cast<int>(h.residual_row[i]), h.residual_col[i]);
  return Upload(entries, reinterpret_cast<void**>(d));
}
// Room for the largest plan, then the plan of every n prepare was given.
template <typename T, bool kNk> cudaError_t ConfigureAndPlan(State* s, const sd_problem* p) {
  cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&U24StreamKernel<T, kNk>), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(s->smem_budget));
  for (int i = 0; e == cudaSuccess && i < p->num_n_values; ++i) s->plans.emplace_back(p->n_values[i], FittedPlan<T, kNk>(s, p->n_values[i]));
  return e;
}
// Only the layouts of this build are instantiated (SPARSEDITTO_BUILDS_LAYOUT); prepare refuses the others.
template <typename T> cudaError_t ConfigureLayout(State* s, const sd_problem* p) {
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_NK)) if (s->nk) return ConfigureAndPlan<T, true>(s, p);
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_KN)) if (!s->nk) return ConfigureAndPlan<T, false>(s, p);
  return cudaErrorInvalidValue;
}
template <typename T> void LaunchLayout(const State* s, const Plan& plan, const void* b, void* c, int64_t n, cudaStream_t stream) {
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_NK)) if (s->nk) return Launch<T, true>(s, plan, b, c, n, stream);
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_KN)) if (!s->nk) return Launch<T, false>(s, plan, b, c, n, stream);
}

}  // namespace

SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) { return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK); }

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->vals), cudaFree(s->meta), cudaFree(s->residual), cudaFree(s->rstart_d), cudaFree(s->row_of), cudaFree(s->thirds);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  U24Host h;
  std::string why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  int major = 0, sms = 1, optin = 0, per_sm = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, p->device);
  if (e == cudaSuccess && major < 9) why = "needs thread-block clusters (sm_90 or newer), device is sm_" + std::to_string(major) + "x";
  const bool layout_ok = (p->layout == SD_LAYOUT_KN || p->layout == SD_LAYOUT_NK) && SPARSEDITTO_BUILDS_LAYOUT(p->layout);
  if (!layout_ok) why = "layout " + std::to_string(p->layout) + " unsupported (KN, NK only) or not in this build";
  bool ok = e == cudaSuccess && major >= 9 && layout_ok && (p->dtype == SD_DTYPE_FP16 || p->dtype == SD_DTYPE_BF16) && SPARSEDITTO_BUILDS_DTYPE(p->dtype) &&
            BuildU24(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, &h, &why);
  for (int i = 0; ok && i < p->num_n_values; ++i) {
    if (MakePlan(h.mp, h.kp, p->n_values[i], sms).splits > 0) continue;
    why = "K = " + std::to_string(p->cols) + " needs more than 8 B slabs of " + std::to_string(SLAB_KB) + " KB", ok = false;
  }
  if (!ok) {
    snprintf(error, cap, "u24_stream_sp: %s", e != cudaSuccess ? cudaGetErrorString(e) : why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, sms, p->layout == SD_LAYOUT_NK, p->rows, p->cols, h.mp, h.kp, SmemBudget(optin, per_sm), h.rstart};
  const bool fp16 = p->dtype == SD_DTYPE_FP16;
  e = fp16 ? UploadValues<__half>(h.vals, &s->vals) : UploadValues<__nv_bfloat16>(h.vals, &s->vals);
  if (e == cudaSuccess) e = Upload(h.meta, reinterpret_cast<void**>(&s->meta));
  if (e == cudaSuccess) e = fp16 ? UploadResidual<__half>(h, &s->residual) : UploadResidual<__nv_bfloat16>(h, &s->residual);
  if (e == cudaSuccess) e = Upload(h.rstart, reinterpret_cast<void**>(&s->rstart_d));
  if (e == cudaSuccess && BALANCE_ROWS) e = Upload(h.row_of, reinterpret_cast<void**>(&s->row_of));
  if (e == cudaSuccess && THIRDS) e = Upload(fp16 ? ThirdWords<__half>(h) : ThirdWords<__nv_bfloat16>(h), reinterpret_cast<void**>(&s->thirds));
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && fp16) e = ConfigureLayout<__half>(s, p);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && !fp16) e = ConfigureLayout<__nv_bfloat16>(s, p);
  if (e != cudaSuccess) {
    snprintf(error, cap, "u24_stream_sp prepare: %s", cudaGetErrorString(e));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  auto it = std::find_if(s->plans.begin(), s->plans.end(), [n](const std::pair<int64_t, Plan>& x) { return x.first == n; });
  if (it == s->plans.end()) return 1;  // not an n prepare planned for
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (s->dtype == SD_DTYPE_FP16) LaunchLayout<__half>(s, it->second, b, c, n, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (s->dtype == SD_DTYPE_BF16) LaunchLayout<__nv_bfloat16>(s, it->second, b, c, n, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
