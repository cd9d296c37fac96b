// Block-sparse (BSR, 64x64 blocks) SpMM on Hopper's warpgroup tensor cores: wgmma.mma_async m64n64k16,
// fp16/bf16 operands from shared memory, fp32 accumulators in registers. Needs sm_90a.
//
// Strategy: bsr_mma's block-row walk with the compute role on wgmma. One CTA owns one 64-row block-row x
// N_TILE columns of C; WGS warpgroups split the columns (N_TILE / WGS each, in n64 pieces). For each nonzero
// block it stages the 64x64 A block and the 64 x N_TILE slab of B (the rows of the block's column) into
// shared memory, STAGES deep, in the 128-byte-swizzled canonical layouts wgmma reads through matrix
// descriptors: A K-major (a row of 64 values is one 128-byte line), B MN-major (a K row of 64 columns is one
// 128-byte line; transposed-B wgmma). One wgmma group stays in flight while the next block is waited for.
// When n % 8 == 0 and B, C are 16-byte aligned the copy engine moves the operands (BsrWgmmaTmaKernel: one
// bulk copy of the A block's stored image, one tensor copy a 64-column piece of B, an mbarrier a stage) and
// C leaves through a shared tile in 16-byte row chunks; otherwise the threads copy (cp.async, same layout)
// and store from the fragments. For n <= SMALL_N_MAX a 64-column instance with one warpgroup is used;
// when the N_TILE-column grid fits in one wave of a DEEP_STAGES-deep instance, that one (ChooseTile).
// Block-rows run heaviest first. prepare builds: block-row pointers, block-column indices, each block's
// shared-memory image in the dtype (M, K zero-padded to multiples of 64), and one run record a CTA row
// (block-row, first block, block count) in heaviest-first order, so a CTA starts from one 16-byte load.
// Edges: B rows >= K and columns >= n are zeros (tensor-copy fill, cp.async src-size 0, or the guarded
// scalar path when n % 8 != 0); C stores are guarded at M and n.
// Current times against bsr_mma and the baselines: docs/results/ (llm suite, block 64 rows); the figures
// behind the tiles below: docs/lab/seed_choices.md.
// sparseditto:seed families=[block] dtypes=[fp16, bf16] archs=[sm_90a] block_sizes=[64]
#include "sparseditto_kernel.h"
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>
#define N_TILE 128       // sparseditto:tunable values=[128, 256]
#define WGS 2            // sparseditto:tunable values=[1, 2]
#define STAGES 3         // sparseditto:tunable values=[3, 4, 5]
#define SMALL_STAGES 6   // sparseditto:tunable values=[4, 6, 8]
#define SMALL_N_MAX 64   // sparseditto:tunable values=[0, 64, 128]
#define WIDE_MIN_N 1024      // sparseditto:tunable values=[512, 1024, 4096]
#define WIDE_MIN_BLOCKS 10   // sparseditto:tunable values=[0, 8, 10, 14]
#define DEEP_STAGES 4        // sparseditto:tunable values=[3, 4, 5, 6]
#define LPT_MAX_WAVES 3      // sparseditto:tunable values=[0, 3, 8]
static_assert(STAGES >= 3 && SMALL_STAGES >= 3 && DEEP_STAGES >= 3, "one block computing, one in flight on the tensor cores, one loading");
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(SD_BSR_WGMMA_HOST_TEST)
#error "bsr_wgmma needs wgmma: compile for sm_90a (-gencode arch=compute_90a,code=sm_90a)"
#endif

