// Block-sparse (BSR, 64x64 blocks) SpMM on Hopper's warpgroup tensor cores: wgmma.mma_async m64n64k16,
// fp16/bf16 operands from shared memory, fp32 accumulators in registers. Needs sm_90a.
//
// Strategy: bsr_mma's block-row walk with the compute role moved to wgmma. One CTA owns one 64-row
// block-row x N_TILE columns of C; WGS warpgroups split the columns (N_TILE / WGS each, in n64 pieces).
// For each nonzero block it stages the 64x64 A block and the 64 x N_TILE slab of B (the rows of the
// block's column) into shared memory through a STAGES-deep cp.async pipeline, in the 128-byte-swizzled
// canonical layouts wgmma reads through matrix descriptors: A K-major (a row of 64 values is one
// 128-byte line), B MN-major (a K row of 64 columns is one 128-byte line; transposed-B wgmma). One
// wgmma group a block stays in flight while the next block's operands are waited for; C is stored once.
// For n <= SMALL_N_MAX a 64-column instance with one warpgroup is used. The grid is persistent (as many
// CTAs as the device holds, read off it): a CTA walks its tiles, heaviest block-rows first, and its load
// pipeline runs on across tile boundaries.
// prepare builds: block-row pointers, block-column indices, dense zero-padded blocks in the dtype (M, K
// padded to multiples of 64) and the heaviest-first order. Edges: B rows >= K and columns >= n are
// zero-filled (cp.async src-size 0); when n % 8 != 0 or B is not 16-byte aligned the B slab goes through
// a guarded scalar path; C stores are guarded at M and n.
// sparseditto:seed families=[block] dtypes=[fp16, bf16] archs=[sm_90a] block_sizes=[64]
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>
#define N_TILE 256       // sparseditto:tunable values=[128, 256]
#define WGS 2            // sparseditto:tunable values=[1, 2]
#define STAGES 4         // sparseditto:tunable values=[3, 4, 5]
#define SMALL_N_MAX 64   // sparseditto:tunable values=[0, 64, 128]
static_assert(STAGES >= 3, "one block computing, one in flight on the tensor cores, one loading");
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
  static constexpr int kSmemBytes = STAGES_ * kStageBytes + 1024;  // + alignment slack for the 1 KB atoms
  static_assert(NT_ % 64 == 0 && kWgCols % 64 == 0 && kPieces >= 1, "warpgroup columns in n64 pieces");
};
using BigTile = Tile<N_TILE, WGS, STAGES>;
using SmallTile = Tile<64, 1, STAGES>;

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
__device__ __forceinline__ void WgmmaFence() { __trap(); }
__device__ __forceinline__ void WgmmaCommit() {}
template <int N> __device__ __forceinline__ void WgmmaWait() {}
template <typename T> __device__ __forceinline__ void WgmmaN64(float (&)[32], uint64_t, uint64_t) {}
#endif
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
struct BsrArgs {
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const void* vals;      // nnzb blocks of 64 x 64, row-major inside a block
  const int32_t* order;  // block-rows, heaviest first
  const void* b;
  void* c;
  int64_t m, k, n;
  int vec;         // n % 8 == 0 and B 16-byte aligned: cp.async B chunks
  int tiles;       // block-rows x column tiles; tile t is column tile t % n_tiles of block-row order[t / n_tiles]
  int n_tiles;
};
// One output tile's work: nonzero blocks first .. first+count-1 of block-row `brow`, columns n0 ...
struct TileWork {
  int first = 0, count = 0, brow = 0;
  int64_t n0 = 0;
};
template <class TL> __host__ __device__ __forceinline__ TileWork WorkOf(const int32_t* row_ptr, const int32_t* order, int tile, int n_tiles) {
  TileWork w;
  w.brow = order[tile / n_tiles];
  w.n0 = static_cast<int64_t>(tile % n_tiles) * TL::kNt;
  w.first = row_ptr[w.brow];
  w.count = row_ptr[w.brow + 1] - w.first;
  return w;
}
// The loads' walk over a persistent CTA's steps: every nonzero block of tiles start, start + stride, ...
// in order, skipping tiles with no blocks — the order the compute loop consumes them in.
template <class TL>
struct LoadCursor {
  int tile, j, stride, tiles, n_tiles;
  TileWork w;
  __host__ __device__ __forceinline__ LoadCursor(const int32_t* row_ptr, const int32_t* order, int start, int stride_, int tiles_, int n_tiles_)
      : tile(start), j(-1), stride(stride_), tiles(tiles_), n_tiles(n_tiles_) {
    if (tile < tiles) w = WorkOf<TL>(row_ptr, order, tile, n_tiles);
    Advance(row_ptr, order);
  }
  __host__ __device__ __forceinline__ bool Valid() const { return tile < tiles; }
  __host__ __device__ __forceinline__ void Advance(const int32_t* row_ptr, const int32_t* order) {
    ++j;
    while (tile < tiles && j >= w.count) {
      tile += stride, j = 0;
      if (tile < tiles) w = WorkOf<TL>(row_ptr, order, tile, n_tiles);
    }
  }
};
// ---- roles --------------------------------------------------------------------------------------
template <class TL> __device__ __forceinline__ void LoadABlock(uint32_t dst, const uint16_t* src) {
  for (int i = threadIdx.x; i < kBlock * 8; i += TL::kThreads) CpAsync16(dst + AOffset(i >> 3, (i & 7) * 8), src + i * 8, 16);
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

// Persistent: CTA c computes tiles c, c + gridDim.x, ...; the load pipeline runs across tile boundaries
// (the next tile's first blocks are in flight while a tile is stored). Step g (a CTA's g-th block over
// all its tiles) lives in stage g % kStages and is loaded at step g - (kStages - 2): the stage was last
// read by step g - kStages, whose wgmma group was retired (wait_group 1 at step g - kStages + 1) before
// the barrier of the step that loads it.
template <typename T, class TL>
__global__ void __launch_bounds__(TL::kThreads) BsrWgmmaKernel(BsrArgs p) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (SmemAddr(smem_raw) & 1023)) & 1023);  // 1 KB-aligned atoms
  const uint32_t base = SmemAddr(smem);
  const int wg = threadIdx.x >> 7;
  const uint16_t* vals = static_cast<const uint16_t*>(p.vals);
  auto stage = [&](int g) { return base + (g % TL::kStages) * TL::kStageBytes; };
  LoadCursor<TL> next(p.row_ptr, p.order, blockIdx.x, gridDim.x, p.tiles, p.n_tiles);
  auto load = [&](int g) {  // the cursor's block into stage g % kStages, then advance it
    if (next.Valid()) {
      const uint32_t s = stage(g);
      const int blk = next.w.first + next.j;
      LoadABlock<TL>(s, vals + static_cast<int64_t>(blk) * kBlock * kBlock);
      LoadBSlab<TL>(s + kABytes, smem + (s - base) + kABytes, p, static_cast<int64_t>(p.col_idx[blk]) * kBlock, next.w.n0);
      next.Advance(p.row_ptr, p.order);
    }
    CpAsyncCommit();  // one group a step, empty or not: the wait count below stays exact
  };
