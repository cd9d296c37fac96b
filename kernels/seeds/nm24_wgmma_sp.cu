// 2:4 SpMM on Hopper's warpgroup sparse tensor cores: wgmma.mma_async.sp m64nNk32 (fp16/bf16 operands from
// shared memory, fp32 accumulators in registers). Needs sm_90a. nm24_wgmma_sp_test.cu (KN) and
// nm24_wgmma_sp_nk_test.cu (NK) replay every CTA through an emulation of the PTX definitions on the CPU;
// nm24_wgmma_sp_gpu_test.cc runs both layouts on an sm_90 device.
// Why the defaults (WS = 1, BN = 128, STAGES = 4, SPLIT_MAX = 8): the producer warp that issues the TMA
// copies (WS) is what gained at n = 2048, split-K over a cluster what gained at n = 128, where a grid of
// 128-row x BN tiles is under one wave (32 CTAs at 4096 rows); the splits are capped so that every cluster
// is resident at once (MakePlan), since a second round of clusters cost more than the split bought. Deeper
// stages (STAGES 5) and one MMA in flight (MMA_INFLIGHT 1) were slower. The figures: docs/lab/seed_choices.md; current times
// against cuBLAS and cuSPARSELt: docs/results/.
//
// Strategy: the dense Hopper GEMM with A compressed. A CTA owns BM = 128 rows (two warpgroups, m64 each) x
// BN columns of C and walks K in tiles of 64 logical columns (32 compressed), STAGES deep. Per K tile each
// warpgroup issues two m64nBNk32 sparse wgmmas (A: its 64 rows, 16 compressed values a row; B: 32 K rows
// x BN; metadata: one 32-bit register a thread). For n <= SMALL_N_MAX a 64-column instance is used.
// Layouts (prepare builds A's stored image, so a K tile of 64 rows is one 4608-byte record, a straight copy):
//  - record (m-block mb of 64 rows, K tile kt) at ((mb * ktiles) + kt) * 4608 bytes: 4096 bytes of A, 64 rows
//    x 32 compressed values K-major in wgmma's 64-byte-swizzle canonical layout (a row is one 64-byte line,
//    16-byte chunk c of row m at chunk c ^ ((m >> 1) & 3); k32 step s starts 32 bytes in), then 512 bytes of
//    metadata: uint2 number (warp * 8 + g) * 2 + h holds the words of step 0 and 1 for threads 4g + h and
//    4g + h + 2 of that warp (sparsity selector 0 reads threads h = 0, 1; the other two get the same words).
//    A word: bits 0-15 row 16 warp + g, bits 16-31 row 16 warp + g + 8, logical K 32 s + 16 h .. + 15, four
//    bits a group of four (low 2: position of the first kept value, next 2: the second; increasing). This is
//    mma.sp m16n8k32's metadata per warp, and CUTLASS's ELayout_64x32 for the SM90 sparse GMMA atoms
//    (cute/atom/mma_traits_sm90_gmma_sparse.hpp).
//  - B: MN-major, 128-byte swizzle, a 64-column piece = 64 K lines of 128 bytes (8 KB); descriptor LBO =
//    piece stride (8 KB), SBO = 8 K lines (1 KB); k32 step s starts 32 lines in.
// Layouts of B and C (sd_problem.layout, fixed at prepare; both exported by sparseditto_layouts):
//  - KN: B (K x n) and C (M x n) row-major, as above (wgmma imm-trans-b = 1).
//  - NK (PyTorch's Linear): X = B^T (n x K) and Y = C^T (n x M) row-major, so no copy is needed around the
//    kernel. B is then K-major, wgmma's non-transposed operand (imm-trans-b = 0): the slab holds BN rows of
//    X, each one 128-byte line of the tile's 64 K values, 128-byte swizzled (a 64-row piece = 8 KB, where a
//    tensor copy's 64 x 64 box lands); descriptor SBO = 8 rows (1 KB), LBO unused (a k32 step's 64 bytes
//    lie in one line), step s starts 64 bytes in. The staged C tile is written transposed (a column of C
//    is a row of Y) so that 16-byte chunks of Y rows leave it; fragment stores are 2-byte, guarded.
// Transport: when B's and C's rows are multiples of 8 values (KN: n; NK: K for X, M for Y) and B, C are
// 16-byte aligned, thread 0 issues a stage with the copy engine (one
// bulk copy per 64-row record, one tensor copy per 64-column piece of B, zero-filled past K and n; one
// mbarrier a stage) and C leaves through a shared tile in 16-byte row chunks. Otherwise every thread copies
// (cp.async for A; B cp.async or guarded 2-byte loads) and C is stored from the fragments, guarded.
// Stage reuse (WS = 0, main's kernel): K tile j + STAGES - 1 is loaded after the barrier that follows K tile
// j - 1's wgmma retirement (wait_group 0, as CUTLASS's SM90 sparse mainloop: the metadata register must stay
// put while a wgmma reads it) in both warpgroups.
// WS = 1 (copy-engine path only; the thread-copy path stays as above): a 9th warp's lane 0 issues every K
// tile into stage j % STAGES once the stage's "empty" mbarrier says its previous tile was released; each
// consumer warp waits on the stage's "full" mbarrier, issues its wgmmas, waits for them (wait_group 0; with
// MMA_INFLIGHT = 1 wait_group 1, releasing the previous tile's stage, but ptxas then serializes the wgmmas,
// C7513) and arrives on "empty" (256 arrivals a phase: every consumer thread). No CTA-wide barrier in the main loop.
// Split-K (SPLIT_MAX > 1): when the row x column tiles do not fill the device once (SM count and occupancy
// read in prepare), K is cut over the CTAs of a thread-block cluster (grid y, at most SPLIT_MAX; the count
// whose clusters the occupancy API says can all be resident at once, MakePlan); each rank parks its fp32 partial tile in its shared memory
// and the ranks sum it over distributed shared memory in rank order (deterministic), as nm24_stream_sp.
// MID_N_MAX = 128: n in (SMALL_N_MAX, 128] runs a 128-column tile instead of BN = 256 (half the wgmma work).
// Edges: M padded to 128 and K to 64 (zero values, valid metadata (0, 1)); B rows >= K and columns >= n are
// zeros; C stores guarded at M and n.
// sparseditto:seed families=[n_m] nm=[2:4] dtypes=[fp16, bf16] archs=[sm_90a]
#include "sparseditto_kernel.h"
#include <cooperative_groups.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#define BN 128             // sparseditto:tunable values=[128, 256]
#define STAGES 4           // sparseditto:tunable values=[2, 3, 4, 5]
#define SMALL_STAGES 6     // sparseditto:tunable values=[4, 6, 8]
#define SMALL_N_MAX 64     // sparseditto:tunable values=[0, 64]
#define MID_STAGES 4       // sparseditto:tunable values=[3, 4]
#define MID_N_MAX 0        // sparseditto:tunable values=[0, 128]
#define WS 1               // sparseditto:tunable values=[0, 1]
#define MMA_INFLIGHT 0     // sparseditto:tunable values=[0, 1]
#define SPLIT_MAX 8        // sparseditto:tunable values=[1, 2, 4, 8]
static_assert(STAGES >= 2 && SMALL_STAGES >= 2 && MID_STAGES >= 2, "one K tile computing while the next loads");
static_assert(BN == 128 || BN == 256, "BN: 128 or 256");
static_assert(SMALL_N_MAX == 0 || SMALL_N_MAX == 64, "the small tile is 64 columns wide");
static_assert(MID_N_MAX == 0 || MID_N_MAX == 128, "the mid tile is 128 columns wide");
static_assert(WS == 0 || WS == 1, "WS: a producer warp (1) or thread 0 issuing between barriers (0)");
static_assert(MMA_INFLIGHT == 0 || MMA_INFLIGHT == 1, "0 or 1 wgmma group in flight (1 only with WS = 1: ignored otherwise)");
static_assert(SPLIT_MAX >= 1 && SPLIT_MAX <= 8, "K splits are the CTAs of a portable cluster (at most 8)");
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(SD_NM24_WGMMA_SP_HOST_TEST)
#error "nm24_wgmma_sp needs wgmma: compile for sm_90a (-gencode arch=compute_90a,code=sm_90a)"
#endif
namespace {
namespace cg = cooperative_groups;
constexpr int kBm = 128;           // rows a CTA: two warpgroups of m64; M is padded to this
constexpr int kBk = 64;            // logical K a stage: two k32 wgmma steps
constexpr int kARowBytes = 64;     // a record row: 32 compressed values, one 64-byte swizzled line
constexpr int kAImageBytes = 64 * kARowBytes;            // 4096
constexpr int kMetaBytes = 512;                           // 128 words: 4 warps x 8 groups x 2 halves x 2 steps
constexpr int kRecordBytes = kAImageBytes + kMetaBytes;   // 4608 = 9 x 512: records stay 512-byte aligned
constexpr int kBPieceBytes = kBk * 128;                   // 64 columns x 64 K lines of 128 bytes (NK: 64 rows of X)
constexpr int kCColBytes = kBm * 2 + 16;                  // NK: a column of the staged C tile (a row of Y); 16 bytes of pad
constexpr int kSmemPerSm = 228 * 1024;  // sm_90's shared memory an SM (H100/H200), for launch bounds only: prepare asks the device
constexpr int kSmemPerCtaReserved = 1024;  // what the runtime keeps for itself per CTA
constexpr int kConsumers = 256;            // two warpgroups of wgmma; with WS a 9th warp (the producer) follows them
constexpr int kConsumerWarps = kConsumers / 32;
// WS: every consumer thread arrives on a stage's "empty" barrier. One lane a warp after __syncwarp orders the
// same reads (and was as fast on an H100), but compute-sanitizer racecheck does not follow that hand-off and
// reports each stage's refill as racing the other lanes' metadata reads (dev/racecheck_sync).
constexpr int kEmptyArrivals = kConsumers;
// ---- tiling -------------------------------------------------------------------------------------
template <int BN_, int STAGES_>
struct Tile {
  static constexpr int kBn = BN_, kStages = STAGES_, kPieces = BN_ / 64;
  static constexpr int kBBytes = kPieces * kBPieceBytes;
  static constexpr int kStageBytes = (kBBytes + 2 * kRecordBytes + 1023) / 1024 * 1024;  // B first: 1 KB aligned
  static constexpr int kCRowBytes = BN_ * 2 + 16;  // C tile staged for the store; 16 bytes of pad
  static constexpr int kPartialBytes = kBm * BN_ * 4;  // split-K: the CTA's fp32 partial tile, for the cluster sum
  static constexpr int kDataBytes = STAGES_ * kStageBytes > kPartialBytes ? STAGES_ * kStageBytes : kPartialBytes;
  static constexpr int kSmemBytes = kDataBytes + 1024 + 16 * STAGES_;  // + alignment slack, full and empty mbarriers
  // CTAs an SM holds by shared memory (register budget for __launch_bounds__; the runtime's occupancy is asked in prepare).
  static constexpr int kMinCtas = 2 * (kSmemBytes + kSmemPerCtaReserved) <= kSmemPerSm ? 2 : 1;
  static_assert(BN_ == 64 || BN_ == 128 || BN_ == 256, "one wgmma spans the tile's columns (N <= 256)");
  static_assert(kBm * kCRowBytes <= STAGES_ * kStageBytes, "the C tile fits where the stages were");
  static_assert(BN_ * kCColBytes <= STAGES_ * kStageBytes, "NK: the transposed C tile fits where the stages were");
  static_assert(kCColBytes % 16 == 0, "NK: 16-byte chunks of a staged column");
  static_assert(STAGES_ >= 2, "one K tile computing while the next loads");
  static_assert(kSmemBytes <= 227 * 1024, "fits the opt-in shared memory of an H100/H200");
};
// Threads a CTA: the two consumer warpgroups, plus the producer warp on the copy-engine path with WS.
template <bool kTma> constexpr int KernelThreads() { return kTma && WS ? kConsumers + 32 : kConsumers; }
constexpr bool kInflight = WS == 1 && MMA_INFLIGHT == 1;
// WS pipeline bookkeeping (host-tested): K tile j of a split lives in stage j % S; its "full" barrier
// completes once per use of the stage, so a consumer waits for parity (j / S) & 1; the producer refills the
// stage for tile j >= S after the release of tile j - S, completion j / S - 1 of its "empty" barrier.
__host__ __device__ __forceinline__ int PipeStage(int j, int stages) { return j % stages; }
__host__ __device__ __forceinline__ uint32_t PipeFullParity(int j, int stages) { return static_cast<uint32_t>(j / stages) & 1u; }
__host__ __device__ __forceinline__ uint32_t PipeEmptyParity(int j, int stages) { return static_cast<uint32_t>(j / stages + 1) & 1u; }
// The K tile whose stage a consumer releases after computing tile j (-1: none yet): with a group in flight,
// tile j's wgmma is still reading, so it is j - 1's stage that is free.
__host__ __device__ __forceinline__ int PipeReleaseAfter(int j, bool inflight) { return inflight ? j - 1 : j; }
// Split-K partial tile: float4 unit u = ((wg * BN/8) + q) * 128 + t holds thread t's accumulators 4q..4q+3
// (rows r, r + 8 of AccCoord(t, 4q), columns c, c + 1): consecutive threads, consecutive 16 bytes.
__host__ __device__ __forceinline__ int PartialUnit(int bn, int wg, int q, int t) { return (wg * (bn / 8) + q) * 128 + t; }
__host__ __device__ __forceinline__ void PartialUnitCoord(int bn, int u, int* wg, int* q, int* t) {
  *wg = u / ((bn / 8) * 128), *q = (u / 128) % (bn / 8), *t = u % 128;
}
// The K tiles of split `rank`: kt0 .. kt0 + count - 1.
__host__ __device__ __forceinline__ void SplitTiles(int rank, int ktiles, int per, int* kt0, int* count) {
  *kt0 = rank * per, *count = ktiles - *kt0 < per ? ktiles - *kt0 : per;
}
using BigTile = Tile<BN, STAGES>;
using SmallTile = Tile<64, SMALL_STAGES>;
using MidTile = Tile<128, MID_STAGES>;

// ---- layouts shared by prepare, the kernel and the CPU test -----------------------------------------
// Byte offset of compressed value c (0..31) of row m (0..63) in a record's A image: 64-byte swizzle
// (address bits [4:5] ^= bits [7:8] on a 512-byte-aligned base).
__host__ __device__ __forceinline__ int AImageOffset(int m, int c) {
  const int lin = m * kARowBytes + c * 2;
  return lin ^ (((lin >> 7) & 3) << 4);
}
// Metadata word of (warp, group g, half h, step s) in a record (32-bit units after the A image).
__host__ __device__ __forceinline__ int MetaWord(int warp, int g, int h, int s) { return ((warp * 8 + g) * 2 + h) * 2 + s; }
// The uint2 (steps 0, 1) thread t of a warpgroup loads: threads 4g + h and 4g + h + 2 share it.
__host__ __device__ __forceinline__ int MetaThreadWord(int t) { return MetaWord(t >> 5, (t & 31) >> 2, t & 1, 0); }
// Byte offset of B value (k, col) in a stage's B slab (64-column pieces, 128-byte swizzle, 1 KB aligned).
__host__ __device__ __forceinline__ int BOffset(int k, int col) {
  const int lin = k * 128 + (col & 63) * 2;
  return (col >> 6) * kBPieceBytes + (lin ^ (((lin >> 7) & 7) << 4));
}
// wgmma descriptors (start, LBO, SBO in 16-byte units; swizzle mode in bits 62-63: 1 = 128 B, 2 = 64 B).
// A: K-major 64-byte swizzle; 8-row groups 512 bytes apart (SBO); LBO unused for swizzled K-major.
// B: MN-major 128-byte swizzle; 64-column pieces LBO apart, 8-K-line groups SBO = 1 KB apart.
__host__ __device__ __forceinline__ uint64_t Desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32) | (static_cast<uint64_t>(mode) << 62);
}
__host__ __device__ __forceinline__ uint64_t ADesc(uint32_t record, int s) { return Desc(record + 32u * s, 16, 8 * kARowBytes, 2); }
__host__ __device__ __forceinline__ uint64_t BDesc(uint32_t slab, int s) { return Desc(slab + s * 32 * 128, kBPieceBytes, 1024, 1); }
// NK: X value (k, col) (B's (k, col), X[col][k]) in a stage's B slab: row col is one 128-byte line of the
// tile's 64 K values, 128-byte swizzle (as the tensor copy lands a 64 x 64 box of X, 8 KB a box).
__host__ __device__ __forceinline__ int BOffsetNk(int k, int col) {
  const int lin = col * 128 + k * 2;
  return lin ^ (((lin >> 7) & 7) << 4);
}
// NK: K-major 128-byte swizzle; 8-row groups SBO = 1 KB apart; LBO unused (as ADesc's); step s 64 bytes in.
__host__ __device__ __forceinline__ uint64_t BDescNk(uint32_t slab, int s) { return Desc(slab + 64u * s, 16, 1024, 1); }
template <bool kNk> __host__ __device__ __forceinline__ uint64_t BDescFor(uint32_t slab, int s) { return kNk ? BDescNk(slab, s) : BDesc(slab, s); }
// wgmma's imm-trans-b: 1 = B MN-major (KN), 0 = K-major (NK).
template <bool kNk> __host__ __device__ constexpr int TransB() { return kNk ? 0 : 1; }
// Accumulator i of an m64nN wgmma held by thread t of a warpgroup: row, column.
__host__ __device__ __forceinline__ void AccCoord(int t, int i, int* row, int* col) {
  *row = 16 * (t >> 5) + ((t & 31) >> 2) + 8 * ((i >> 1) & 1);
  *col = 8 * (i >> 2) + 2 * (t & 3) + (i & 1);
}
// The tensor map of B (innermost dimension first, as cuTensorMapEncodeTiled takes it): KN walks B (K rows
// of n values), NK walks X (n rows of K values); and the box origin of the 64-column (KN) or 64-row (NK)
// piece starting at column col of C, in K tile kt. Either box is 64 lines of 64 values (128 bytes).
struct MapShape { int64_t inner, outer; };
__host__ __device__ __forceinline__ MapShape BMapShape(bool nk, int64_t k, int64_t n) { return nk ? MapShape{k, n} : MapShape{n, k}; }
__host__ __device__ __forceinline__ void BoxOrigin(bool nk, int kt, int col, int* c0, int* c1) {
  *c0 = nk ? kt * kBk : col, *c1 = nk ? col : kt * kBk;
}
template <class TL> __host__ __device__ __forceinline__ int CStageOffset(int row, int col) { return row * TL::kCRowBytes + col * 2; }
// NK: the staged tile transposed, column col of C (a row of Y) one kCColBytes line of the CTA's 128 rows.
__host__ __device__ __forceinline__ int CStageOffsetNk(int row, int col) { return col * kCColBytes + row * 2; }