namespace {
constexpr int kBlock = 64;                        // rows and K of a block; one wgmma M, four k16 steps
constexpr int kLineBytes = 128;                   // one swizzled line: 64 values of 2 bytes
constexpr int kAtomBytes = 8 * kLineBytes;        // 8 lines: the 128-byte swizzle's period
constexpr int kABytes = kBlock * kLineBytes;      // A block: 64 K-major lines
constexpr int kBAtomBytes = kBlock * kLineBytes;  // B slab piece of 64 columns: 64 K lines
// ---- tiling -------------------------------------------------------------------------------------
template <int NT_, int WGS_, int STAGES_>
struct Tile {
  static constexpr int kNt = NT_, kStages = STAGES_, kThreads = 128 * WGS_;
  static constexpr int kWgCols = NT_ / WGS_, kPieces = kWgCols / 64;  // n64 wgmma pieces a warpgroup
  static constexpr int kBBytes = (NT_ / 64) * kBAtomBytes, kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = STAGES_ * kStageBytes + 1024 + 8 * STAGES_;  // + 1 KB-alignment slack, mbarriers
  static constexpr int kCRowBytes = NT_ * 2 + 16;  // C tile staged for the store; 16 bytes of pad: no bank conflicts
  static_assert(kBlock * kCRowBytes <= STAGES_ * kStageBytes, "the C tile fits where the stages were");
  static_assert(NT_ % 64 == 0 && kWgCols % 64 == 0 && kPieces >= 1, "warpgroup columns in n64 pieces");
};
using BigTile = Tile<N_TILE, WGS, STAGES>;
using SmallTile = Tile<64, 1, SMALL_STAGES>;
// For n >= WIDE_MIN_N when block-rows hold WIDE_MIN_BLOCKS nonzero blocks or more on average (0: never):
// a quarter of the A reloads and longer walks per CTA pay for one CTA an SM. 512 columns, 4 warpgroups, 3
// stages. Long block-rows (13-26 blocks) gained from it; short ones (6) and n = 128 lost, hence the two
// thresholds.
using WideTile = Tile<512, 4, 3>;
// When the N_TILE-column grid fits in one wave of this deeper instance (few column tiles: n = 128 and the
// like), latency, not resident CTAs, bounds it: more blocks in flight a CTA pay, where in a grid of
// several waves the extra stages would cost resident CTAs.
using DeepTile = Tile<N_TILE, WGS, DEEP_STAGES>;

// Byte offset of 16-byte chunk `chunk` of line `line` in a 128-byte-swizzled region whose base is 1 KB
// aligned: the chunk index is XORed with the line's position in its 8-line atom — the address map of
// wgmma's 128-byte swizzle (bits [4:6] ^= bits [7:9]).
__host__ __device__ __forceinline__ int SwizzledChunk(int line, int chunk) {
  return line * kLineBytes + ((chunk ^ (line & 7)) << 4);
}
// Where value (row, k) of the A block sits (bytes), and value (k, col) of the B slab.
__host__ __device__ __forceinline__ int AOffset(int row, int k) { return SwizzledChunk(row, k >> 3) + (k & 7) * 2; }
__host__ __device__ __forceinline__ int BOffset(int k, int col) {
  return (col >> 6) * kBAtomBytes + SwizzledChunk(k, (col & 63) >> 3) + (col & 7) * 2;
}
// wgmma matrix descriptor: start address, leading and stride byte offsets (16-byte units), 128-byte
// swizzle (mode 1 in bits 62-63). Every operand here spans one 64-wide swizzle atom in its contiguous
// dimension, so only the stride between 8-line groups (1 KB) is used; both offsets are set to it.
__host__ __device__ __forceinline__ uint64_t Descriptor(uint32_t smem_byte_address) {
  const uint64_t group = kAtomBytes >> 4;
  return (static_cast<uint64_t>((smem_byte_address & 0x3FFFF) >> 4)) | (group << 16) | (group << 32) | (1ull << 62);
}
// Start of k16 step `s` of the A block (32 bytes along the line) and of piece `piece` of the B slab
// (16 K lines = 2 KB down the piece).
__host__ __device__ __forceinline__ uint32_t AStepAddress(uint32_t a, int s) { return a + 32u * s; }
__host__ __device__ __forceinline__ uint32_t BStepAddress(uint32_t b, int piece, int s) {
  return b + piece * kBAtomBytes + s * 16 * kLineBytes;
}
// Byte offset of C tile value (row, col) where the epilogue stages it.
template <class TL> __host__ __device__ __forceinline__ int CStageOffset(int row, int col) { return row * TL::kCRowBytes + col * 2; }
// Accumulator i of an m64n64 piece held by thread t of a warpgroup: row, column in the piece.
__host__ __device__ __forceinline__ void AccCoord(int t, int i, int* row, int* col) {
  *row = 16 * (t >> 5) + ((t & 31) >> 2) + 8 * ((i >> 1) & 1);
  *col = 8 * (i >> 2) + 2 * (t & 3) + (i & 1);
}
// ---- device primitives --------------------------------------------------------------------------
__device__ __forceinline__ uint32_t SmemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// This thread's shared-memory writes (cp.async landed, plain stores) become visible to the tensor cores.
__device__ __forceinline__ void FenceToAsyncProxy() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void WgmmaWait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// The bulk-copy transport: one mbarrier a stage; thread 0 arms it with the stage's bytes and starts the
// copies (the TMA unit) that complete them; every thread waits for the stage's phase.
__device__ __forceinline__ void MbarInit(uint32_t bar) { asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory"); }
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
#define SD_WGMMA_N64(TY, d, da, db)                                                                            \
  asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " "                                      \
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"        \
               "%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, 1, 1, 1, 0, 1;\n"                                  \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),        \
                 "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),      \
                 "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),      \
                 "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                                        \
               : "l"(da), "l"(db))