#pragma unroll
  for (int g = 0; g < TL::kStages - 2; ++g) load(g);
  int g = 0;
  for (int tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    const TileWork w = WorkOf<TL>(p.row_ptr, p.order, tile, p.n_tiles);
    float acc[TL::kPieces][32];
#pragma unroll
    for (int q = 0; q < TL::kPieces; ++q)
#pragma unroll
      for (int i = 0; i < 32; ++i) acc[q][i] = 0.0f;
    for (int j = 0; j < w.count; ++j, ++g) {
      CpAsyncWait<TL::kStages - 3>();  // step g landed (this thread's part)
      FenceToAsyncProxy();
      __syncthreads();                 // ... everyone's part; step g - 2's wgmma retired in every warpgroup
      load(g + TL::kStages - 2);
      WgmmaFence();
      ComputeBlock<T, TL>(stage(g), stage(g) + kABytes, wg, acc);
      WgmmaCommit();
      WgmmaWait<1>();  // step g - 1 retired; step g stays in flight across the next wait
    }
    WgmmaWait<0>();
    StoreTile<T, TL>(p, static_cast<int64_t>(w.brow) * kBlock, w.n0, wg, acc);
  }
}

// ---- host: BSR builder (unit tested) -------------------------------------------------------------
struct BsrHost {
  int64_t block_rows = 0, block_cols = 0;
  std::vector<int32_t> row_ptr;  // block_rows + 1
  std::vector<int32_t> col_idx;  // nnzb, increasing within a block-row
  std::vector<float> values;     // nnzb * 64 * 64, zero-padded
  std::vector<int32_t> order;    // block-rows by decreasing block count (stable)
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
  return true;
}