// ---- device primitives --------------------------------------------------------------------------
__device__ __forceinline__ uint32_t SmemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
#define SD_ACC8(d, o) "+f"(d[o]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7])
#define SD_ACC32(d, o) SD_ACC8(d, o), SD_ACC8(d, o + 8), SD_ACC8(d, o + 16), SD_ACC8(d, o + 24)
#define SD_ACC64(d, o) SD_ACC32(d, o), SD_ACC32(d, o + 32)
#define SD_ACC128(d, o) SD_ACC64(d, o), SD_ACC64(d, o + 64)
#define SD_R32A "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define SD_R32B "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define SD_R32C "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"
#define SD_R32D "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
// D (64 x N, fp32) += A (64 x 32 logical, 2:4 compressed, K-major, shared) * B (32 x N, shared; imm-trans-b
// kTb: 1 MN-major, 0 K-major); metadata e; sparsity selector 0; scale-d 1 (accumulators start at zero).
#define SD_WGMMA_SP(N, TY, REGS, ACC, RA, RB, RE, RT)                                                              \
  asm volatile("wgmma.mma_async.sp.sync.aligned.m64n" #N "k32.f32." TY "." TY " {" REGS "}, %" #RA ", %" #RB ", %" #RE \
               ", 0, 1, 1, 1, 0, %" #RT ";\n" : ACC : "l"(da), "l"(db), "r"(e), "n"(kTb))
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void FenceToAsyncProxy() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void WgmmaWait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void MbarInit(uint32_t bar, uint32_t count = 1) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory"); }
__device__ __forceinline__ void MbarArrive(uint32_t bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory"); }
// The two consumer warpgroups only (named barrier 1; the producer warp of WS does not take part).
__device__ __forceinline__ void ConsumerSync() { asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory"); }
__device__ __forceinline__ void MbarInitFence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void MbarExpect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void MbarWait(uint32_t bar, uint32_t phase) {
  asm volatile("{\n .reg .pred done;\n SD_WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               " @!done bra SD_WAIT_%=;\n}\n" ::"r"(bar), "r"(phase) : "memory");
}
__device__ __forceinline__ void BulkCopy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
// Box {64 columns, 64 rows} of B at (col, row), 128-byte swizzled as it lands; out-of-range parts are zeros.
__device__ __forceinline__ void TensorCopy(uint32_t dst, const CUtensorMap* map, int col, int row, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
               ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(bar) : "memory");
}
template <typename T, int N, int kTb>
__device__ __forceinline__ void WgmmaSp(float (&d)[N / 2], uint64_t da, uint64_t db, uint32_t e) {
  constexpr bool kF16 = std::is_same<T, __half>::value;
  if constexpr (N == 64) {
    if constexpr (kF16) SD_WGMMA_SP(64, "f16", SD_R32A, SD_ACC32(d, 0), 32, 33, 34, 35);
    else SD_WGMMA_SP(64, "bf16", SD_R32A, SD_ACC32(d, 0), 32, 33, 34, 35);
  } else if constexpr (N == 128) {
    if constexpr (kF16) SD_WGMMA_SP(128, "f16", SD_R32A "," SD_R32B, SD_ACC64(d, 0), 64, 65, 66, 67);
    else SD_WGMMA_SP(128, "bf16", SD_R32A "," SD_R32B, SD_ACC64(d, 0), 64, 65, 66, 67);
  } else {
    if constexpr (kF16) SD_WGMMA_SP(256, "f16", SD_R32A "," SD_R32B "," SD_R32C "," SD_R32D, SD_ACC128(d, 0), 128, 129, 130, 131);
    else SD_WGMMA_SP(256, "bf16", SD_R32A "," SD_R32B "," SD_R32C "," SD_R32D, SD_ACC128(d, 0), 128, 129, 130, 131);
  }
}
#else  // host-test builds for other archs: the kernel body is never run there
__device__ __forceinline__ void FenceToAsyncProxy() { __trap(); }
__device__ __forceinline__ void WgmmaFence() { __trap(); }
__device__ __forceinline__ void WgmmaCommit() {}
template <int N> __device__ __forceinline__ void WgmmaWait() {}
__device__ __forceinline__ void MbarInit(uint32_t, uint32_t = 1) {}
__device__ __forceinline__ void MbarArrive(uint32_t) {}
__device__ __forceinline__ void ConsumerSync() {}
__device__ __forceinline__ void MbarInitFence() {}
__device__ __forceinline__ void MbarExpect(uint32_t, uint32_t) {}
__device__ __forceinline__ void MbarWait(uint32_t, uint32_t) {}
__device__ __forceinline__ void BulkCopy(uint32_t, const void*, uint32_t, uint32_t) {}
__device__ __forceinline__ void TensorCopy(uint32_t, const CUtensorMap*, int, int, uint32_t) {}
template <typename T, int N, int kTb> __device__ __forceinline__ void WgmmaSp(float (&)[N / 2], uint64_t, uint64_t, uint32_t) {}
#endif
// Keeps the compiler from touching accumulators across the asynchronous wgmma (CUTLASS's fence_operand).
template <int R> __device__ __forceinline__ void FenceAcc(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ uint32_t Bits(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ uint32_t Bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }

struct Args {
  const unsigned char* a;  // records, see the header
  const void* b;           // KN: B (K x n); NK: X (n x K)
  void* c;                 // KN: C (M x n); NK: Y (n x M)
  int64_t m, k, n;
  int ktiles;
  int vec;   // B's rows (KN: n, NK: K values) a multiple of 8 and B 16-byte aligned: B in 16-byte chunks
  int pair;  // KN only: n even and C 4-byte aligned: C in 4-byte pairs
  int kt_per_split;  // K tiles a split (cluster rank) owns; == ktiles without split-K
};

// ---- roles --------------------------------------------------------------------------------------
// One 16-byte chunk of B's slab from the `valid` (0..8) values at src, zeros after them; base: any valid
// address of the operand. vec: valid is 0 or 8 and src 16-byte aligned (cp.async), else guarded 2-byte loads.
__device__ __forceinline__ void LoadChunk(uint32_t dst, unsigned char* dst_generic, const uint16_t* base, const uint16_t* src, int valid, bool vec) {
  if (vec) {
    CpAsync16(dst, valid > 0 ? src : base, valid > 0 ? 16 : 0);
    return;
  }
  uint32_t w[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const uint32_t lo = 2 * e < valid ? __ldg(src + 2 * e) : 0u, hi = 2 * e + 1 < valid ? __ldg(src + 2 * e + 1) : 0u;
    w[e] = lo | (hi << 16);
  }
  *reinterpret_cast<uint4*>(dst_generic) = make_uint4(w[0], w[1], w[2], w[3]);
}
__device__ __forceinline__ int Valid8(int64_t from, int64_t end) { return from >= end ? 0 : end - from >= 8 ? 8 : static_cast<int>(end - from); }
// KN: threads copy the 64 x BN slab of B of K tile kt (chunks of 8 columns of a K row), zero outside K x n.
template <class TL>
__device__ __forceinline__ void LoadBThreads(uint32_t stage, unsigned char* stage_generic, const Args& p, int kt, int64_t n0) {
  constexpr int kChunks = TL::kBn / 8;
  const uint16_t* b = static_cast<const uint16_t*>(p.b);
  for (int i = threadIdx.x; i < kBk * kChunks; i += kConsumers) {
    const int r = i / kChunks, cc = i % kChunks, off = BOffset(r, cc * 8);
    const int64_t k = static_cast<int64_t>(kt) * kBk + r, col = n0 + cc * 8;
    const int valid = k < p.k ? Valid8(col, p.n) : 0;
    LoadChunk(stage + off, stage_generic + off, b, valid > 0 ? b + k * p.n + col : b, valid, p.vec);
  }
}
// NK: threads copy rows n0 .. n0 + BN - 1 of X, K values 64 kt .. 64 kt + 63 (chunks of 8 K values; eight
// consecutive threads read a row's 128 bytes), zero outside n x K.
template <class TL>
__device__ __forceinline__ void LoadXThreads(uint32_t stage, unsigned char* stage_generic, const Args& p, int kt, int64_t n0) {
  const uint16_t* x = static_cast<const uint16_t*>(p.b);
  for (int i = threadIdx.x; i < TL::kBn * 8; i += kConsumers) {
    const int r = i / 8, ch = i % 8, off = BOffsetNk(ch * 8, r);
    const int64_t row = n0 + r, k = static_cast<int64_t>(kt) * kBk + ch * 8;
    const int valid = row < p.n ? Valid8(k, p.k) : 0;
    LoadChunk(stage + off, stage_generic + off, x, valid > 0 ? x + row * p.k + k : x, valid, p.vec);
  }
}
// Threads copy K tile kt: the CTA's two records (cp.async) and the tile's B (KN) or X (NK).
template <class TL, bool kNk>
__device__ __forceinline__ void LoadStageThreads(uint32_t stage, unsigned char* stage_generic, const Args& p, int64_t mb0, int kt, int64_t n0) {
  for (int i = threadIdx.x; i < 2 * kRecordBytes / 16; i += kConsumers) {
    const int r = i / (kRecordBytes / 16), x = i % (kRecordBytes / 16);
    CpAsync16(stage + TL::kBBytes + r * kRecordBytes + x * 16, p.a + ((mb0 + r) * p.ktiles + kt) * kRecordBytes + x * 16, 16);
  }
  if constexpr (kNk) LoadXThreads<TL>(stage, stage_generic, p, kt, n0);
  else LoadBThreads<TL>(stage, stage_generic, p, kt, n0);
}
// This warpgroup's two k32 steps of a stage: A from its record, metadata from the record's tail.
template <typename T, class TL, bool kNk>
__device__ __forceinline__ void ComputeStage(uint32_t stage, const unsigned char* stage_generic, int wg, float (&acc)[TL::kBn / 2]) {
  const int t = threadIdx.x & 127;
  const uint32_t record = stage + TL::kBBytes + wg * kRecordBytes;
  const uint2 e = *reinterpret_cast<const uint2*>(stage_generic + TL::kBBytes + wg * kRecordBytes + kAImageBytes + 4 * MetaThreadWord(t));
  WgmmaFence();
  WgmmaSp<T, TL::kBn, TransB<kNk>()>(acc, ADesc(record, 0), BDescFor<kNk>(stage, 0), e.x);
  WgmmaSp<T, TL::kBn, TransB<kNk>()>(acc, ADesc(record, 1), BDescFor<kNk>(stage, 1), e.y);
  WgmmaCommit();
}
// A C value pair (row, col), (row, col + 1), guarded at M and n (any n, any alignment). NK: the two lie a
// row of Y (M values) apart, so each is stored alone.
template <typename T, bool kNk>
__device__ __forceinline__ void StorePair(const Args& p, int64_t row, int64_t col, float x, float y) {
  if (row >= p.m || col >= p.n) return;
  if constexpr (kNk) {
    T* out = static_cast<T*>(p.c) + col * p.m + row;
    out[0] = FromF<T>(x);
    if (col + 1 < p.n) out[p.m] = FromF<T>(y);
    return;
  }
  T* out = static_cast<T*>(p.c) + row * p.n + col;
  if (p.pair) {
    *reinterpret_cast<uint32_t*>(out) = Bits(FromF<T>(x)) | (Bits(FromF<T>(y)) << 16);
  } else {
    out[0] = FromF<T>(x);
    if (col + 1 < p.n) out[1] = FromF<T>(y);
  }
}
// C from the fragments, guarded (any n, any alignment).
template <typename T, class TL, bool kNk>
__device__ __forceinline__ void StoreFragments(const Args& p, int64_t row0, int64_t n0, const float (&acc)[TL::kBn / 2]) {
  const int t = threadIdx.x & 127;
#pragma unroll
  for (int i = 0; i < TL::kBn / 2; i += 2) {
    int r, cc;
    AccCoord(t, i, &r, &cc);
    StorePair<T, kNk>(p, row0 + r, n0 + cc, acc[i], acc[i + 1]);
  }
}
// The copy-engine path's epilogue: the tile through shared memory, then 16-byte chunks of C's rows (KN,
// n % 8 == 0) or of Y's rows (NK, M % 8 == 0: the tile staged transposed, a chunk is 8 rows of a column).
template <typename T, class TL, bool kNk>
__device__ __forceinline__ void StoreStaged(const Args& p, unsigned char* smem, int wg, int64_t cta_row0, int64_t n0, const float (&acc)[TL::kBn / 2]) {
  const int t = threadIdx.x & 127;
#pragma unroll
  for (int i = 0; i < TL::kBn / 2; i += 2) {
    int r, cc;
    AccCoord(t, i, &r, &cc);
    if constexpr (kNk) {
      *reinterpret_cast<uint16_t*>(smem + CStageOffsetNk(64 * wg + r, cc)) = static_cast<uint16_t>(Bits(FromF<T>(acc[i])));
      *reinterpret_cast<uint16_t*>(smem + CStageOffsetNk(64 * wg + r, cc + 1)) = static_cast<uint16_t>(Bits(FromF<T>(acc[i + 1])));
    } else {
      *reinterpret_cast<uint32_t*>(smem + CStageOffset<TL>(64 * wg + r, cc)) = Bits(FromF<T>(acc[i])) | (Bits(FromF<T>(acc[i + 1])) << 16);
    }
  }
  ConsumerSync();
  T* c = static_cast<T*>(p.c);
  if constexpr (kNk) {
    constexpr int kChunks = kBm / 8;  // of a column of the tile
    for (int i = threadIdx.x; i < TL::kBn * kChunks; i += kConsumers) {
      const int col = i / kChunks, ch = i % kChunks;
      const int64_t row = cta_row0 + ch * 8, j = n0 + col;
      if (row < p.m && j < p.n) *reinterpret_cast<uint4*>(c + j * p.m + row) = *reinterpret_cast<const uint4*>(smem + CStageOffsetNk(ch * 8, col));
    }
  } else {
    constexpr int kChunks = TL::kBn / 8;
    for (int i = threadIdx.x; i < kBm * kChunks; i += kConsumers) {
      const int r = i / kChunks, ch = i % kChunks;
      const int64_t row = cta_row0 + r, col = n0 + ch * 8;
      if (row < p.m && col < p.n) *reinterpret_cast<uint4*>(c + row * p.n + col) = *reinterpret_cast<const uint4*>(smem + CStageOffset<TL>(r, ch * 8));
    }
  }
}

// Split-K epilogue: every rank of the cluster parks its fp32 partial tile in its shared memory (PartialUnit
// order); rank r then sums the units r * 256 + threadIdx.x (+ 256 * splits ...) over the ranks in rank order
// 0, 1, .. (deterministic) through distributed shared memory and stores them. Called by every thread of the
// CTA (the producer warp too: the cluster barrier counts them); the stages are idle when it starts.
template <typename T, class TL, bool kNk>
__device__ __forceinline__ void ClusterReduce(const Args& p, unsigned char* smem, int wg, int64_t cta_row0, int64_t n0, const float (&acc)[TL::kBn / 2]) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // host-test builds for other archs: never run
#else
  cg::cluster_group cluster = cg::this_cluster();
  const int t = threadIdx.x & 127, rank = static_cast<int>(cluster.block_rank()), splits = static_cast<int>(cluster.num_blocks());
  float4* mine = reinterpret_cast<float4*>(smem);
  if (threadIdx.x < kConsumers) {
    ConsumerSync();  // both warpgroups' wgmmas retired: no stage is read any more
#pragma unroll
    for (int q = 0; q < TL::kBn / 8; ++q) mine[PartialUnit(TL::kBn, wg, q, t)] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
  }
  cluster.sync();  // every rank's partial tile is in its shared memory
  if (threadIdx.x < kConsumers) {
    constexpr int kUnits = 2 * (TL::kBn / 8) * 128;
    for (int u = rank * kConsumers + static_cast<int>(threadIdx.x); u < kUnits; u += kConsumers * splits) {
      float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int s = 0; s < splits; ++s) {
        const float4 x = cluster.map_shared_rank(mine, s)[u];
        sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
      }
      int uw, uq, ut, r, cc;
      PartialUnitCoord(TL::kBn, u, &uw, &uq, &ut);
      AccCoord(ut, 4 * uq, &r, &cc);
      const int64_t row = cta_row0 + 64 * uw + r, col = n0 + cc;
      StorePair<T, kNk>(p, row, col, sum.x, sum.y);
      StorePair<T, kNk>(p, row + 8, col, sum.z, sum.w);
    }
  }
  cluster.sync();  // no rank leaves while another may still read its shared memory
#endif
}

// One CTA: rows 128 blockIdx.x.., K split blockIdx.y (its cluster rank; gridDim.y splits, the cluster),
// columns BN blockIdx.z..; kTma: the copy-engine transport (TransportFor's tma, tensor map built), else the
// threads copy; kNk: B given as X, C written as Y (the header's layouts). With WS (copy engine only) a 9th
// warp produces: it fills the stages as the consumers release them (full/empty mbarrier pairs), and no
// CTA-wide barrier sits in the main loop.
template <typename T, class TL, bool kTma, bool kNk>
__global__ void __launch_bounds__(KernelThreads<kTma>(), TL::kMinCtas) Nm24WgmmaSpKernel(Args p, const __grid_constant__ CUtensorMap b_map) {
  constexpr bool kWs = kTma && WS == 1;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (SmemAddr(smem_raw) & 1023)) & 1023);
  const uint32_t base = SmemAddr(smem), full_bars = base + TL::kDataBytes, empty_bars = full_bars + 8 * TL::kStages;
  const int wg = threadIdx.x >> 7;  // 0, 1: consumer warpgroups; 2: the producer warp (WS)
  int kt0, count;
  SplitTiles(static_cast<int>(blockIdx.y), p.ktiles, p.kt_per_split, &kt0, &count);
  const int64_t mb0 = 2 * static_cast<int64_t>(blockIdx.x), n0 = static_cast<int64_t>(blockIdx.z) * TL::kBn;
  const int64_t inside = (p.n - n0 + 63) / 64;  // B pieces holding columns < n, rows of X < n for NK (the copy engine skips the rest)
  const int pieces = inside < TL::kPieces ? static_cast<int>(inside) : TL::kPieces;
  float acc[TL::kBn / 2];