// D (64x64, fp32) += A (64x16, K-major) * B (16x64, MN-major: imm-trans-b = 1), operands in shared memory.
template <typename T> __device__ __forceinline__ void WgmmaN64(float (&d)[32], uint64_t da, uint64_t db) {
  if constexpr (std::is_same<T, __half>::value) SD_WGMMA_N64("f16", d, da, db);
  else SD_WGMMA_N64("bf16", d, da, db);
}
#else  // host-test builds for other archs: the kernel body is never run there
__device__ __forceinline__ void FenceToAsyncProxy() { __trap(); }
__device__ __forceinline__ void MbarInit(uint32_t) {}
__device__ __forceinline__ void MbarInitFence() {}
__device__ __forceinline__ void MbarExpect(uint32_t, uint32_t) {}
__device__ __forceinline__ void MbarWait(uint32_t, uint32_t) {}
__device__ __forceinline__ void BulkCopy(uint32_t, const void*, uint32_t, uint32_t) {}
__device__ __forceinline__ void TensorCopy(uint32_t, const CUtensorMap*, int, int, uint32_t) {}
__device__ __forceinline__ void WgmmaFence() { __trap(); }
__device__ __forceinline__ void WgmmaCommit() {}
template <int N> __device__ __forceinline__ void WgmmaWait() {}
template <typename T> __device__ __forceinline__ void WgmmaN64(float (&)[32], uint64_t, uint64_t) {}
#endif
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
struct BsrArgs {
  const int32_t* col_idx;
  const void* vals;      // nnzb blocks of 64 x 64, each its shared-memory image (SwizzleBlocks)
  const int4* runs;      // a grid row's work: {block-row, first block, block count, 0}, heaviest first
  const void* b;
  void* c;
  int64_t m, k, n;
  int vec;  // n % 8 == 0 and B 16-byte aligned: cp.async B chunks
  int lpt_tiles;  // > 0: a 1-D grid, CTA x = rank * lpt_tiles + column tile; 0: x the rank, y the column tile
};
// The (run rank, column tile) of a CTA. The 1-D grid hands out every column tile of the heaviest block-row
// first, then the next one's (longest-processing-time order over the whole grid); the 2-D one hands out
// x first, so a column tile's block-rows run together and share B's columns in L2.
struct GridTile { int rank, column_tile; };
__host__ __device__ __forceinline__ GridTile GridTileOf(int bx, int by, int lpt_tiles) {
  return lpt_tiles > 0 ? GridTile{bx / lpt_tiles, bx % lpt_tiles} : GridTile{bx, by};
}
// ---- roles --------------------------------------------------------------------------------------
// A blocks are stored as their shared-memory image (SwizzleBlocks): a straight copy.
template <class TL> __device__ __forceinline__ void LoadABlock(uint32_t dst, const uint16_t* src) {
  for (int i = threadIdx.x; i < kBlock * 8; i += TL::kThreads) CpAsync16(dst + i * 16, src + i * 8, 16);
}
// B rows k0 .. k0+63, columns n0 .. n0+NT-1 in 64-column pieces; zero outside K x n.
template <class TL>
__device__ __forceinline__ void LoadBSlab(uint32_t dst, unsigned char* dst_generic, const BsrArgs& p, int64_t k0, int64_t n0) {
  constexpr int kChunks = TL::kNt / 8;
  const uint16_t* b = static_cast<const uint16_t*>(p.b);
  for (int i = threadIdx.x; i < kBlock * kChunks; i += TL::kThreads) {
    const int r = i / kChunks, cc = i % kChunks;
    const int64_t k = k0 + r, col = n0 + cc * 8;
    const int off = BOffset(r, cc * 8);
    if (p.vec) {  // n % 8 == 0: a chunk is wholly inside or wholly outside
      const bool in = k < p.k && col < p.n;
      CpAsync16(dst + off, in ? b + k * p.n + col : b, in ? 16 : 0);
    } else {
      uint32_t w[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t c0 = col + 2 * e;
        const uint32_t lo = (k < p.k && c0 < p.n) ? __ldg(b + k * p.n + c0) : 0u;
        const uint32_t hi = (k < p.k && c0 + 1 < p.n) ? __ldg(b + k * p.n + c0 + 1) : 0u;
        w[e] = lo | (hi << 16);
      }
      *reinterpret_cast<uint4*>(dst_generic + off) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}
// This warpgroup's pieces of D += A block * B slab: four k16 steps, one n64 wgmma a piece and step.
template <typename T, class TL>
__device__ __forceinline__ void ComputeBlock(uint32_t sa, uint32_t sb, int wg, float (&acc)[TL::kPieces][32]) {
#pragma unroll
  for (int s = 0; s < kBlock / 16; ++s) {
#pragma unroll
    for (int q = 0; q < TL::kPieces; ++q) {
      WgmmaN64<T>(acc[q], Descriptor(AStepAddress(sa, s)), Descriptor(BStepAddress(sb, wg * TL::kPieces + q, s)));
    }
  }
}
template <class TL> __device__ __forceinline__ void ZeroAcc(float (&acc)[TL::kPieces][32]) {
#pragma unroll
  for (int q = 0; q < TL::kPieces; ++q)
#pragma unroll
    for (int i = 0; i < 32; ++i) acc[q][i] = 0.0f;
}
template <typename T, class TL>
__device__ __forceinline__ void StoreTile(const BsrArgs& p, int64_t row_base, int64_t n0, int wg, const float (&acc)[TL::kPieces][32]) {
  T* c = static_cast<T*>(p.c);
  const int t = threadIdx.x & 127;
#pragma unroll
  for (int q = 0; q < TL::kPieces; ++q) {
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      int r, cc;
      AccCoord(t, i, &r, &cc);
      const int64_t row = row_base + r, col = n0 + (wg * TL::kPieces + q) * 64 + cc;
      if (row < p.m && col < p.n) c[row * p.n + col] = FromF<T>(acc[q][i]);
    }
  }
}

// The TMA kernel's epilogue (n % 8 == 0, C 16-byte aligned): accumulators converted into a shared C tile
// (pairs of adjacent columns as 4-byte words), then whole rows written with 16-byte stores — full 32-byte
// sectors, where stores straight from the fragments write 2 or 4 bytes of a row per lane.
template <typename T, class TL>
__device__ __forceinline__ void StageTile(unsigned char* smem, int wg, const float (&acc)[TL::kPieces][32]) {
  const int t = threadIdx.x & 127;
#pragma unroll
  for (int q = 0; q < TL::kPieces; ++q) {
#pragma unroll
    for (int i = 0; i < 32; i += 2) {
      int r, cc;
      AccCoord(t, i, &r, &cc);
      const T lo = FromF<T>(acc[q][i]), hi = FromF<T>(acc[q][i + 1]);
      const uint32_t w = static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&lo)) |
                         (static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&hi)) << 16);
      *reinterpret_cast<uint32_t*>(smem + CStageOffset<TL>(r, (wg * TL::kPieces + q) * 64 + cc)) = w;
    }
  }
}
template <typename T, class TL>
__device__ __forceinline__ void StoreStaged(const BsrArgs& p, const unsigned char* smem, int64_t row_base, int64_t n0) {
  constexpr int kChunks = TL::kNt / 8;
  T* c = static_cast<T*>(p.c);
  for (int i = threadIdx.x; i < kBlock * kChunks; i += TL::kThreads) {
    const int r = i / kChunks, ch = i % kChunks;
    const int64_t row = row_base + r, col = n0 + ch * 8;
    if (row < p.m && col < p.n) *reinterpret_cast<uint4*>(c + row * p.n + col) = *reinterpret_cast<const uint4*>(smem + CStageOffset<TL>(r, ch * 8));
  }
}

