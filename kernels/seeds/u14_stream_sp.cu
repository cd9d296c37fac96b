// Unstructured sparsity at 75-95% (and 1:4, 1:8) for small n on Hopper: A stored "1:4" (one value per aligned
// group of four columns) and expanded in the lane into the operand of the 2:4 sparse tensor cores.
// Strategy: at n <= 16 the product is a stream of A, so bytes per element decide. 1:4 keeps the first nonzero
// of each group of four (0.5 bytes an element of values, plus mma.sp's 4-bit metadata a group: 0.625 bytes an
// element, against 2 dense and 1.125 for 2:4); a lane loads its four values of a k32 step as 8 bytes and
// builds each 32-bit mma.sp register as the value and a zero, the value in the high half when it sits at
// position 3 of its group (metadata (0, 3); positions 0-2 use (p, p+1) and the low half), which it reads off the
// metadata nibble (one shuffle gets the word of the lane pair that holds it). Groups with two or more nonzeros
// (5% at 90% sparsity): a record (16 rows x 64 columns) carries the second value of up to kSeconds of them
// (value and slot, 4 bytes, loaded by lanes 0-15 with the record and spread to their lanes through a 512-byte
// scratch in shared memory; the nibble then holds both positions and the register both values). Third and
// later values, and seconds beyond kSeconds, go to a residual: one list per (row tile, row % 8), ordered by K
// tile, of 4-byte entries (value, row / 8, column), the warp's slices copied into shared memory by cp.async
// while the B slab lands and walked by the row pair's four lanes after the main loop. The rest is
// nm24_stream_sp's: every warp owns one 16-row tile and one K range and keeps two batches of UNROLL K tiles of
// loads in flight straight into registers; the CTA's WARPS row tiles share one B slab; K is split over a
// thread-block cluster (at most 8) whose partials are pushed to each row tile's owner rank over distributed
// shared memory and summed there in rank order (only owners wait on the cluster barrier);
// prepare lowers the split count until the clusters fit one wave. A larger n re-streams A once per 16 columns:
// a small-n seed.
// prepare builds: per (row tile, K tile of 64) a 512-byte value record (lane l's 16 bytes = its four values
// of each k32 step), the 128-byte metadata record nm24_stream_sp uses, a 64-byte second-value record, the
// residual entries and, per (row tile, K tile boundary, row % 8), where each list's slice starts. M padded to
// 128, K to 64 (K <= 32768: a residual column has 15 bits). Edges and layouts (KN, and PyTorch's NK: X [n x K]
// in, Y [n x M] out, the slab then 16 rows of X read with ldmatrix) as nm24_stream_sp's. BALANCE_ROWS 1 stores the
// rows dealt to the row tiles by nonzero count (RowOrder) and the store maps them back. STAGE_A 1 copies each warp's
// K range of A records into shared memory first (cp.async, three groups) where the share holds it after the
// residual's staging (u90 4096 x 4096 at n = 16), nm24_stream_sp's STAGE_A. PRMT_EXPAND 1 (default 0 until timed)
// stores a group's values so that two nibble bits say which half its first goes in, each register then one byte
// permute (the first-high layout, see FirstHigh).
// sparseditto:seed families=[unstructured, file, n_m] nm=[1:4, 1:8] dtypes=[fp16, bf16] archs=[sm_90]
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
#define UNROLL 4        // sparseditto:tunable values=[2, 4, 6]
#define CTAS_PER_SM 2   // sparseditto:tunable values=[1, 2]
#define SLAB_KB 96      // sparseditto:tunable values=[48, 96]
#define SPREAD_RESIDUAL 0  // sparseditto:tunable values=[0, 1]
#define RESIDUAL_FIRST 0   // sparseditto:tunable values=[0, 1]
#define BALANCE_ROWS 0     // sparseditto:tunable values=[0, 1]
#define STAGE_A 0          // sparseditto:tunable values=[0, 1]
#define PRMT_EXPAND 0      // sparseditto:tunable values=[0, 1]