#pragma unroll
  for (int i = 0; i < TL::kBn / 2; ++i) acc[i] = 0.0f;
  auto stage = [&](int j) { return base + PipeStage(j, TL::kStages) * TL::kStageBytes; };
  auto full = [&](int j) { return full_bars + 8u * PipeStage(j, TL::kStages); };
  auto empty = [&](int j) { return empty_bars + 8u * PipeStage(j, TL::kStages); };
  auto load = [&](int j) {  // K tile kt0 + j into its stage (kTma: one thread only)
    const uint32_t s = stage(j);
    const int kt = kt0 + j;
    if constexpr (kTma) {
      MbarExpect(full(j), 2 * kRecordBytes + pieces * kBPieceBytes);
      for (int r = 0; r < 2; ++r) BulkCopy(s + TL::kBBytes + r * kRecordBytes, p.a + ((mb0 + r) * p.ktiles + kt) * kRecordBytes, kRecordBytes, full(j));
      for (int q = 0; q < pieces; ++q) {
        int c0, c1;
        BoxOrigin(kNk, kt, static_cast<int>(n0) + 64 * q, &c0, &c1);
        TensorCopy(s + q * kBPieceBytes, &b_map, c0, c1, full(j));
      }
    } else {
      LoadStageThreads<TL, kNk>(s, smem + (s - base), p, mb0, kt, n0);
    }
  };
  if constexpr (kWs) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < TL::kStages; ++i) MbarInit(full_bars + 8u * i, 1), MbarInit(empty_bars + 8u * i, kEmptyArrivals);
      MbarInitFence();
    }
    __syncthreads();  // the barriers are initialised (the only CTA-wide barrier of this path)
    if (wg == 2) {  // producer warp: lane 0 issues every K tile as soon as its stage is released
      if ((threadIdx.x & 31) == 0) {
        for (int j = 0; j < count; ++j) {
          if (j >= TL::kStages) MbarWait(empty(j), PipeEmptyParity(j, TL::kStages));
          load(j);
        }
      }
    } else {
      auto consume = [&](int j) {  // K tile j: wait until it landed, issue its wgmmas, free a stage
        MbarWait(full(j), PipeFullParity(j, TL::kStages));
        ComputeStage<T, TL, kNk>(stage(j), smem + (stage(j) - base), wg, acc);
        if constexpr (kInflight) WgmmaWait<1>();  // tile j - 1's group retired; j's still reads its stage
        else WgmmaWait<0>();
        const int done = PipeReleaseAfter(j, kInflight);
        if (done >= 0) MbarArrive(empty(done));
      };
      if constexpr (kInflight) {
        // Two K tiles an iteration, so the metadata registers of consecutive tiles are distinct variables.
        for (int j = 0; j < count; j += 2) {
          consume(j);
          if (j + 1 < count) consume(j + 1);
        }
        WgmmaWait<0>();
      } else {
        for (int j = 0; j < count; ++j) consume(j);
      }
    }
  } else {
    if constexpr (kTma) {
      if (threadIdx.x == 0) {
        for (int i = 0; i < TL::kStages; ++i) MbarInit(full_bars + 8u * i);
        MbarInitFence();
        for (int j = 0; j < TL::kStages - 1 && j < count; ++j) load(j);
      }
    } else {
#pragma unroll
      for (int j = 0; j < TL::kStages - 1; ++j) { if (j < count) load(j); CpAsyncCommit(); }
    }
    for (int j = 0; j < count; ++j) {
      if constexpr (!kTma) { CpAsyncWait<TL::kStages - 2>(); FenceToAsyncProxy(); }
      __syncthreads();  // K tile j - 1's wgmma retired in both warpgroups: its stage may be refilled
      if (j + TL::kStages - 1 < count && (!kTma || threadIdx.x == 0)) load(j + TL::kStages - 1);
      if constexpr (kTma) MbarWait(full(j), PipeFullParity(j, TL::kStages));
      else CpAsyncCommit();
      ComputeStage<T, TL, kNk>(stage(j), smem + (stage(j) - base), wg, acc);
      // All of this warpgroup's wgmmas retire before the next stage's metadata registers are loaded: the
      // metadata operand, like the accumulators, must not be redefined while a wgmma reading it is in flight
      // (ptxas serializes otherwise, C7515; CUTLASS's SM90 sparse mainloop also keeps 0 wgmma groups in flight).
      WgmmaWait<0>();
    }
  }
  FenceAcc(acc);
  if (gridDim.y > 1) {  // split-K: the cluster sums the partial tiles (every thread takes part)
    ClusterReduce<T, TL, kNk>(p, smem, wg, mb0 * 64, n0, acc);
  } else if (wg < 2) {  // the producer warp has nothing to store
    if constexpr (kTma) {
      ConsumerSync();  // both warpgroups' wgmma retired: the stages may hold the C tile
      StoreStaged<T, TL, kNk>(p, smem, wg, mb0 * 64, n0, acc);
    } else {
      StoreFragments<T, TL, kNk>(p, (mb0 + wg) * 64, n0, acc);
    }
  }
}