// What both kernels start from: the shared memory (1 KB-aligned for the swizzle atoms), the CTA's block-row
// (heaviest first by blockIdx.x), the thread's warpgroup, its first column and its run of nonzero blocks.
struct CtaWork {
  unsigned char* smem;
  uint32_t base;  // smem as a shared-space address
  int brow, wg, first, count;  // wg: this thread's warpgroup
  int64_t n0;
};
template <class TL> __device__ __forceinline__ CtaWork CtaWorkOf(const BsrArgs& p, unsigned char* smem_raw) {
  CtaWork w;
  w.smem = smem_raw + ((1024 - (SmemAddr(smem_raw) & 1023)) & 1023);
  w.base = SmemAddr(w.smem);
  const GridTile at = GridTileOf(blockIdx.x, blockIdx.y, p.lpt_tiles);
  const int4 run = p.runs[at.rank];  // one load, not order -> row_ptr (two dependent ones)
  w.brow = run.x, w.first = run.y, w.count = run.z, w.wg = threadIdx.x >> 7;
  w.n0 = static_cast<int64_t>(at.column_tile) * TL::kNt;
  return w;
}

template <typename T, class TL>
__global__ void __launch_bounds__(TL::kThreads) BsrWgmmaKernel(BsrArgs p) {
  extern __shared__ unsigned char smem_raw[];
  const CtaWork w = CtaWorkOf<TL>(p, smem_raw);
  unsigned char* smem = w.smem;
  const uint32_t base = w.base;
  const int brow = w.brow, first = w.first, count = w.count, wg = w.wg;
  const int64_t n0 = w.n0;
  const uint16_t* vals = static_cast<const uint16_t*>(p.vals);
  float acc[TL::kPieces][32];
  ZeroAcc<TL>(acc);
  auto stage = [&](int j) { return base + (j % TL::kStages) * TL::kStageBytes; };
  auto load = [&](int j) {  // nonzero block j of this block-row into stage j % kStages
    const uint32_t s = stage(j);
    LoadABlock<TL>(s, vals + static_cast<int64_t>(first + j) * kBlock * kBlock);
    LoadBSlab<TL>(s + kABytes, smem + (s - base) + kABytes, p, static_cast<int64_t>(p.col_idx[first + j]) * kBlock, n0);
  };
  // Block j is loaded at iteration j - (kStages - 2): its stage was last read by block j - kStages, whose
  // wgmma group was retired (wait_group 1 at iteration j - kStages + 1) before that iteration's barrier.
#pragma unroll
  for (int j = 0; j < TL::kStages - 2; ++j) { if (j < count) load(j); CpAsyncCommit(); }
  for (int j = 0; j < count; ++j) {
    CpAsyncWait<TL::kStages - 3>();  // block j landed (this thread's part)
    FenceToAsyncProxy();
    __syncthreads();                 // ... everyone's part; block j - 2's wgmma retired in every warpgroup
    if (j + TL::kStages - 2 < count) load(j + TL::kStages - 2);
    CpAsyncCommit();
    WgmmaFence();
    ComputeBlock<T, TL>(stage(j), stage(j) + kABytes, wg, acc);
    WgmmaCommit();
    WgmmaWait<1>();  // block j - 1 retired; block j stays in flight across the next wait
  }
  WgmmaWait<0>();
  StoreTile<T, TL>(p, static_cast<int64_t>(brow) * kBlock, n0, wg, acc);
}

