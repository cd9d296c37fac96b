// Dense SpMM for small n on Hopper: A densified in prepare and streamed from DRAM straight into mma registers.
// Strategy: at n <= 16 the product is a stream of A. Where no sparse format streams fewer bytes fast enough
// (unstructured 50-70%), the stream is A's dense bytes (2 an element in fp16), and cuBLAS's skinny GEMMs pay a
// larger fixed cost than nm24_stream_sp's stream does, so the same stream over dense bytes beats them at
// small n (docs/results/, the u50 n = 16 rows; the first figures: docs/lab/seed_choices.md).
// This seed is nm24_stream_sp with the dense m16n8k16 mma in place of mma.sp: every warp owns one 16-row tile
// and one K range and keeps two batches of UNROLL K tiles of A loads in flight (four 16-byte loads a lane per
// 64 columns, warp-coalesced, no shared-memory staging); the CTA's WARPS row tiles share one B slab (its K
// range x 16 columns, cp.async, XOR-swizzled, read with ldmatrix.trans); K is split over the CTAs of a
// thread-block cluster (at most 8): each rank pushes its fp32 partial of row tile w into a slot of the tile's
// owner (rank w % S) over distributed shared memory and arrives on the cluster barrier; only owners wait, sum
// the slots in rank order (deterministic) and store, and non-owners leave at once (nm24_stream_sp's reduce);
// prepare lowers the split count until the clusters fit one wave. The grid is S K-splits x row
// groups x n tiles of 16: a larger n re-streams A once per 16 columns, so this seed serves small n only.
// prepare builds: per 16 x 16 tile of A the m16n8k16 A fragment lane by lane (a lane's a0..a3 = 16 contiguous
// bytes), tiles of a row tile in K order; M padded to 128, K to 64 (zeros). Edges: B rows >= K, columns >= n
// zero-filled in shared memory; n % 8 != 0 or unaligned B: guarded scalar path; C stores guarded at M and n.
// Needs thread-block clusters (sm_90); K is limited by the slab (8 splits x SLAB_KB/2 K tiles of 64: 24576 at
// 96 KB), beyond which prepare refuses. Layouts: KN, and PyTorch's NK (X [n x K] in, Y [n x M] out, no copy: the
// slab then 16 rows of X read with ldmatrix, Y stored value by value), as nm24_stream_sp.
// sparseditto:seed families=[unstructured, file, block, n_m, row_sparse, column_sparse, banded, block_diagonal, dense] dtypes=[fp16, bf16] archs=[sm_90]
// sparseditto:family stream  (WARPS, UNROLL, CTAS_PER_SM, SLAB_KB mean the same in each: crossover may mix them)
#include "sparseditto_kernel.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>
#define WARPS 8         // sparseditto:tunable values=[4, 8]
#define UNROLL 2        // sparseditto:tunable values=[1, 2]
#define CTAS_PER_SM 2   // sparseditto:tunable values=[1, 2]
#define SLAB_KB 96      // sparseditto:tunable values=[48, 96]