// ---- host: compression + metadata (unit tested) ------------------------------------------------
struct Nm24WgHost {
  int64_t rows = 0, cols = 0, mp = 0, kp = 0;  // mp % 128 == 0, kp % 64 == 0
  std::vector<float> vals;      // per record 2048 values at AImageOffset(m, c) / 2; record (mb, kt) = mb * ktiles + kt
  std::vector<uint32_t> meta;   // per record 128 words at MetaWord(...)
};
// Compresses canonical CSR; entries with value 0 are dropped. False with a reason when a group of four
// has more than two nonzeros or the input is malformed.
bool BuildNm24Wg(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, Nm24WgHost* out, std::string* why) {
  if (rows <= 0 || cols <= 0) return (*why = "bad shape", false);
  out->rows = rows, out->cols = cols;
  out->mp = (rows + kBm - 1) / kBm * kBm, out->kp = (cols + kBk - 1) / kBk * kBk;
  const int64_t ktiles = out->kp / kBk, records = out->mp / 64 * ktiles, groups = out->kp / 4;
  out->vals.assign(records * 2048, 0.0f);
  out->meta.assign(records * 128, 0x44444444u);  // every group defaults to indices (0, 1)
  std::vector<int8_t> idx(groups * 2);
  std::vector<float> kept(groups * 2);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(idx.begin(), idx.end(), -1);
    std::fill(kept.begin(), kept.end(), 0.0f);
    if (ro[r] > ro[r + 1]) return (*why = "row offsets decrease at row " + std::to_string(r), false);
    for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
      if (ci[e] < 0 || ci[e] >= cols) return (*why = "column index out of range at entry " + std::to_string(e), false);
      if (v[e] == 0.0f) continue;
      const int64_t gi = ci[e] / 4;
      const int slot = idx[2 * gi] < 0 ? 0 : idx[2 * gi + 1] < 0 ? 1 : 2;
      if (slot == 2)
        return (*why = "not 2:4: more than 2 nonzeros in columns " + std::to_string(gi * 4) + ".." + std::to_string(gi * 4 + 3) +
                       " of row " + std::to_string(r), false);
      idx[2 * gi + slot] = static_cast<int8_t>(ci[e] % 4);  // CSR columns increase: idx0 < idx1
      kept[2 * gi + slot] = v[e];
    }
    const int64_t mb = r / 64;
    const int m = static_cast<int>(r % 64), warp = m / 16, g = m % 8, half = (m % 16) / 8;
    for (int64_t gi = 0; gi < groups; ++gi) {
      int i0 = idx[2 * gi], i1 = idx[2 * gi + 1];
      if (i0 < 0) { i0 = 0; i1 = 1; }          // empty group: indices (0, 1), zeros
      else if (i1 < 0 && i0 < 3) { i1 = 3; }   // one nonzero: pair it with an explicit zero at 3
      else if (i1 < 0) { i0 = 2; i1 = 3; std::swap(kept[2 * gi], kept[2 * gi + 1]); }  // nonzero at 3: zero at 2
      const int64_t rec = mb * ktiles + gi / 16;
      const int q = static_cast<int>(gi % 16), s = q / 8, h = (q % 8) / 4, j = q % 4;  // group q of the K tile
      out->vals[rec * 2048 + AImageOffset(m, 2 * q) / 2] = kept[2 * gi];
      out->vals[rec * 2048 + AImageOffset(m, 2 * q + 1) / 2] = kept[2 * gi + 1];
      uint32_t& word = out->meta[rec * 128 + MetaWord(warp, g, h, s)];
      const int shift = half * 16 + j * 4;
      word = (word & ~(0xFu << shift)) | (static_cast<uint32_t>(i0 | (i1 << 2)) << shift);
    }
  }
  return true;
}
// The uploaded bytes: per record the A image in the dtype, then the metadata words.
template <typename T> std::vector<unsigned char> PackRecords(const Nm24WgHost& h) {
  const int64_t records = static_cast<int64_t>(h.meta.size() / 128);
  std::vector<unsigned char> bytes(records * kRecordBytes);
  for (int64_t rec = 0; rec < records; ++rec) {
    unsigned char* out = bytes.data() + rec * kRecordBytes;
    for (int i = 0; i < 2048; ++i) {
      const T x = T(h.vals[rec * 2048 + i]);  // exact: the harness's values are representable
      std::memcpy(out + 2 * i, &x, 2);
    }
    std::memcpy(out + kAImageBytes, h.meta.data() + rec * 128, kMetaBytes);
  }
  return bytes;
}