// The same walk with the copy engine: thread 0 issues a step's A block (one bulk copy of its image) and its
// B slab (one tensor copy a 64-column piece, swizzled and zero-filled by the TMA unit) against the stage's
// mbarrier; no thread computes an address. Used when n % 8 == 0 and B and C are 16-byte aligned (the
// tensor map's stride rule; the staged store). Stage reuse as in BsrWgmmaKernel: step j + kStages - 2 is
// issued after the barrier that follows step j - 2's wgmma retirement in every warpgroup.
template <typename T, class TL>
__global__ void __launch_bounds__(TL::kThreads) BsrWgmmaTmaKernel(BsrArgs p, const __grid_constant__ CUtensorMap b_map) {
  extern __shared__ unsigned char smem_raw[];
  const CtaWork w = CtaWorkOf<TL>(p, smem_raw);
  unsigned char* smem = w.smem;
  const uint32_t base = w.base, bars = base + TL::kStages * TL::kStageBytes;
  const int brow = w.brow, first = w.first, count = w.count, wg = w.wg;
  const int64_t n0 = w.n0;
  const uint16_t* vals = static_cast<const uint16_t*>(p.vals);
  const int64_t inside = (p.n - n0 + 63) / 64;  // pieces that hold columns < n
  const int pieces = inside < TL::kNt / 64 ? static_cast<int>(inside) : TL::kNt / 64;
  float acc[TL::kPieces][32];
  ZeroAcc<TL>(acc);
  auto stage = [&](int j) { return base + (j % TL::kStages) * TL::kStageBytes; };
  auto bar = [&](int j) { return bars + 8u * (j % TL::kStages); };
  // Thread 0 issues blocks 0, 1, ... in order and reads each block's column one issue ahead, so the load
  // is not waited for right before the copies it addresses.
  int next_col = threadIdx.x == 0 && count > 0 ? p.col_idx[first] : 0;
  auto issue = [&](int j) {  // thread 0: block j into its stage
    const uint32_t s = stage(j);
    const int k0 = next_col * kBlock;
    if (j + 1 < count) next_col = p.col_idx[first + j + 1];
    MbarExpect(bar(j), kABytes + pieces * kBAtomBytes);
    BulkCopy(s, vals + static_cast<int64_t>(first + j) * kBlock * kBlock, kABytes, bar(j));
    for (int q = 0; q < pieces; ++q) TensorCopy(s + kABytes + q * kBAtomBytes, &b_map, static_cast<int>(n0) + 64 * q, k0, bar(j));
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < TL::kStages; ++i) MbarInit(bars + 8u * i);
    MbarInitFence();
    for (int j = 0; j < TL::kStages - 2 && j < count; ++j) issue(j);
  }
  for (int j = 0; j < count; ++j) {
    __syncthreads();  // block j - 2's wgmma retired in every warpgroup: its stage may be refilled
    if (threadIdx.x == 0 && j + TL::kStages - 2 < count) issue(j + TL::kStages - 2);
    MbarWait(bar(j), static_cast<uint32_t>(j / TL::kStages) & 1u);
    WgmmaFence();
    ComputeBlock<T, TL>(stage(j), stage(j) + kABytes, wg, acc);
    WgmmaCommit();
    WgmmaWait<1>();
  }
  WgmmaWait<0>();
  __syncthreads();  // every warpgroup's wgmma retired: the stages may hold the C tile
  StageTile<T, TL>(smem, wg, acc);
  __syncthreads();
  StoreStaged<T, TL>(p, smem, static_cast<int64_t>(brow) * kBlock, n0);
}