namespace {
constexpr int kMPad = 128;      // rows padded to this
constexpr int kBk = 64;         // K tile: four m16n8k16 steps
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
constexpr int kSlabRowBytes = kNt * 2;          // one B row of the slab
constexpr int kMaxSlabTiles = SLAB_KB * 1024 / (kBk * kSlabRowBytes);
static_assert(kMPad % (16 * WARPS) == 0, "a CTA's row tiles divide the padded rows");
static_assert(UNROLL >= 1 && kMaxSlabTiles >= 1, "tiling");
// ---- layouts shared by prepare and the kernel (host + device) ----------------------------------
// A fragments: tile (mt, ks) = rows 16mt.., columns 16ks..; 256 values, lane-major. Lane 4g+t holds a0 = (row g,
// columns 2t, 2t+1), a1 = (row g+8, same), a2 = (row g, columns 2t+8, 2t+9), a3 = (row g+8, same).
__host__ __device__ __forceinline__ int64_t FragTile(int64_t mt, int64_t ks, int64_t ksteps) { return (mt * ksteps + ks) * 256; }
__host__ __device__ __forceinline__ int ValInTile(int r16, int c16) {
  const int g = r16 & 7, lane = 4 * g + ((c16 & 7) >> 1), reg = (r16 >> 3) + 2 * (c16 >> 3);
  return lane * 8 + reg * 2 + (c16 & 1);
}
// Swizzled 16-byte chunk c (0, 1) of slab row r: eight consecutive rows at one chunk land in eight
// different 16-byte bank groups (conflict-free ldmatrix).
__host__ __device__ __forceinline__ int SlabChunk(int r, int c) {
  const int lin = r * 2 + c;
  return lin ^ ((lin >> 3) & 7);
}
// Slab offset (elements) lane `lane` hands ldmatrix.x4.trans for K tile j, k16 step q: row 64j + 16q + lane % 16,
// chunk lane / 16, so matrices 0, 1 = k rows 0-7, 8-15 of n8 tile 0 (b0, b1 of the mma) and 2, 3 those of tile 1.
__host__ __device__ __forceinline__ int BFragOffset(int j, int q, int lane) {
  return SlabChunk(j * kBk + q * 16 + (lane & 15), lane >> 4) * 8;
}
// NK's slab: K tile j = 16 rows of X (n0 ..) x 64 K values, one 128-byte line a row; 16-byte chunk c of row r
// at chunk c ^ (r % 8) of the line, so the eight rows ldmatrix reads at one chunk are eight bank groups.
__host__ __device__ __forceinline__ int NkSlabOffset(int j, int r, int c) { return j * (kNt * kBk) + r * kBk + ((c ^ (r & 7)) * 8); }
// Slab offset lane `lane` hands ldmatrix.x4 for K tile j, k16 step q: X row 8 (lane / 16) + lane % 8, chunk
// 2q + (lane / 8) % 2, so matrices 0, 1 = k 0-7, 8-15 for n8 tile 0 (b0, b1 of the mma) and 2, 3 those of tile 1.
__host__ __device__ __forceinline__ int NkBFragOffset(int j, int q, int lane) {
  return NkSlabOffset(j, (lane >> 4) * 8 + (lane & 7), 2 * q + ((lane >> 3) & 1));
}
// Both layouts' swizzles depend on a row's place within its K tile only, so K tile j's ldmatrix address is tile
// 0's plus j slab tiles (the host tests check every j, q and lane): ComputeBatch adds the tile's bytes to an
// offset the loop computes once, where recomputing the swizzle for each ldmatrix costs integer instructions
// in every K tile (dev/ptx_census/sass.py counts them), which the loop issues beside its mma.
constexpr int kSlabTileBytes = kBk * kSlabRowBytes;
template <bool kNk> __host__ __device__ __forceinline__ uint32_t TileFragBytes(int q, int lane) {
  return 2u * (kNk ? NkBFragOffset(0, q, lane) : BFragOffset(0, q, lane));
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
// D += A(16x16) * B(16x8); b0 holds k = 2t + {0,1}, b1 k = 8 + 2t + {0,1}, n = g.
#define SD_MMA_ASM(TY, d, a, b0, b1)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 "                                  \
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                     \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                           \
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1))
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint4& a, uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same<T, __half>::value) SD_MMA_ASM("f16", d, a, b0, b1);
  else SD_MMA_ASM("bf16", d, a, b0, b1);
}
template <typename T> __device__ __forceinline__ T FromF(float x);
template <> __device__ __forceinline__ __half FromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ uint32_t Bits(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ uint32_t Bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
struct StreamArgs {
  const void* vals; const void* b; void* c;
  int64_t m, k, n, ksteps;
  int ktiles, kt_per_split, pair_store /* KN, n even, C 4-byte aligned */, vec /* B's rows (KN: n, NK: K) % 8 == 0, B 16-byte aligned */;
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

// A operands of K tiles j0 .. j0+UNROLL-1 of a warp's row tile (those < count): four 16-byte loads a lane per
// tile, all issued before any is used.
struct Batch {
  uint4 a[UNROLL][4];
};
template <typename T>
__device__ __forceinline__ void LoadBatch(const T* vals, int j0, int count, Batch& x) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
#pragma unroll
    for (int q = 0; q < 4; ++q) x.a[u][q] = LdStream16(vals + (static_cast<int64_t>(j0 + u) * 4 + q) * 256);
  }
}
template <typename T, bool kNk>
__device__ __forceinline__ void ComputeBatch(const Batch& x, const T* sb, int j0, int count, float (&acc)[2][4]) {
  const int lane = threadIdx.x & 31;
  const uint32_t batch = SmemAddr(sb) + j0 * kSlabTileBytes;  // K tile j0 of the slab
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (j0 + u >= count) break;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      uint32_t b[4];
      if constexpr (kNk) LdmX4(b, batch + u * kSlabTileBytes + TileFragBytes<true>(q, lane));
      else LdmX4T(b, batch + u * kSlabTileBytes + TileFragBytes<false>(q, lane));
      Mma<T>(acc[0], x.a[u][q], b[0], b[1]);
      Mma<T>(acc[1], x.a[u][q], b[2], b[3]);
    }
  }
}