// ---- host: how a run is cut (unit tested) -----------------------------------------------------------
enum TileKind { kSmall = 0, kMid = 1, kBig = 2 };
inline TileKind TileFor(int64_t n) { return n <= SMALL_N_MAX ? kSmall : n <= MID_N_MAX ? kMid : kBig; }
inline int TileColumns(TileKind k) { return k == kSmall ? 64 : k == kMid ? 128 : BN; }
// What prepare learnt of the device for one kernel (tile, transport): CTAs an SM holds at once
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) and, for each cluster size c in 2..SPLIT_MAX, how many
// clusters of c CTAs can be resident at once (cudaOccupancyMaxActiveClusters; 0 when none can). The second
// is less than CTAs per SM x SMs / c: a cluster must sit inside one GPC, so fewer fit than that quotient,
// and a grid of more clusters than fit runs in two rounds with half its SMs idle (seen in ncu).
struct Fit {
  int ctas_per_sm = 1;
  int resident_clusters[SPLIT_MAX + 1] = {};  // [c] for c >= 2; [0] and [1] unused
};
struct Plan { int splits = 1, kt_per_split = 1; };
// K splits for `tiles` output tiles: s in 1 .. min(resident CTAs / tiles, SPLIT_MAX, K tiles) (the CTAs
// fill the device at most once), the one whose rounds of resident clusters x K share is least
// (ceil(tiles / resident_clusters[s]) / s; the fewer splits on a tie). Every split gets
// ceil(ktiles / s) K tiles and none is empty (so splits may come out below s; the cost uses that count).
inline Plan MakePlan(int64_t tiles, int ktiles, int sms, const Fit& fit, int split_max = SPLIT_MAX) {
  const int64_t slots = static_cast<int64_t>(sms) * fit.ctas_per_sm;
  const int64_t most = std::max<int64_t>(1, std::min<int64_t>({tiles > 0 ? slots / tiles : 1, split_max, SPLIT_MAX, ktiles}));
  Plan best;
  best.kt_per_split = ktiles;
  double best_cost = 1.0;  // one split: the CTAs fit at once (tiles <= slots) or s is 1 anyway
  for (int64_t s = 2; s <= most; ++s) {
    const int per = static_cast<int>((ktiles + s - 1) / s), splits = (ktiles + per - 1) / per;
    const int resident = fit.resident_clusters[splits];
    if (resident < 1) continue;
    const double cost = static_cast<double>((tiles + resident - 1) / resident) / splits;
    if (cost < best_cost) best_cost = cost, best.splits = splits, best.kt_per_split = per;
  }
  return best;
}