// ---- host: BSR builder (unit tested) -------------------------------------------------------------
struct BsrHost {
  int64_t block_rows = 0, block_cols = 0;
  std::vector<int32_t> row_ptr;  // block_rows + 1
  std::vector<int32_t> col_idx;  // nnzb, increasing within a block-row
  std::vector<float> values;     // nnzb * 64 * 64, zero-padded
  std::vector<int32_t> order;    // block-rows by decreasing block count (stable)
  std::vector<int32_t> runs;     // per order entry: block-row, first block, block count, 0 (an int4)
};

// Builds 64x64 BSR from canonical CSR; any entry anywhere is placed (blocks need not be full). False with
// a reason on malformed input or sizes beyond int32 block indices.
bool BuildBsr(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, BsrHost* out, std::string* why) {
  why->clear();
  if (rows <= 0 || cols <= 0) { *why = "bad shape"; return false; }
  out->block_rows = (rows + kBlock - 1) / kBlock;
  out->block_cols = (cols + kBlock - 1) / kBlock;
  if (out->block_rows > INT32_MAX - 1 || out->block_cols > INT32_MAX) { *why = "too many blocks"; return false; }
  out->row_ptr.assign(out->block_rows + 1, 0);
  out->col_idx.clear();
  out->values.clear();
  std::vector<int64_t> mark(out->block_cols, -1), slot(out->block_cols, 0);
  std::vector<int32_t> here;
  constexpr int64_t bb = int64_t(kBlock) * kBlock;
  for (int64_t br = 0; br < out->block_rows; ++br) {
    const int64_t r0 = br * kBlock, r1 = std::min(rows, r0 + kBlock);
    here.clear();
    for (int64_t r = r0; r < r1; ++r) {
      if (ro[r] > ro[r + 1]) { *why = "row offsets decrease at row " + std::to_string(r); return false; }
      for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
        if (ci[e] < 0 || ci[e] >= cols) { *why = "column index out of range at entry " + std::to_string(e); return false; }
        const int32_t bc = ci[e] / kBlock;
        if (mark[bc] != br) { mark[bc] = br; here.push_back(bc); }
      }
    }
    std::sort(here.begin(), here.end());
    const int64_t first = static_cast<int64_t>(out->col_idx.size());
    if (first + static_cast<int64_t>(here.size()) > INT32_MAX) { *why = "too many nonzero blocks"; return false; }
    for (size_t i = 0; i < here.size(); ++i) slot[here[i]] = first + static_cast<int64_t>(i);
    out->col_idx.insert(out->col_idx.end(), here.begin(), here.end());
    out->values.resize(out->col_idx.size() * bb, 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
        const int32_t bc = ci[e] / kBlock;
        out->values[slot[bc] * bb + (r - r0) * kBlock + (ci[e] - int64_t(bc) * kBlock)] = v[e];
      }
    }
    out->row_ptr[br + 1] = static_cast<int32_t>(out->col_idx.size());
  }
  out->order.resize(out->block_rows);
  for (int64_t i = 0; i < out->block_rows; ++i) out->order[i] = static_cast<int32_t>(i);
  std::stable_sort(out->order.begin(), out->order.end(), [&](int32_t x, int32_t y) {
    return out->row_ptr[x + 1] - out->row_ptr[x] > out->row_ptr[y + 1] - out->row_ptr[y];
  });
  out->runs.clear();
  for (int32_t br : out->order) out->runs.insert(out->runs.end(), {br, out->row_ptr[br], out->row_ptr[br + 1] - out->row_ptr[br], 0});
  return true;
}

// Each block's values in the order of its shared-memory image: value (row, k) at byte AOffset(row, k).
std::vector<float> SwizzleBlocks(const std::vector<float>& plain) {
  std::vector<float> image(plain.size());
  for (size_t blk = 0; blk < plain.size() / (kBlock * kBlock); ++blk)
    for (int row = 0; row < kBlock; ++row)
      for (int k = 0; k < kBlock; ++k) image[blk * kBlock * kBlock + AOffset(row, k) / 2] = plain[blk * kBlock * kBlock + row * kBlock + k];
  return image;
}

// True when block-rows hold WIDE_MIN_BLOCKS nonzero blocks or more on average (never when it is 0).
bool LongBlockRows(int64_t nnzb, int64_t block_rows) { return WIDE_MIN_BLOCKS > 0 && nnzb >= int64_t(WIDE_MIN_BLOCKS) * block_rows; }