namespace {
constexpr int kMPad = 128;      // rows padded to this
constexpr int kBk = 64;         // K tile: two m16n8k32 steps, one metadata record
constexpr int kNt = 16;         // n columns per CTA: two n8 mma tiles
constexpr int kMaxSplits = 8;   // portable cluster size
constexpr int kThreads = 32 * WARPS;
// The owner's slots (rank, owned tile), a 16 x 16 fp32 partial each, lane by lane: PushSlot stays below WARPS + splits
// - 1, so they are sized for the run's split count and what follows starts right after them (a few-split plan with a
// long slab then fits CTAS_PER_SM CTAs an SM where eight splits' slots might not: u24_stream_sp's 8192² plan).
__host__ __device__ constexpr int RedBytes(int splits) { return (WARPS + splits - 1) * 32 * 8 * 4; }
constexpr int kRedBytes = RedBytes(kMaxSplits);  // the most any plan takes
// The K split's push reduce: rank `split` stores its partial of row tile `warp` into slot PushSlot of the tile's
// owner (rank PushOwner), and an owner reads the slots of its tile w at (w / splits) * splits + 0 .. splits - 1:
// rank order.
__host__ __device__ __forceinline__ int PushOwner(int warp, int splits) { return warp % splits; }
__host__ __device__ __forceinline__ int PushSlot(int warp, int split, int splits) { return (warp / splits) * splits + split; }
constexpr int kSeconds = 16;                    // second values a record carries (groups with two nonzeros)
constexpr int kScratchBytes = WARPS * 256 * 2;  // a warp's record of second values, one 16-bit slot a value
constexpr int kSlabRowBytes = kNt * 2;          // one B row of the slab
constexpr int kMaxSlabTiles = SLAB_KB * 1024 / (kBk * kSlabRowBytes);
static_assert(kMPad % (16 * WARPS) == 0, "a CTA's row tiles divide the padded rows");
static_assert(UNROLL >= 1 && kMaxSlabTiles >= 1, "tiling");
// STAGE_A: a K tile's A as the warp stages it in shared memory: value record, metadata record, second-value record.
constexpr int kTileValBytes = 256 * 2, kTileMetaBytes = 32 * 4, kTileSecondBytes = kSeconds * 4;
constexpr int kStagedTileBytes = kTileValBytes + kTileMetaBytes + kTileSecondBytes;
// ---- layouts shared by prepare and the kernel (host + device) ----------------------------------
// Value record (mt, kpair) = rows 16mt.., logical columns 64 kpair..: 256 values, lane-major; lane 4g+t holds
// 8: for k32 step q (q = 0, 1) at 4q + {0: row g group t, 1: row g+8 group t, 2: row g group t+4, 3: row g+8
// group t+4} (groups of four columns within the step), registers a0..a3 of mma.sp before expansion.
__host__ __device__ __forceinline__ int64_t ValRecord(int64_t mt, int64_t kpair, int64_t kpairs) { return (mt * kpairs + kpair) * 256; }
__host__ __device__ __forceinline__ int ValInRecord(int r16, int q, int group) {
  const int g = r16 & 7, lane = 4 * g + (group & 3), reg = (r16 >> 3) + 2 * (group >> 2);
  return lane * 8 + q * 4 + reg;
}
// Metadata: record (mt, kpair) of 32 words, nm24_stream_sp's layout: word ((g*2 + sel)*2 + q) is lane (g,
// t=sel)'s operand for step q: bits 0-15 row g, bits 16-31 row g+8, groups 4 sel .. 4 sel + 3, 4 bits a group.
__host__ __device__ __forceinline__ int64_t MetaRecord(int64_t mt, int64_t kpair, int64_t kpairs) { return (mt * kpairs + kpair) * 32; }
__host__ __device__ __forceinline__ int MetaLaneWord(int lane) { return ((lane >> 2) * 2 + (lane & 1)) * 2; }
// A group's metadata nibble is idx0 | idx1 << 2 (idx0 < idx1): the positions of the register's low and high halves.
// In order (PRMT_EXPAND 0) a lone value at p takes (p, p + 1), low, for p < 3 and (0, 3), high, for p = 3; a pair
// (a, b) its own nibble, a low; an empty group (0, 1).
// The first-high layout (PRMT_EXPAND 1): a group's first value is the one at idx1, its second (if any) the one at
// idx0, exactly when the nibble has bit 3 set and bit 0 clear ((0, 2), (0, 3), (2, 3)), and a lone value at 2 takes
// (0, 2) so that it goes high as that rule says. Then the nibble alone places the first (and the second, or zero,
// in the other half), a register is one byte permute whose selector is one of two constants (ExpandStep), and the
// test for a whole metadata word is w & ~(w << 3): one shift a word and an and a register, where PRMT_EXPAND 0's rule
// (a second puts both in order, else the nibble places the first) costs about 10 instructions a register, most of
// the loop's (dev/ptx_census/sass.py). Default 0 until a GPU times it.
constexpr bool kFirstHighLayout = PRMT_EXPAND != 0;
constexpr uint32_t kHighNibble = 0xCu;  // in order: a lone value at 3
__host__ __device__ __forceinline__ uint32_t NibbleFor(int p, bool first_high = kFirstHighLayout) {
  return p < 0 ? 0x4u : p == 3 ? kHighNibble : first_high && p == 2 ? 0x8u : uint32_t(p | ((p + 1) << 2));
}
__host__ __device__ __forceinline__ bool FirstHigh(uint32_t nibble) { return (nibble & 0x9u) == 0x8u; }  // first-high layout
// prmt.b32 in its default mode: byte i of the result is byte (sel >> 4i) & 7 of y:x (x bytes 0-3, y bytes 4-7).
__host__ __device__ __forceinline__ uint32_t BytePerm(uint32_t x, uint32_t y, uint32_t sel) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, sel);
#else
  const uint64_t yx = (uint64_t(y) << 32) | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= uint32_t((yx >> (8 * ((sel >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return r;
#endif
}
// PRMT_EXPAND's selector for a register from half `half` of a word of first values (bytes 0-3) and its word of
// seconds (bytes 4-7): the first low and its second (or zero) high, or the other way round when `high`.
__host__ __device__ __forceinline__ uint32_t PairSelector(bool high, int half) { return (high ? 0x1054u : 0x5410u) + 0x2222u * half; }
// mma.sp register from a group's first value, its second (0: none) and its nibble. In order: a second puts both in
// order, else the nibble places the first; first-high layout: FirstHigh places the first, the second (or zero) in the
// other half.
__host__ __device__ __forceinline__ uint32_t Expand(uint32_t value16, uint32_t second16, uint32_t nibble, bool first_high = kFirstHighLayout) {
  if (first_high) return BytePerm(value16, second16, PairSelector(FirstHigh(nibble), 0));
  return second16 ? value16 | (second16 << 16) : nibble == kHighNibble ? value16 << 16 : value16;
}
// Lane 4g+t's four registers of step q from its 8 first values and 8 second values (as 4 words each, two
// values a word) and the metadata words w0 (lane (g, 0): groups 0-3) and w1 (lane (g, 1): groups 4-7).
__host__ __device__ __forceinline__ void ExpandStep(uint32_t lo, uint32_t hi, uint32_t slo, uint32_t shi, uint32_t w0, uint32_t w1, int t,
                                                    uint32_t (&a)[4], bool first_high = kFirstHighLayout) {
  if (first_high) {  // bytes 0-3 the two first values, 4-7 the two seconds; a high register swaps its halves
    const uint32_t f0 = w0 & ~(w0 << 3), f1 = w1 & ~(w1 << 3);  // bit 4i + 3: FirstHigh of nibble i
    const uint32_t low_bit = 8u << (4 * t), high_bit = low_bit << 16;  // the lane's groups in each half
    a[0] = BytePerm(lo, slo, PairSelector((f0 & low_bit) != 0, 0));
    a[1] = BytePerm(lo, slo, PairSelector((f0 & high_bit) != 0, 1));
    a[2] = BytePerm(hi, shi, PairSelector((f1 & low_bit) != 0, 0));
    a[3] = BytePerm(hi, shi, PairSelector((f1 & high_bit) != 0, 1));
    return;
  }
  a[0] = Expand(lo & 0xFFFFu, slo & 0xFFFFu, (w0 >> (4 * t)) & 0xFu, false);
  a[1] = Expand(lo >> 16, slo >> 16, (w0 >> (16 + 4 * t)) & 0xFu, false);
  a[2] = Expand(hi & 0xFFFFu, shi & 0xFFFFu, (w1 >> (4 * t)) & 0xFu, false);
  a[3] = Expand(hi >> 16, shi >> 16, (w1 >> (16 + 4 * t)) & 0xFu, false);
}
// Second values: record (mt, kpair) of kSeconds words, value bits | slot << 16 (slot = ValInRecord's index of
// the group's first value), in slot order, unused words 0.
__host__ __device__ __forceinline__ int64_t SecondRecord(int64_t mt, int64_t kpair, int64_t kpairs) { return (mt * kpairs + kpair) * kSeconds; }
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
// STAGE_A: a warp's shared region holds its K range's records (`per` tiles) as they lie in global memory from
// (mt, kt0): the value records, then the metadata records, then the second-value records; byte offsets of what
// lane `lane` reads for K tile j.
[[maybe_unused]] __host__ __device__ __forceinline__ int StagedVal(int j, int lane) { return j * kTileValBytes + lane * 16; }
[[maybe_unused]] __host__ __device__ __forceinline__ int StagedMeta(int per, int j, int lane) { return per * kTileValBytes + j * kTileMetaBytes + MetaLaneWord(lane) * 4; }
[[maybe_unused]] __host__ __device__ __forceinline__ int StagedSecond(int per, int j, int lane) { return per * (kTileValBytes + kTileMetaBytes) + j * kTileSecondBytes + lane * 4; }
// Where warp `warp`'s region starts in the CTA's shared memory: after the reduction slots (of `splits`), the seconds'
// scratch, the slab and every warp's residual staging (8 lists of res_cap 4-byte entries a warp).
[[maybe_unused]] __host__ __device__ __forceinline__ size_t StagedRegion(int splits, int slab_bytes, int res_cap, int per, int warp) {
  return size_t(RedBytes(splits)) + kScratchBytes + slab_bytes + size_t(WARPS) * 8 * res_cap * 4 + size_t(warp) * per * kStagedTileBytes;
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
__device__ __forceinline__ uint32_t LdStream4(const void* p) {
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
__device__ __forceinline__ void MmaSp(float (&d)[4], const uint32_t (&a4)[4], const uint32_t (&b)[4], uint32_t e) {
  const uint4 a = make_uint4(a4[0], a4[1], a4[2], a4[3]);
  if constexpr (std::is_same<T, __half>::value) SD_MMA_SP_ASM("f16", d, a, b, e);
  else SD_MMA_SP_ASM("bf16", d, a, b, e);
}
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ uint32_t Bits(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ uint32_t Bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
struct StreamArgs {
  const void* vals; const uint32_t* meta; const uint32_t* seconds; const uint32_t* residual; const uint32_t* rstart; const void* b; void* c;
  const int32_t* row_of;  // BALANCE_ROWS: stored row -> row of C (-1: none); else unused (stored row = row)
  int64_t m, k, n, kpairs;
  int ktiles, kt_per_split, pair_store /* KN, n even, C 4-byte aligned */, vec /* B's rows (KN: n, NK: K) % 8 == 0, B 16-byte aligned */;
  int slab_bytes, res_cap;  // the slab's shared bytes; entries of one list a warp stages in shared memory
  int staged;  // STAGE_A: each warp copies its whole K range of A into shared memory first (Plan::staged)
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

// Operands of K tiles j0 .. j0+UNROLL-1 of a warp's row tile (those < count): a 16-byte value load, an 8-byte
// metadata load and (lanes < kSeconds) a 4-byte second-value load a lane per tile, all issued before any is used.
struct Batch {
  uint4 a[UNROLL];
  uint2 e[UNROLL];
  uint32_t s[UNROLL];
};
template <typename T>
__device__ __forceinline__ void LoadBatch(const T* vals, const uint32_t* meta, const uint32_t* secs, int j0, int count, Batch& x) {
  const bool carries = (threadIdx.x & 31) < kSeconds;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
    x.a[u] = LdStream16(vals + static_cast<int64_t>(j0 + u) * 256);
    x.e[u] = LdStream8(meta + static_cast<int64_t>(j0 + u) * 32);
    x.s[u] = carries ? LdStream4(secs + static_cast<int64_t>(j0 + u) * kSeconds) : 0u;
  }
}
#if STAGE_A
// K tiles j0 .. j1-1 of the warp's range into its shared region (cp.async 16 bytes at a time; a tile is 32 value
// chunks, 8 metadata chunks, 4 second-value chunks), committed as one group with any copies issued before it.
__device__ __forceinline__ void StageA(unsigned char* mine, int per, const void* vals, const uint32_t* meta, const uint32_t* secs, int j0, int j1) {
  const int lane = threadIdx.x & 31;
  const unsigned char* from[3] = {static_cast<const unsigned char*>(vals), reinterpret_cast<const unsigned char*>(meta),
                                  reinterpret_cast<const unsigned char*>(secs)};
  const int bytes[3] = {kTileValBytes, kTileMetaBytes, kTileSecondBytes}, at[3] = {0, per * kTileValBytes, per * (kTileValBytes + kTileMetaBytes)};
#pragma unroll
  for (int part = 0; part < 3; ++part)
    for (int i = j0 * (bytes[part] / 16) + lane; i < j1 * (bytes[part] / 16); i += 32) CpAsync16(mine + at[part] + i * 16, from[part] + i * 16, 16);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Batch j0's operands from the warp's shared region, as LoadBatch reads them from global memory.
__device__ __forceinline__ void LoadBatchStaged(const unsigned char* mine, int per, int j0, int count, Batch& x) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
    x.a[u] = *reinterpret_cast<const uint4*>(mine + StagedVal(j0 + u, lane));
    x.e[u] = *reinterpret_cast<const uint2*>(mine + StagedMeta(per, j0 + u, lane));
    x.s[u] = lane < kSeconds ? *reinterpret_cast<const uint32_t*>(mine + StagedSecond(per, j0 + u, lane)) : 0u;
  }
}
#endif
// The lane's 8 second values of a record: each carrying lane writes its entry into the warp's zeroed scratch
// record, every lane takes its 16 bytes and zeroes them for the next record.
__device__ __forceinline__ uint4 SpreadSeconds(uint32_t entry, uint16_t* scratch) {
  const int lane = threadIdx.x & 31;
  if (entry & 0xFFFFu) scratch[entry >> 16] = static_cast<uint16_t>(entry & 0xFFFFu);
  __syncwarp();
  uint4* mine = reinterpret_cast<uint4*>(scratch) + lane;
  const uint4 s = *mine;
  *mine = make_uint4(0, 0, 0, 0);
  __syncwarp();
  return s;
}
template <typename T, bool kNk>
__device__ __forceinline__ void ComputeBatch(const Batch& x, const T* sb, uint16_t* scratch, int j0, int count, float (&acc)[2][4]) {
  const int lane = threadIdx.x & 31, t = lane & 3;
  const uint32_t batch = SmemAddr(sb) + j0 * kSlabTileBytes;  // K tile j0 of the slab
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
    const uint32_t ox = __shfl_xor_sync(0xffffffffu, x.e[u].x, 1), oy = __shfl_xor_sync(0xffffffffu, x.e[u].y, 1);
    const uint4 sv = SpreadSeconds(x.s[u], scratch);
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const uint32_t mine = q ? x.e[u].y : x.e[u].x, other = q ? oy : ox;  // lane (g, t&1)'s word, (g, t&1 ^ 1)'s
      uint32_t a[4], b0[4], b1[4];
      ExpandStep(q ? x.a[u].z : x.a[u].x, q ? x.a[u].w : x.a[u].y, q ? sv.z : sv.x, q ? sv.w : sv.y, (t & 1) ? other : mine,
                 (t & 1) ? mine : other, t, a);
      const uint32_t tile = batch + u * kSlabTileBytes;
      if constexpr (kNk) {
        LdmX4(b0, tile + TileFragBytes<true>(q, 0, lane));
        LdmX4(b1, tile + TileFragBytes<true>(q, 1, lane));
      } else {
        LdmX4T(b0, tile + TileFragBytes<false>(q, 0, lane));
        LdmX4T(b1, tile + TileFragBytes<false>(q, 1, lane));
      }
      MmaSp<T>(acc[0], a, b0, mine);
      MmaSp<T>(acc[1], a, b1, mine);
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
__global__ void __launch_bounds__(kThreads, CTAS_PER_SM) U14StreamKernel(StreamArgs p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  float* red = reinterpret_cast<float*>(smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, split = blockIdx.x, splits = gridDim.x;
  const int red_bytes = RedBytes(splits);  // MakePlan's
  T* sb = reinterpret_cast<T*>(smem + red_bytes + kScratchBytes);
  uint16_t* scratch = reinterpret_cast<uint16_t*>(smem + red_bytes) + warp * 256;
  uint32_t* rs = reinterpret_cast<uint32_t*>(smem + red_bytes + kScratchBytes + p.slab_bytes) + warp * 8 * p.res_cap;
  reinterpret_cast<uint4*>(scratch)[lane] = make_uint4(0, 0, 0, 0);  // SpreadSeconds keeps it zero between records
  const int64_t mt = static_cast<int64_t>(blockIdx.y) * WARPS + warp, n0 = static_cast<int64_t>(blockIdx.z) * kNt;
  const int kt0 = split * p.kt_per_split, count = min(p.ktiles - kt0, p.kt_per_split);
  // A rank stores into another's shared memory only once that rank has started: this arrive, the wait below.
  if (splits > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  LoadBSlab<T, kNk>(sb, p, kt0, count, n0);
  const T* range = static_cast<const T*>(p.vals) + ValRecord(mt, kt0, p.kpairs);  // the warp's K range
  const uint32_t* metas = p.meta + MetaRecord(mt, kt0, p.kpairs);
  const uint32_t* seconds = p.seconds + SecondRecord(mt, kt0, p.kpairs);
  const T* vals = range + lane * 8;
  const uint32_t* meta = metas + MetaLaneWord(lane);
  const uint32_t* secs = seconds + lane;
  const ResidualSlice res = FindResidual(p, mt, kt0, count);
  float acc[2][4] = {};
  Batch x, y;  // software pipeline: the next batch's loads are in flight while this one computes
#if STAGE_A
  if (p.staged) {
    // The whole K range in flight at once (three groups, the residual's copies in the first), instead of two
    // batches a round trip: at n = 16 a warp's range is a few batches, a chain of DRAM round trips.
    const int per = p.kt_per_split;
    unsigned char* mine = smem + StagedRegion(splits, p.slab_bytes, p.res_cap, per, warp);
    StageResidual(p, res, rs);
    StageA(mine, per, range, metas, seconds, 0, min(count, UNROLL));  // groups: batch 0, batch 1, the rest
    StageA(mine, per, range, metas, seconds, min(count, UNROLL), min(count, 2 * UNROLL));
    StageA(mine, per, range, metas, seconds, min(count, 2 * UNROLL), count);
    asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    __syncthreads();  // the B slab, the residual and the first batch landed
#if RESIDUAL_FIRST
    ApplyResidual<T, kNk>(p, res, rs, sb, kt0, acc);
#endif
    for (int j0 = 0; j0 < count; j0 += UNROLL) {
      if (j0 == UNROLL) { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); __syncwarp(); }
      if (j0 == 2 * UNROLL) { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); __syncwarp(); }
      LoadBatchStaged(mine, per, j0, count, x);
      ComputeBatch<T, kNk>(x, sb, scratch, j0, count, acc);
    }
#if !RESIDUAL_FIRST
    ApplyResidual<T, kNk>(p, res, rs, sb, kt0, acc);
#endif
  } else
#endif
  {
  LoadBatch<T>(vals, meta, secs, 0, count, x);
  StageResidual(p, res, rs);
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();  // the B slab and the residual landed (the first batch's loads were issued before the wait)
#if RESIDUAL_FIRST
  // The residual walk is instructions and shared-memory reads, the stream is waits on DRAM: walk it while the first
  // two batches land, then the same pipeline one batch ahead.
  LoadBatch<T>(vals, meta, secs, UNROLL, count, y);
  ApplyResidual<T, kNk>(p, res, rs, sb, kt0, acc);
  for (int j0 = 0; j0 < count; j0 += 2 * UNROLL) {
    ComputeBatch<T, kNk>(x, sb, scratch, j0, count, acc);
    LoadBatch<T>(vals, meta, secs, j0 + 2 * UNROLL, count, x);
    ComputeBatch<T, kNk>(y, sb, scratch, j0 + UNROLL, count, acc);
    LoadBatch<T>(vals, meta, secs, j0 + 3 * UNROLL, count, y);
  }
#else
  for (int j0 = 0; j0 < count; j0 += 2 * UNROLL) {
    LoadBatch<T>(vals, meta, secs, j0 + UNROLL, count, y);
    ComputeBatch<T, kNk>(x, sb, scratch, j0, count, acc);
    LoadBatch<T>(vals, meta, secs, j0 + 2 * UNROLL, count, x);
    ComputeBatch<T, kNk>(y, sb, scratch, j0 + UNROLL, count, acc);
  }
  ApplyResidual<T, kNk>(p, res, rs, sb, kt0, acc);  // after the stream (RESIDUAL_FIRST 0: the order a GPU has timed)
#endif
  }
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
struct U14Host {
  int64_t rows = 0, cols = 0, mp = 0, kp = 0;  // mp % 128 == 0, kp % 64 == 0
  std::vector<float> vals;                     // (mp/16) * (kp/64) records of 256, see ValRecord/ValInRecord
  std::vector<float> seconds;                  // as vals: the second value of the group whose first is there (0: none)
  std::vector<uint32_t> meta;                  // (mp/16) * (kp/64) records of 32 words, see MetaRecord
  std::vector<uint32_t> residual_row, residual_col;  // row in the tile (0-15), column; lists (mt, g) in order
  std::vector<float> residual_val;
  std::vector<uint32_t> rstart;                // (mp/16) * (kp/64 + 1) * 8, see ResidualStart
  std::vector<int32_t> row_of;                 // mp: stored row -> row of the matrix, -1 for padding (see RowOrder)
  bool first_high = false;                     // the first-high layout (PRMT_EXPAND 1, see FirstHigh)
};
// Stored row -> matrix row (-1: padding). Identity unless `balance`: then the rows by nonzero count, heaviest first,
// dealt to the ceil(rows / 16) row tiles in turns (odd turns in reverse tile order), the k-th a tile gets at tile row k
// (k < 8) or 23 - k (k >= 8), so list g (tile rows g and g + 8) pairs a tile's (g+1)-th heaviest row with its
// (16-g)-th. The residual is what heavy rows carry: dealt this way it spreads over every tile and list instead of
// piling up in the tiles and lists that hold the heavy rows, which the warp, its CTA and cluster then wait on (a
// skewed matrix's dense rows). Rows of equal count keep their order (a uniform matrix is barely moved).
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
// Keeps the first nonzero of every group of four in the 1:4 layer, the second of the record's first kSeconds
// groups with two or more (in stored row, then column order) as their second values, and lists the others in the
// residual; entries with value 0 are dropped. Rows are stored in RowOrder(.., balance)'s order. first_high: the
// first-high layout (PRMT_EXPAND 1, see FirstHigh), else in order. False on malformed input.
bool BuildU14(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, U14Host* out, std::string* why,
              bool balance = BALANCE_ROWS != 0, bool first_high = kFirstHighLayout) {
  if (rows <= 0 || cols <= 0) return (*why = "bad shape", false);
  out->first_high = first_high;
  for (int64_t r = 0; r < rows; ++r)
    if (ro[r] > ro[r + 1]) return (*why = "row offsets decrease", false);
  if (cols > kMaxResidualCols) return (*why = "K = " + std::to_string(cols) + " above " + std::to_string(kMaxResidualCols) + " (15-bit residual columns)", false);
  out->rows = rows, out->cols = cols;
  out->mp = (rows + kMPad - 1) / kMPad * kMPad, out->kp = (cols + kBk - 1) / kBk * kBk;
  const int64_t kpairs = out->kp / kBk, row_tiles = out->mp / 16;
  out->vals.assign(row_tiles * kpairs * 256, 0.0f);
  out->seconds.assign(row_tiles * kpairs * 256, 0.0f);
  std::vector<int> seconds_used(row_tiles * kpairs, 0);
  out->meta.assign(row_tiles * kpairs * 32, 0x44444444u);  // every group empty: (0, 1)
  out->row_of = RowOrder(rows, out->mp, ro, balance);
  struct Extra { int64_t kt, e; int r16; };  // K tile, CSR entry, stored row in the tile
  std::vector<std::vector<Extra>> extra(row_tiles * 8);  // per list
  for (int64_t stored = 0; stored < out->mp; ++stored) {
    const int64_t r = out->row_of[stored];
    if (r < 0) continue;
    const int64_t mt = stored / 16;
    const int r16 = static_cast<int>(stored % 16), g = r16 % 8, half = r16 / 8;
    int64_t last_group = -1;
    int in_group = 0, first_p = 0;
    for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
      if (ci[e] < 0 || ci[e] >= cols || (e > ro[r] && ci[e] <= ci[e - 1])) return (*why = "column indices out of range or not increasing", false);
      if (v[e] == 0.0f) continue;
      const int64_t group = ci[e] / 4, kt = ci[e] / kBk, rec = mt * kpairs + kt;
      const int q = static_cast<int>(ci[e] % kBk) / 32, grp = static_cast<int>(ci[e] % 32) / 4, p = static_cast<int>(ci[e] % 4);
      const int64_t slot = ValRecord(mt, kt, kpairs) + ValInRecord(r16, q, grp);
      uint32_t& word = out->meta[MetaRecord(mt, kt, kpairs) + MetaLaneWord(4 * g + grp / 4) + q];
      const int shift = half * 16 + (grp % 4) * 4;
      in_group = group == last_group ? in_group + 1 : 1;
      if (in_group == 1) {
        last_group = group, first_p = p;
        out->vals[slot] = v[e];
        word = (word & ~(0xFu << shift)) | (NibbleFor(p, first_high) << shift);
      } else if (in_group == 2 && seconds_used[rec] < kSeconds) {
        ++seconds_used[rec];
        out->seconds[slot] = v[e];
        const uint32_t pair = uint32_t(first_p | (p << 2));
        if (first_high && FirstHigh(pair)) std::swap(out->vals[slot], out->seconds[slot]);  // the value at idx1 first
        word = (word & ~(0xFu << shift)) | (pair << shift);
      } else {
        extra[mt * 8 + g].push_back({kt, e, r16});
      }
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
// more than 8 slabs. prepare lowers max_splits until the clusters fit the device in one wave.
struct Plan { int splits = 0, kt_per_split = 0, res_cap = 0, res_longest = 0; size_t smem = 0; int64_t clusters = 0; bool staged = false; };
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
  plan.smem = RedBytes(plan.splits) + kScratchBytes + static_cast<size_t>(per) * kBk * kSlabRowBytes;
  return plan;
}
// Shared memory a CTA may take: the CTAS_PER_SM share of the SM's, but at least the reduction and the largest
// slab (then fewer CTAs fit), at most the opt-in limit.
size_t SmemBudget(int optin_per_block, int per_sm) {
  const size_t share = static_cast<size_t>(per_sm) / CTAS_PER_SM - 1024, least = kRedBytes + kScratchBytes + size_t(kMaxSlabTiles) * kBk * kSlabRowBytes;
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
// STAGE_A: after the residual's staging (a residual entry walked from global memory costs far more than a K tile
// streamed through registers), the plan stages each warp's K range of A when the CTA's share still holds it.
Plan WithStaging(Plan plan, size_t budget, bool stage = STAGE_A != 0) {
  const size_t staged = size_t(WARPS) * plan.kt_per_split * kStagedTileBytes;
  if (stage && plan.splits > 0 && plan.smem + staged <= budget) plan.staged = true, plan.smem += staged;
  return plan;
}
struct State {
  int dtype = 0, sms = 1;
  bool nk = false;  // sd_problem.layout == SD_LAYOUT_NK
  int64_t m = 0, k = 0, mp = 0, kp = 0;
  size_t smem_budget = 0;
  std::vector<uint32_t> rstart;  // host copy, to size each plan's residual staging
  void* vals = nullptr; uint32_t* meta = nullptr; uint32_t* seconds = nullptr; uint32_t* residual = nullptr; uint32_t* rstart_d = nullptr;
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
// The plan for n: fewer splits while the clusters would not all be resident at once (a second wave of
// clusters costs more than the K parallelism it buys: measured on the H200, 8-CTA clusters at 2 CTAs/SM).
template <typename T, bool kNk> Plan FittedPlan(const State* s, int64_t n) {
  auto make = [s, n](int cap) {
    return WithStaging(WithResidual(MakePlan(s->mp, s->kp, n, s->sms, cap), s->rstart, s->mp, s->kp, s->smem_budget), s->smem_budget);
  };
  Plan plan = make(kMaxSplits);
  for (int cap = plan.splits - 1; cap >= 1; --cap) {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = LaunchConfig(s, plan, n, nullptr, &cluster);
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, U14StreamKernel<T, kNk>, &config) != cudaSuccess || active >= plan.clusters) break;
    const Plan fewer = make(cap);
    if (fewer.splits >= plan.splits) break;  // the slab needs these splits
    plan = fewer;
  }
  return plan;
}
template <typename T, bool kNk> void Launch(const State* s, const Plan& plan, const void* b, void* c, int64_t n, cudaStream_t stream) {
  StreamArgs a{s->vals, s->meta, s->seconds, s->residual, s->rstart_d, b, c, s->row_of, s->m, s->k, n, s->kp / kBk, static_cast<int>(s->kp / kBk), plan.kt_per_split,
               (!kNk && n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0) ? 1 : 0,
               ((kNk ? s->k : n) % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0,
               plan.kt_per_split * kBk * kSlabRowBytes, plan.res_cap, plan.staged ? 1 : 0};
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config = LaunchConfig(s, plan, n, stream, &cluster);
  cudaLaunchKernelEx(&config, U14StreamKernel<T, kNk>, a);
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
// The second-value records (see SecondRecord) as the kernel reads them.
template <typename T> std::vector<uint32_t> SecondWords(const U14Host& h) {
  std::vector<uint32_t> words(h.seconds.size() / 256 * kSeconds, 0);
  for (size_t rec = 0; rec < h.seconds.size() / 256; ++rec)
    for (int slot = 0, used = 0; slot < 256; ++slot)
      if (h.seconds[rec * 256 + slot] != 0.0f) {
        const uint32_t bits = Bits16<T>(h.seconds[rec * 256 + slot]);  // one that rounds to +0 is sent as -0: present
        words[rec * kSeconds + used++] = (bits ? bits : 0x8000u) | (uint32_t(slot) << 16);
      }
  return words;
}
template <typename T> cudaError_t UploadResidual(const U14Host& h, uint32_t** d) {  // see ResidualWord
  std::vector<uint32_t> entries(std::max<size_t>(h.residual_val.size(), 1), 0);
  for (size_t i = 0; i < h.residual_val.size(); ++i)
    entries[i] = ResidualWord(Bits16<T>(h.residual_val[i]), static_cast<int>(h.residual_row[i]), h.residual_col[i]);
  return Upload(entries, reinterpret_cast<void**>(d));
}
// Room for the largest plan, then the plan of every n prepare was given.
template <typename T, bool kNk> cudaError_t ConfigureAndPlan(State* s, const sd_problem* p) {
  cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&U14StreamKernel<T, kNk>), cudaFuncAttributeMaxDynamicSharedMemorySize,
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
  cudaFree(s->vals), cudaFree(s->meta), cudaFree(s->seconds), cudaFree(s->residual), cudaFree(s->rstart_d), cudaFree(s->row_of);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  U14Host h;
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
            BuildU14(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, &h, &why);
  for (int i = 0; ok && i < p->num_n_values; ++i) {
    if (MakePlan(h.mp, h.kp, p->n_values[i], sms).splits > 0) continue;
    why = "K = " + std::to_string(p->cols) + " needs more than 8 B slabs of " + std::to_string(SLAB_KB) + " KB", ok = false;
  }
  if (!ok) {
    snprintf(error, cap, "u14_stream_sp: %s", e != cudaSuccess ? cudaGetErrorString(e) : why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, sms, p->layout == SD_LAYOUT_NK, p->rows, p->cols, h.mp, h.kp, SmemBudget(optin, per_sm), h.rstart};
  const bool fp16 = p->dtype == SD_DTYPE_FP16;
  e = fp16 ? UploadValues<__half>(h.vals, &s->vals) : UploadValues<__nv_bfloat16>(h.vals, &s->vals);
  if (e == cudaSuccess) e = Upload(h.meta, reinterpret_cast<void**>(&s->meta));
  if (e == cudaSuccess) e = Upload(fp16 ? SecondWords<__half>(h) : SecondWords<__nv_bfloat16>(h), reinterpret_cast<void**>(&s->seconds));
  if (e == cudaSuccess) e = fp16 ? UploadResidual<__half>(h, &s->residual) : UploadResidual<__nv_bfloat16>(h, &s->residual);
  if (e == cudaSuccess) e = Upload(h.rstart, reinterpret_cast<void**>(&s->rstart_d));
  if (e == cudaSuccess && BALANCE_ROWS) e = Upload(h.row_of, reinterpret_cast<void**>(&s->row_of));
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && fp16) e = ConfigureLayout<__half>(s, p);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && !fp16) e = ConfigureLayout<__nv_bfloat16>(s, p);
  if (e != cudaSuccess) {
    snprintf(error, cap, "u14_stream_sp prepare: %s", cudaGetErrorString(e));
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