// ---- host: state, launch -------------------------------------------------------------------------
struct State {
  int dtype = 0;
  int64_t m = 0, k = 0, mp = 0, kp = 0;
  unsigned char* a = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;  // the driver's, looked up in prepare
  CUtensorMap b_map{};  // B's tensor map for (map_b, map_n), rebuilt by run() when B or n changes
  const void* map_b = nullptr;
  int64_t map_n = 0;
  int sms = 1;         // the device's SM count (prepare)
  Fit fit[3][2];       // [TileKind][tma], of the layout's kernels
  bool nk = false;     // sd_problem.layout == SD_LAYOUT_NK (prepare)
};
// KN: B (K x n, row-major, 2-byte values) as boxes {64 columns, 64 K rows}; NK: X (n x K) as boxes {64 K,
// 64 rows}. Either lands as 64 lines of 128 bytes, 128-byte swizzled, zeros outside.
CUresult EncodeBMap(State* s, const void* b, int64_t n) {
  const MapShape shape = BMapShape(s->nk, s->k, n);
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(shape.inner), static_cast<cuuint64_t>(shape.outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(shape.inner) * 2};
  const cuuint32_t box[2] = {64, kBk}, unit[2] = {1, 1};
  const CUresult r = s->encode(&s->b_map, s->dtype == SD_DTYPE_FP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
                               const_cast<void*>(b), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  s->map_b = r == CUDA_SUCCESS ? b : nullptr, s->map_n = n;
  return r;
}
template <typename T, class TL, bool kTma, bool kNk> void* KernelPtr() { return reinterpret_cast<void*>(&Nm24WgmmaSpKernel<T, TL, kTma, kNk>); }
template <class TL, bool kTma>
cudaLaunchConfig_t LaunchConfig(dim3 grid, int splits, cudaStream_t stream, cudaLaunchAttribute* cluster) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = dim3(KernelThreads<kTma>());
  config.dynamicSmemBytes = TL::kSmemBytes;
  config.stream = stream;
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim.x = 1, cluster->val.clusterDim.y = splits, cluster->val.clusterDim.z = 1;
  config.attrs = cluster, config.numAttrs = splits > 1 ? 1 : 0;
  return config;
}
// Shared memory opt-in, occupancy, and how many clusters of each size can be resident, of one kernel.
template <typename T, class TL, bool kTma, bool kNk> cudaError_t FitKernel(int optin, Fit* fit) {
  if (TL::kSmemBytes > optin) return cudaErrorInvalidConfiguration;
  void* f = KernelPtr<T, TL, kTma, kNk>();
  cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, TL::kSmemBytes);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit->ctas_per_sm, f, KernelThreads<kTma>(), TL::kSmemBytes);
  if (e != cudaSuccess) return e;
  fit->ctas_per_sm = std::max(1, fit->ctas_per_sm);
  for (int c = 2; c <= SPLIT_MAX; ++c) {  // how many clusters of c CTAs can be resident at once
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = LaunchConfig<TL, kTma>(dim3(1, c, 1), c, nullptr, &cluster);
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, f, &config) != cudaSuccess) active = 0, (void)cudaGetLastError();  // a refused size is not an error of the run
    fit->resident_clusters[c] = std::max(0, active);
  }
  return cudaSuccess;
}
template <typename T, class TL, bool kNk> cudaError_t FitTile(int optin, Fit (&fit)[2]) {
  const cudaError_t e = FitKernel<T, TL, false, kNk>(optin, &fit[0]);
  return e == cudaSuccess ? FitKernel<T, TL, true, kNk>(optin, &fit[1]) : e;
}
template <typename T, bool kNk> cudaError_t FitAll(int optin, State* s) {
  cudaError_t e = FitTile<T, BigTile, kNk>(optin, s->fit[kBig]);
  if (e == cudaSuccess && MID_N_MAX > 0) e = FitTile<T, MidTile, kNk>(optin, s->fit[kMid]);
  if (e == cudaSuccess && SMALL_N_MAX > 0) e = FitTile<T, SmallTile, kNk>(optin, s->fit[kSmall]);
  return e;
}
// Only the layouts of this build are instantiated (SPARSEDITTO_BUILDS_LAYOUT); prepare refuses the others.
template <typename T> cudaError_t FitLayout(int optin, State* s) {
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_NK)) if (s->nk) return FitAll<T, true>(optin, s);
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_KN)) if (!s->nk) return FitAll<T, false>(optin, s);
  return cudaErrorInvalidValue;
}
template <typename T, class TL, bool kNk> cudaError_t LaunchTile(const State* s, Args a, bool tma, cudaStream_t stream) {
  const int64_t mblocks = s->mp / kBm, ntiles = (a.n + TL::kBn - 1) / TL::kBn;
  const Plan plan = MakePlan(mblocks * ntiles, a.ktiles, s->sms, s->fit[TileFor(a.n)][tma ? 1 : 0]);
  a.kt_per_split = plan.kt_per_split;
  cudaLaunchAttribute cluster;
  const dim3 grid(static_cast<unsigned>(mblocks), static_cast<unsigned>(plan.splits), static_cast<unsigned>(ntiles));
  if (tma) {
    const cudaLaunchConfig_t config = LaunchConfig<TL, true>(grid, plan.splits, stream, &cluster);
    return cudaLaunchKernelEx(&config, Nm24WgmmaSpKernel<T, TL, true, kNk>, a, s->b_map);
  }
  const cudaLaunchConfig_t config = LaunchConfig<TL, false>(grid, plan.splits, stream, &cluster);
  return cudaLaunchKernelEx(&config, Nm24WgmmaSpKernel<T, TL, false, kNk>, a, s->b_map);
}
template <typename T, bool kNk> cudaError_t LaunchLayout(const State* s, const Args& a, bool tma, cudaStream_t stream) {
  switch (TileFor(a.n)) {
    case kSmall: return LaunchTile<T, SmallTile, kNk>(s, a, tma, stream);
    case kMid: return LaunchTile<T, MidTile, kNk>(s, a, tma, stream);
    default: return LaunchTile<T, BigTile, kNk>(s, a, tma, stream);
  }
}
template <typename T> cudaError_t Launch(const State* s, const Args& a, bool tma, cudaStream_t stream) {
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_NK)) if (s->nk) return LaunchLayout<T, true>(s, a, tma, stream);
  if constexpr (SPARSEDITTO_BUILDS_LAYOUT(SD_LAYOUT_KN)) if (!s->nk) return LaunchLayout<T, false>(s, a, tma, stream);
  return cudaErrorInvalidValue;  // a layout left out of this build never gets past prepare
}
// What run's pointers and n allow (host-tested): the thread copy's 16-byte B chunks (vec), KN's 4-byte C
// pairs (pair), and the copy-engine path (tma): the tensor map's row stride and the staged store's 16-byte
// chunks need B's and C's rows to be multiples of 8 values and both pointers 16-byte aligned.
struct Transport { bool vec = false, pair = false, tma = false; };
inline Transport TransportFor(bool nk, int64_t m, int64_t k, int64_t n, uintptr_t b, uintptr_t c) {
  const int64_t b_row = nk ? k : n, c_row = nk ? m : n;  // values a row: B (KN) or X (NK); C (KN) or Y (NK)
  Transport t;
  t.vec = b_row % 8 == 0 && b % 16 == 0;
  t.pair = !nk && n % 2 == 0 && c % 4 == 0;
  t.tma = t.vec && c_row % 8 == 0 && c % 16 == 0 && n <= INT32_MAX && k <= INT32_MAX;
  return t;
}
}  // namespace

SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) { return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK); }

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->a);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  Nm24WgHost h;
  std::string why;
  int major = 0, minor = 0, optin = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (e != cudaSuccess) {
    why = std::string("device query: ") + cudaGetErrorString(e);
  } else if (major != 9 || minor != 0) {
    why = "needs sm_90 (Hopper wgmma.sp); device " + std::to_string(p->device) + " is compute capability " +
          std::to_string(major) + "." + std::to_string(minor);
  } else if ((p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) || !SPARSEDITTO_BUILDS_DTYPE(p->dtype)) {
    why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  } else if ((p->layout != SD_LAYOUT_KN && p->layout != SD_LAYOUT_NK) || !SPARSEDITTO_BUILDS_LAYOUT(p->layout)) {
    why = "layout " + std::to_string(p->layout) + " unsupported (KN, NK only) or not in this build";
  } else {
    BuildNm24Wg(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, &h, &why);
  }
  if (!why.empty()) {
    snprintf(error, cap, "nm24_wgmma_sp: %s", why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, p->rows, p->cols, h.mp, h.kp};
  s->nk = p->layout == SD_LAYOUT_NK;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, p->device);
  const std::vector<unsigned char> bytes = p->dtype == SD_DTYPE_FP16 ? PackRecords<__half>(h) : PackRecords<__nv_bfloat16>(h);
  if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&s->a), bytes.size());
  if (e == cudaSuccess) e = cudaMemcpy(s->a, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (e == cudaSuccess) {
    e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&s->encode), 12000, cudaEnableDefault, &found);
    if (e == cudaSuccess && found != cudaDriverEntryPointSuccess) e = cudaErrorSymbolNotFound;
  }
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && p->dtype == SD_DTYPE_FP16) e = FitLayout<__half>(optin, s);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && p->dtype == SD_DTYPE_BF16) e = FitLayout<__nv_bfloat16>(optin, s);
  if (e != cudaSuccess) {
    snprintf(error, cap, "nm24_wgmma_sp prepare: %s", cudaGetErrorString(e));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  State* s = static_cast<State*>(state);
  if (n < 1 || s->mp / kBm > INT32_MAX || (n + 63) / 64 > 65535) return 1;  // grid x: row blocks; z: column tiles
  const Transport t = TransportFor(s->nk, s->m, s->k, n, reinterpret_cast<uintptr_t>(b), reinterpret_cast<uintptr_t>(c));
  const Args a{s->a, b, c, s->m, s->k, n, static_cast<int>(s->kp / kBk), t.vec ? 1 : 0, t.pair ? 1 : 0, static_cast<int>(s->kp / kBk)};
  bool tma = t.tma;
  if (tma && (b != s->map_b || n != s->map_n) && EncodeBMap(s, b, n) != CUDA_SUCCESS) tma = false;  // threads copy then
  cudaError_t e = cudaErrorInvalidValue;  // a dtype left out of this build never gets past prepare
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (s->dtype == SD_DTYPE_FP16) e = Launch<__half>(s, a, tma, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (s->dtype == SD_DTYPE_BF16) e = Launch<__nv_bfloat16>(s, a, tma, stream);
  return e == cudaSuccess && cudaGetLastError() == cudaSuccess ? 0 : 1;
}