enum class TileKind { kSmall, kWide, kDeep, kBig };
// The instance a launch uses: n <= SMALL_N_MAX the 64-column one; n >= WIDE_MIN_N on long block-rows the
// wide one; otherwise the deep one when its grid (block_rows x N_TILE-column tiles) fits in deep_slots (its
// resident CTAs an SM x SMs), else the big one.
TileKind ChooseTile(int64_t n, int64_t block_rows, bool wide, int64_t deep_slots) {
  if (n <= SMALL_N_MAX) return TileKind::kSmall;
  if (n >= WIDE_MIN_N && wide) return TileKind::kWide;
  const int64_t ctas = block_rows * ((n + BigTile::kNt - 1) / BigTile::kNt);
  return DEEP_STAGES > STAGES && ctas <= deep_slots ? TileKind::kDeep : TileKind::kBig;
}
// The 1-D longest-first grid when `ctas` are at most LPT_MAX_WAVES waves of `slots` resident CTAs: with few
// waves the last one's tail is a large part of the time, and starting the longest block-rows first shortens
// it; with many, the hardware's hand-out balances the tail by itself and the 2-D order's B sharing in L2
// wins.
bool UseLpt(int64_t ctas, int64_t slots) { return LPT_MAX_WAVES > 0 && slots > 0 && ctas <= int64_t(LPT_MAX_WAVES) * slots; }

// ---- host: state, launch -------------------------------------------------------------------------
struct State {
  int dtype = 0;
  int64_t m = 0, k = 0, block_rows = 0;
  int32_t *col_idx = nullptr, *runs = nullptr;
  void* vals = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;  // the driver's, looked up in prepare
  CUtensorMap b_map{};                                  // B's tensor map for (map_b, map_n), built on first use;
                                                        // run() rebuilds it (the harness calls run from one thread)
  const void* map_b = nullptr;
  int64_t map_n = 0;
  bool wide = false;  // block-rows average WIDE_MIN_BLOCKS nonzero blocks or more
  int64_t slots[4] = {};  // by TileKind: CTAs of that instance resident at once on the device (occupancy x SMs)
};

// B (K x n, row-major, 2-byte values) as 64 x 64 boxes landing 128-byte swizzled, zeros outside.
CUresult EncodeBMap(State* s, const void* b, int64_t n) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(s->k)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(n) * 2};
  const cuuint32_t box[2] = {64, 64}, unit[2] = {1, 1};
  const CUresult r = s->encode(&s->b_map, s->dtype == SD_DTYPE_FP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
                               const_cast<void*>(b), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  s->map_b = r == CUDA_SUCCESS ? b : nullptr, s->map_n = n;
  return r;
}