// ---- host: state, launch -------------------------------------------------------------------------
struct State {
  int dtype = 0;
  int64_t m = 0, k = 0, block_rows = 0;
  int32_t *row_ptr = nullptr, *col_idx = nullptr, *order = nullptr;
  void* vals = nullptr;
  int big_ctas = 0, small_ctas = 0;  // persistent grid: resident CTAs on the whole device, per tile instance
};

// Raises the kernel's shared-memory limit and counts how many of its CTAs the device holds at once.
template <typename T, class TL> cudaError_t Configure(int optin, int sms, int* ctas) {
  if (TL::kSmemBytes > optin) return cudaErrorInvalidConfiguration;
  const void* kernel = reinterpret_cast<const void*>(&BsrWgmmaKernel<T, TL>);
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, TL::kSmemBytes);
  int per_sm = 0;
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, TL::kThreads, TL::kSmemBytes);
  if (e == cudaSuccess && per_sm < 1) e = cudaErrorInvalidConfiguration;
  *ctas = per_sm * sms;
  return e;
}
template <typename T> cudaError_t ConfigureBoth(int optin, int sms, State* s) {
  const cudaError_t e = Configure<T, BigTile>(optin, sms, &s->big_ctas);
  return e == cudaSuccess ? Configure<T, SmallTile>(optin, sms, &s->small_ctas) : e;
}
template <typename T, class TL> void LaunchTile(BsrArgs a, int64_t block_rows, int ctas, cudaStream_t stream) {
  a.n_tiles = static_cast<int>((a.n + TL::kNt - 1) / TL::kNt);
  a.tiles = static_cast<int>(block_rows) * a.n_tiles;
  const unsigned grid = static_cast<unsigned>(std::max(1, std::min(a.tiles, ctas)));
  BsrWgmmaKernel<T, TL><<<grid, TL::kThreads, TL::kSmemBytes, stream>>>(a);
}
template <typename T> void Launch(const State* s, const BsrArgs& a, cudaStream_t stream) {
  if (a.n <= SMALL_N_MAX) LaunchTile<T, SmallTile>(a, s->block_rows, s->small_ctas, stream);
  else LaunchTile<T, BigTile>(a, s->block_rows, s->big_ctas, stream);
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
  cudaFree(s->row_ptr);
  cudaFree(s->col_idx);
  cudaFree(s->order);
  cudaFree(s->vals);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  BsrHost h;
  std::string why;
  int major = 0, optin = 0, sms = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, p->device);
  if (e != cudaSuccess) {
    why = std::string("device query: ") + cudaGetErrorString(e);
  } else if (major != 9) {
    why = "needs a Hopper GPU (sm_90a wgmma); device " + std::to_string(p->device) + " is compute capability " + std::to_string(major) + ".x";
  } else if (p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) {
    why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only)";
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
  e = Upload(h.row_ptr, reinterpret_cast<void**>(&s->row_ptr));
  if (e == cudaSuccess) e = Upload(h.col_idx, reinterpret_cast<void**>(&s->col_idx));
  if (e == cudaSuccess) e = Upload(h.order, reinterpret_cast<void**>(&s->order));
  if (e == cudaSuccess) e = p->dtype == SD_DTYPE_FP16 ? UploadValues<__half>(h.values, &s->vals) : UploadValues<__nv_bfloat16>(h.values, &s->vals);
  if (e == cudaSuccess) e = p->dtype == SD_DTYPE_FP16 ? ConfigureBoth<__half>(optin, sms, s) : ConfigureBoth<__nv_bfloat16>(optin, sms, s);
  if (e != cudaSuccess) {
    snprintf(error, cap, "bsr_wgmma prepare: %s", cudaGetErrorString(e));
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  if (n < 1) return 1;
  const BsrArgs a{s->row_ptr, s->col_idx, s->vals, s->order, b, c, s->m, s->k, n,
                  (n % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0, 0, 0};
  if (s->block_rows * ((n + SmallTile::kNt - 1) / SmallTile::kNt) > INT32_MAX) return 1;  // tile index is an int
  if (s->dtype == SD_DTYPE_FP16) Launch<__half>(s, a, stream);
  else Launch<__nv_bfloat16>(s, a, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