// Accumulator i of n8 tile ni: C row 16mt + lane/4 + 8(i/2), column n0 + 8ni + 2(lane%4) + i%2, at OutIndex.
template <typename T, bool kNk>
__device__ __forceinline__ void StoreTile(const StreamArgs& p, int64_t mt, int64_t n0, const float (&acc)[2][4]) {
  const int lane = threadIdx.x & 31;
  T* c = static_cast<T*>(p.c);
#pragma unroll
  for (int ni = 0; ni < 2; ++ni)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = mt * 16 + (lane >> 2) + 8 * h, col = n0 + ni * 8 + 2 * (lane & 3);
      if (row >= p.m || col >= p.n) continue;
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
__global__ void __launch_bounds__(kThreads, CTAS_PER_SM) DenseStreamKernel(StreamArgs p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  float* red = reinterpret_cast<float*>(smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, split = blockIdx.x, splits = gridDim.x;
  T* sb = reinterpret_cast<T*>(smem + RedBytes(splits));  // MakePlan's
  const int64_t mt = static_cast<int64_t>(blockIdx.y) * WARPS + warp, n0 = static_cast<int64_t>(blockIdx.z) * kNt;
  const int kt0 = split * p.kt_per_split, count = min(p.ktiles - kt0, p.kt_per_split);
  // A rank stores into another's shared memory only once that rank has started: this arrive, the wait below.
  if (splits > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  LoadBSlab<T, kNk>(sb, p, kt0, count, n0);
  const T* vals = static_cast<const T*>(p.vals) + FragTile(mt, 4 * static_cast<int64_t>(kt0), p.ksteps) + lane * 8;
  float acc[2][4] = {};
  Batch x, y;  // software pipeline: the next batch's loads are in flight while this one computes
  LoadBatch<T>(vals, 0, count, x);
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  __syncthreads();  // the B slab landed (the first batch's loads were issued before the wait)
  for (int j0 = 0; j0 < count; j0 += 2 * UNROLL) {
    LoadBatch<T>(vals, j0 + UNROLL, count, y);
    ComputeBatch<T, kNk>(x, sb, j0, count, acc);
    LoadBatch<T>(vals, j0 + 2 * UNROLL, count, x);
    ComputeBatch<T, kNk>(y, sb, j0 + UNROLL, count, acc);
  }
  if (splits == 1) return StoreTile<T, kNk>(p, mt, n0, acc);
  // Push, not pull (nm24_stream_sp): the cluster barrier's release/acquire orders the DSMEM stores, which
  // racecheck follows; non-owners leave at once instead of waiting until every partial is read.
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

// ---- host: the fragment layout (unit tested) -----------------------------------------------------
struct DenseHost {
  int64_t rows = 0, cols = 0, mp = 0, kp = 0;  // mp % 128 == 0, kp % 64 == 0
  std::vector<float> vals;                     // (mp/16) * (kp/16) tiles of 256, see FragTile/ValInTile
};
// Densifies canonical CSR into the fragment layout. False on malformed input.
bool BuildDense(int64_t rows, int64_t cols, const int32_t* ro, const int32_t* ci, const float* v, DenseHost* out, std::string* why) {
  if (rows <= 0 || cols <= 0) return (*why = "bad shape", false);
  out->rows = rows, out->cols = cols;
  out->mp = (rows + kMPad - 1) / kMPad * kMPad, out->kp = (cols + kBk - 1) / kBk * kBk;
  const int64_t ksteps = out->kp / 16;
  out->vals.assign(out->mp / 16 * ksteps * 256, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    if (ro[r] > ro[r + 1]) return (*why = "row offsets decrease at row " + std::to_string(r), false);
    for (int64_t e = ro[r]; e < ro[r + 1]; ++e) {
      if (ci[e] < 0 || ci[e] >= cols) return (*why = "column index out of range in row " + std::to_string(r), false);
      out->vals[FragTile(r / 16, ci[e] / 16, ksteps) + ValInTile(static_cast<int>(r % 16), static_cast<int>(ci[e] % 16))] += v[e];
    }
  }
  return true;
}
// How a run is cut: K splits (the cluster size) so that about CTAS_PER_SM CTAs per SM run, at most
// max_splits (<= 8) and at least as many as keep a split's B slab within SLAB_KB; splits == 0 when K needs
// more than 8 slabs. prepare lowers max_splits until the clusters fit the device in one wave.
struct Plan { int splits = 0, kt_per_split = 0; size_t smem = 0; int64_t clusters = 0; };
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
  plan.smem = RedBytes(plan.splits) + static_cast<size_t>(per) * kBk * kSlabRowBytes;
  return plan;
}
struct State {
  int dtype = 0, sms = 1;
  bool nk = false;  // sd_problem.layout == SD_LAYOUT_NK
  int64_t m = 0, k = 0, mp = 0, kp = 0;
  void* vals = nullptr;
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
  Plan plan = MakePlan(s->mp, s->kp, n, s->sms);
  for (int cap = plan.splits - 1; cap >= 1; --cap) {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = LaunchConfig(s, plan, n, nullptr, &cluster);
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, DenseStreamKernel<T, kNk>, &config) != cudaSuccess || active >= plan.clusters) break;
    const Plan fewer = MakePlan(s->mp, s->kp, n, s->sms, cap);
    if (fewer.splits >= plan.splits) break;  // the slab needs these splits
    plan = fewer;
  }
  return plan;
}
template <typename T, bool kNk> void Launch(const State* s, const Plan& plan, const void* b, void* c, int64_t n, cudaStream_t stream) {
  StreamArgs a{s->vals, b, c, s->m, s->k, n, s->kp / 16, static_cast<int>(s->kp / kBk), plan.kt_per_split,
               (!kNk && n % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0) ? 1 : 0,
               ((kNk ? s->k : n) % 8 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0) ? 1 : 0};
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config = LaunchConfig(s, plan, n, stream, &cluster);
  cudaLaunchKernelEx(&config, DenseStreamKernel<T, kNk>, a);
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
// Room for the largest slab a plan can ask for, then the plan of every n prepare was given.
template <typename T, bool kNk> cudaError_t ConfigureAndPlan(State* s, const sd_problem* p) {
  cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(&DenseStreamKernel<T, kNk>),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, kRedBytes + kMaxSlabTiles * kBk * kSlabRowBytes);
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
  cudaFree(s->vals);
  delete s;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  DenseHost h;
  std::string why = "dtype " + std::to_string(p->dtype) + " unsupported (fp16, bf16 only) or not in this build";
  int major = 0, sms = 1;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, p->device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, p->device);
  if (e == cudaSuccess && major < 9) why = "needs thread-block clusters (sm_90 or newer), device is sm_" + std::to_string(major) + "x";
  const bool layout_ok = (p->layout == SD_LAYOUT_KN || p->layout == SD_LAYOUT_NK) && SPARSEDITTO_BUILDS_LAYOUT(p->layout);
  if (!layout_ok) why = "layout " + std::to_string(p->layout) + " unsupported (KN, NK only) or not in this build";
  bool ok = e == cudaSuccess && major >= 9 && layout_ok && (p->dtype == SD_DTYPE_FP16 || p->dtype == SD_DTYPE_BF16) && SPARSEDITTO_BUILDS_DTYPE(p->dtype) &&
            BuildDense(p->rows, p->cols, p->row_offsets, p->col_indices, p->values, &h, &why);
  for (int i = 0; ok && i < p->num_n_values; ++i) {
    if (MakePlan(h.mp, h.kp, p->n_values[i], sms).splits > 0) continue;
    why = "K = " + std::to_string(p->cols) + " needs more than 8 B slabs of " + std::to_string(SLAB_KB) + " KB", ok = false;
  }
  if (!ok) {
    snprintf(error, cap, "dense_stream: %s", e != cudaSuccess ? cudaGetErrorString(e) : why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, sms, p->layout == SD_LAYOUT_NK, p->rows, p->cols, h.mp, h.kp};
  const bool fp16 = p->dtype == SD_DTYPE_FP16;
  e = fp16 ? UploadValues<__half>(h.vals, &s->vals) : UploadValues<__nv_bfloat16>(h.vals, &s->vals);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (e == cudaSuccess && fp16) e = ConfigureLayout<__half>(s, p);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (e == cudaSuccess && !fp16) e = ConfigureLayout<__nv_bfloat16>(s, p);
  if (e != cudaSuccess) {
    snprintf(error, cap, "dense_stream prepare: %s", cudaGetErrorString(e));
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