template <typename T, class TL> cudaError_t Configure(int optin) {
  if (TL::kSmemBytes > optin) return cudaErrorInvalidConfiguration;
  cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&BsrWgmmaKernel<T, TL>), cudaFuncAttributeMaxDynamicSharedMemorySize, TL::kSmemBytes);
  if (e == cudaSuccess) e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&BsrWgmmaTmaKernel<T, TL>), cudaFuncAttributeMaxDynamicSharedMemorySize, TL::kSmemBytes);
  return e;
}
// Both kernels of every tile instance.
template <typename T> cudaError_t ConfigureAll(int optin) {
  cudaError_t e = Configure<T, BigTile>(optin);
  if (e == cudaSuccess) e = Configure<T, WideTile>(optin);
  if (e == cudaSuccess) e = Configure<T, DeepTile>(optin);
  return e == cudaSuccess ? Configure<T, SmallTile>(optin) : e;
}
// How many CTAs of an instance the device holds at once (after ConfigureAll).
template <typename T, class TL> cudaError_t SlotsOf(int device, int64_t* slots) {
  int per_sm = 0, sms = 0;
  cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, &BsrWgmmaTmaKernel<T, TL>, TL::kThreads, TL::kSmemBytes);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  *slots = int64_t(per_sm) * sms;
  return e;
}
template <typename T> cudaError_t AllSlots(int device, int64_t (&slots)[4]) {
  cudaError_t e = SlotsOf<T, SmallTile>(device, &slots[int(TileKind::kSmall)]);
  if (e == cudaSuccess) e = SlotsOf<T, WideTile>(device, &slots[int(TileKind::kWide)]);
  if (e == cudaSuccess) e = SlotsOf<T, DeepTile>(device, &slots[int(TileKind::kDeep)]);
  return e == cudaSuccess ? SlotsOf<T, BigTile>(device, &slots[int(TileKind::kBig)]) : e;
}
template <typename T, class TL> void LaunchTile(const State* s, BsrArgs a, int64_t slots, bool tma, cudaStream_t stream) {
  const int64_t tiles = (a.n + TL::kNt - 1) / TL::kNt, ctas = s->block_rows * tiles;
  const bool lpt = UseLpt(ctas, slots);
  a.lpt_tiles = lpt ? static_cast<int>(tiles) : 0;
  const dim3 grid = lpt ? dim3(static_cast<unsigned>(ctas)) : dim3(static_cast<unsigned>(s->block_rows), static_cast<unsigned>(tiles));
  if (tma) BsrWgmmaTmaKernel<T, TL><<<grid, TL::kThreads, TL::kSmemBytes, stream>>>(a, s->b_map);
  else BsrWgmmaKernel<T, TL><<<grid, TL::kThreads, TL::kSmemBytes, stream>>>(a);
}
template <typename T> void Launch(const State* s, const BsrArgs& a, bool tma, cudaStream_t stream) {
  const TileKind kind = ChooseTile(a.n, s->block_rows, s->wide, s->slots[int(TileKind::kDeep)]);
  const int64_t slots = s->slots[int(kind)];
  switch (kind) {
    case TileKind::kSmall: return LaunchTile<T, SmallTile>(s, a, slots, tma, stream);
    case TileKind::kWide: return LaunchTile<T, WideTile>(s, a, slots, tma, stream);
    case TileKind::kDeep: return LaunchTile<T, DeepTile>(s, a, slots, tma, stream);
    case TileKind::kBig: return LaunchTile<T, BigTile>(s, a, slots, tma, stream);
  }
}
template <typename T> cudaError_t Upload(const std::vector<T>& h, void** d) {
  cudaError_t e = cudaMalloc(d, sizeof(T) * std::max<size_t>(h.size(), 1));
  if (e == cudaSuccess && !h.empty()) e = cudaMemcpy(*d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice);
  return e;
}
template <typename T> cudaError_t UploadValues(const std::vector<float>& v, void** d) {
  std::vector<T> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = T(v[i]);  // exact: the harness's values are representable
  return Upload(h, d);
}
}  // namespace

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  cudaFree(s->col_idx);
  cudaFree(s->runs);
  cudaFree(s->vals);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  BsrHost h;
  std::string why;
  int major = 0, optin = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (e != cudaSuccess) {
    why = std::string("device query: ") + cudaGetErrorString(e);
  } else if (major != 9) {
    why = "needs a Hopper GPU (sm_90a wgmma); device " + std::to_string(p->device) + " is compute capability " + std::to_string(major) + ".x";
  } else if ((p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) || !SPARSEDITTO_BUILDS_DTYPE(p->dtype)) {
    why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  } else if (p->pattern.block_rows != kBlock || p->pattern.block_cols != kBlock) {
    why = "needs 64 x 64 blocks, the task declares " + std::to_string(p->pattern.block_rows) + " x " + std::to_string(p->pattern.block_cols);
  } else {
    BuildBsr(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, &h, &why);
  }
  if (!why.empty()) {
    snprintf(error, cap, "bsr_wgmma: %s", why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, p->rows, p->cols, h.block_rows};
  s->wide = LongBlockRows(static_cast<int64_t>(h.col_idx.size()), h.block_rows);
  e = Upload(h.col_idx, reinterpret_cast<void**>(&s->col_idx));
  if (e == cudaSuccess) e = Upload(h.runs, reinterpret_cast<void**>(&s->runs));
  const std::vector<float> image = SwizzleBlocks(h.values);
  if (e == cudaSuccess) e = p->dtype == SD_DTYPE_FP16 ? UploadValues<__half>(image, &s->vals) : UploadValues<__nv_bfloat16>(image, &s->vals);
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (e == cudaSuccess) {
    e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&s->encode), 12000, cudaEnableDefault, &found);
    if (e == cudaSuccess && found != cudaDriverEntryPointSuccess) e = cudaErrorSymbolNotFound;
  }
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && p->dtype == SD_DTYPE_FP16) e = ConfigureAll<__half>(optin);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && p->dtype == SD_DTYPE_BF16) e = ConfigureAll<__nv_bfloat16>(optin);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && p->dtype == SD_DTYPE_FP16) e = AllSlots<__half>(p->device, s->slots);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && p->dtype == SD_DTYPE_BF16) e = AllSlots<__nv_bfloat16>(p->device, s->slots);
  if (e != cudaSuccess) {
    snprintf(error, cap, "bsr_wgmma prepare: %s", cudaGetErrorString(e));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  State* s = static_cast<State*>(state);
  if (n < 1) return 1;
  BsrArgs a{s->col_idx, s->vals, reinterpret_cast<const int4*>(s->runs), b, c, s->m, s->k, n,
            (n % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0};
  // The copy engine needs B's rows 16-byte aligned (the tensor map's stride rule); the staged C store, C's.
  bool tma = a.vec && reinterpret_cast<uintptr_t>(c) % 16 == 0;
  if (tma && (b != s->map_b || n != s->map_n) && EncodeBMap(s, b, n) != CUDA_SUCCESS) tma = false;  // cp.async path then
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (s->dtype == SD_DTYPE_FP16) Launch<__half>(s, a, tma, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (s->dtype == SD_DTYPE_BF16) Launch<__nv_bfloat16>(s, a, tma, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
