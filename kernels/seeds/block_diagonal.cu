// Seed: block-diagonal A as a batched dense product of its diagonal blocks. The generator's blocks: block b
// covers rows [b*M/nb, (b+1)*M/nb) and columns [b*K/nb, (b+1)*K/nb) (nb = num_blocks); prepare checks every
// nonzero lies in its row's block, stores each block densely (rows padded to whole CTA tiles, columns to whole
// stages; zeros) and one descriptor per CTA row tile: where its rows of A' start, the block's row and column
// ranges. run: CTA (tile, n tile) computes C[tile rows, :] = A_b[tile rows, :] * B[block columns, :], the same
// pipeline as row_compact_dense: WARPS_M x WARPS_K warps, cp.async stages, ldmatrix + mma.sync m16n8k16 (fp32
// accumulators) for fp16/bf16, FFMA for fp32, K split inside the CTA and, at small n, across CTAs (fixed-order sum).
// sparseditto:seed families=[block_diagonal] dtypes=[fp32, fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#define N_TILE 64   // sparseditto:tunable values=[32, 64, 128]
#define WARPS_M 1   // sparseditto:tunable values=[1, 2]
#define M_TILES 2   // sparseditto:tunable values=[1, 2]
#define WARPS_K 4   // sparseditto:tunable values=[1, 2, 4]
#define STAGES 3    // sparseditto:tunable values=[2, 3]
#define MAX_SPLIT 8  // sparseditto:tunable values=[1, 4, 8]

namespace {

constexpr int kTileK = 32;                      // columns of A' per warp and stage
constexpr int kThreads = WARPS_M * WARPS_K * 32;
constexpr int kRows = WARPS_M * 16 * M_TILES;  // rows of A' per CTA
constexpr int kGroupK = WARPS_K * kTileK;     // columns of A' per stage
static_assert(kTileK % 16 == 0 && N_TILE % 16 == 0 && STAGES >= 2 && MAX_SPLIT >= 1, "m16n8k16 steps; pipeline");

inline int64_t RoundUp(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// ---- host: the blocks ---------------------------------------------------------------------------------
struct Tile {  // kRows rows of one block: rows of C [row0, row0 + rows), B rows [k0, k0 + kcols)
  int64_t a_offset;  // element of A' where the tile's rows start (row stride lda)
  int32_t lda, row0, rows, k0, kcols, groups;
};
struct Blocks {
  std::vector<float> dense;  // block by block: rows padded to kRows, columns to kGroupK (= lda), row-major
  std::vector<Tile> tiles;
  int min_groups = 0;        // fewest stages of any tile
};

// False (with *error) when a nonzero lies outside its row's block (the matrix is not what num_blocks says).
bool BuildBlocks(int64_t rows, int64_t cols, int64_t blocks, const int32_t* offsets, const int32_t* col_indices,
                 const float* values, Blocks* out, std::string* error) {
  *out = Blocks{{}, {}, 1 << 30};
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t r0 = b * rows / blocks, r1 = (b + 1) * rows / blocks, c0 = b * cols / blocks;
    const int64_t c1 = (b + 1) * cols / blocks, lda = RoundUp(std::max<int64_t>(c1 - c0, 1), kGroupK);
    const int64_t base = out->dense.size();
    out->dense.resize(base + RoundUp(r1 - r0, kRows) * lda, 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      for (int32_t e = offsets[r]; e < offsets[r + 1]; ++e) {
        if (col_indices[e] < c0 || col_indices[e] >= c1) {
          *error = "row " + std::to_string(r) + " has a nonzero outside its block " + std::to_string(b);
          return false;
        }
        out->dense[base + (r - r0) * lda + col_indices[e] - c0] = values[e];
      }
    }
    for (int64_t t = r0; t < r1; t += kRows) {
      out->tiles.push_back(Tile{base + (t - r0) * lda, static_cast<int32_t>(lda), static_cast<int32_t>(t),
                                static_cast<int32_t>(std::min<int64_t>(kRows, r1 - t)), static_cast<int32_t>(c0),
                                static_cast<int32_t>(c1 - c0), static_cast<int32_t>(lda / kGroupK)});
      out->min_groups = std::min(out->min_groups, out->tiles.back().groups);
    }
  }
  return true;
}

// ---- device ---------------------------------------------------------------------------------------
template <typename T>
struct Params {
  const Tile* tiles;
  const T *a, *b;
  T* c;
  float* partial;     // split > 1: [split][grid.y][tiles][kRows * ncols]
  int32_t* tickets;   // split > 1: [grid.y][tiles], all zero between runs
  int n, ncols, row_tiles, split;
  bool vector_b;      // n a multiple of 16 bytes' worth and B 16-byte aligned
};

template <typename T> constexpr int kPad = 16 / sizeof(T);  // row padding of the staged tiles
template <typename T> __host__ __device__ inline int AStage() { return kRows * (kGroupK + kPad<T>); }
template <typename T> __host__ __device__ inline int BStage(int ncols) { return kGroupK * (ncols + kPad<T>); }

__device__ __forceinline__ uint32_t SharedAddress(const void* p) { return __cvta_generic_to_shared(p); }
__device__ __forceinline__ void CpAsync16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(SharedAddress(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;" ::"n"(kPending)); }
__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], const void* p, bool trans) {
  if (trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SharedAddress(p)));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SharedAddress(p)));
  }
}
#define MMA_OPERANDS                                                                                  \
  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                  \
  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1)
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};" MMA_OPERANDS);
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};" MMA_OPERANDS);
  }
}

// Role: copy stage g (kRows x kGroupK of the tile's block, kGroupK rows x ncols of B) into buffer `buf`.
template <typename T>
__device__ void LoadStage(const Params<T>& p, const Tile& tile, T* sa, T* sb, int g, int buf, int n0) {
  constexpr int kVec = 16 / sizeof(T), kPerRow = kGroupK / kVec;
  const T* a = p.a + tile.a_offset + static_cast<size_t>(g) * kGroupK;
  for (int i = threadIdx.x; i < kRows * kPerRow; i += kThreads) {
    const int r = i / kPerRow, c = (i % kPerRow) * kVec;
    CpAsync16(sa + buf * AStage<T>() + r * (kGroupK + kPad<T>) + c, a + static_cast<size_t>(r) * tile.lda + c, true);
  }
  const int ldb = p.ncols + kPad<T>, k0 = g * kGroupK;
  T* dst = sb + buf * BStage<T>(p.ncols);
  const int per_row = p.vector_b ? p.ncols / kVec : p.ncols;
  for (int i = threadIdx.x; i < kGroupK * per_row; i += kThreads) {
    const int r = i / per_row, c = (i % per_row) * (p.vector_b ? kVec : 1), col = n0 + c;
    const int k = k0 + r < tile.kcols ? tile.k0 + k0 + r : -1;
    const bool ok = k >= 0 && col < p.n;
    const T* src = ok ? p.b + static_cast<size_t>(k) * p.n + col : p.b;
    if (p.vector_b) {
      CpAsync16(dst + r * ldb + c, src, ok);
    } else {
      dst[r * ldb + c] = ok ? *src : T(0.0f);
    }
  }
}

// Role: this warp's share of stage `buf` (rows wm, k-tile wk): tensor cores for 16-bit, FFMA for fp32.
template <typename T>
__device__ void ComputeStage(const Params<T>& p, const T* sa, const T* sb, int buf, int wm, int wk, int lane,
                             float (&acc)[M_TILES][N_TILE / 8][4]) {
  const int lda = kGroupK + kPad<T>, ldb = p.ncols + kPad<T>;
  const T* as = sa + buf * AStage<T>() + wm * 16 * M_TILES * lda + wk * kTileK;
  const T* bs = sb + buf * BStage<T>(p.ncols) + wk * kTileK * ldb;
  if constexpr (std::is_same_v<T, float>) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll 4
    for (int k = 0; k < kTileK; ++k) {
      float a0[M_TILES], a1[M_TILES];
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt) {
        a0[mt] = as[(mt * 16 + g) * lda + k], a1[mt] = as[(mt * 16 + g + 8) * lda + k];
      }
#pragma unroll
      for (int j = 0; j < N_TILE / 8; ++j) {
        if (j * 8 >= p.ncols) break;
        const float2 b = *reinterpret_cast<const float2*>(bs + k * ldb + j * 8 + 2 * t);
#pragma unroll
        for (int mt = 0; mt < M_TILES; ++mt) {
          acc[mt][j][0] += a0[mt] * b.x, acc[mt][j][1] += a0[mt] * b.y;
          acc[mt][j][2] += a1[mt] * b.x, acc[mt][j][3] += a1[mt] * b.y;
        }
      }
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += 16) {
      uint32_t a[M_TILES][4];
#pragma unroll
      for (int mt = 0; mt < M_TILES; ++mt) {
        LdMatrixX4(a[mt], as + (mt * 16 + (lane & 15)) * lda + kk + (lane >> 4) * 8, false);
      }
#pragma unroll
      for (int jp = 0; jp < N_TILE / 16; ++jp) {
        if (jp * 16 >= p.ncols) break;
        uint32_t b[4];
        LdMatrixX4(b, bs + (kk + (lane & 15)) * ldb + jp * 16 + (lane >> 4) * 8, true);
#pragma unroll
        for (int mt = 0; mt < M_TILES; ++mt) {
          Mma<T>(acc[mt][2 * jp], a[mt], b[0], b[1]);
          Mma<T>(acc[mt][2 * jp + 1], a[mt], b[2], b[3]);
        }
      }
    }
  }
}

// Every accumulator element (mt, j, r), fully unrolled.
#define FOR_EACH_ACC                                                         \
  _Pragma("unroll") for (int mt = 0; mt < M_TILES; ++mt)                     \
      _Pragma("unroll") for (int j = 0; j < N_TILE / 8; ++j) _Pragma("unroll") for (int r = 0; r < 4; ++r)

// Accumulator element (mt, j, r) of `lane` sits at row mt*16 + lane/4 + 8*(r/2), column j*8 + 2*(lane%4) + r%2.
// Slot layout in shared memory and in the split workspace: ((mt * (ncols/8) + j) * 4 + r) * 32 + lane.
__device__ int Slot(int mt, int j, int r, int lane, int nj) { return ((mt * nj + j) * 4 + r) * 32 + lane; }

// Role: sum the WARPS_K partial tiles (fixed order) into the wk == 0 warps; with K split across CTAs, publish
// the CTA's tile; the last CTA of the tile sums all slices (fixed order). False: nothing left to store here.
template <typename T>
__device__ bool Reduce(const Params<T>& p, float* red, int wm, int wk, int lane, float (&acc)[M_TILES][N_TILE / 8][4]) {
  const int slot = M_TILES * p.ncols / 8 * 128, nj = p.ncols / 8;
  if (wk > 0) FOR_EACH_ACC if (j < nj) red[(wk * WARPS_M + wm) * slot + Slot(mt, j, r, lane, nj)] = acc[mt][j][r];
  __syncthreads();
  for (int w = 1; w < WARPS_K && wk == 0; ++w) {
    const float* src = red + (w * WARPS_M + wm) * slot;
    FOR_EACH_ACC if (j < nj) acc[mt][j][r] += src[Slot(mt, j, r, lane, nj)];
  }
  if (p.split == 1) return wk == 0;
  const size_t tile = size_t{blockIdx.y} * p.row_tiles + blockIdx.x, tiles = size_t{gridDim.y} * p.row_tiles;
  const size_t floats = size_t{kRows} * p.ncols;  // per tile and slice
  float* mine = p.partial + (blockIdx.z * tiles + tile) * floats + wm * slot;
  if (wk == 0) FOR_EACH_ACC if (j < nj) mine[Slot(mt, j, r, lane, nj)] = acc[mt][j][r];
  __threadfence();
  __syncthreads();
  __shared__ int last;
  if (threadIdx.x == 0) {
    last = atomicAdd(&p.tickets[tile], 1) == p.split - 1;
    if (last) p.tickets[tile] = 0;  // ready for the next run
  }
  __syncthreads();
  if (!last || wk != 0) return false;
  __threadfence();
  FOR_EACH_ACC acc[mt][j][r] = 0.0f;
  for (int z = 0; z < p.split; ++z) {
    const float* src = p.partial + (z * tiles + tile) * floats + wm * slot;
    FOR_EACH_ACC if (j < nj) acc[mt][j][r] += __ldcg(src + Slot(mt, j, r, lane, nj));
  }
  return true;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) BlockDiagonalGemm(Params<T> p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int n0 = blockIdx.y * p.ncols;
  const Tile tile = p.tiles[blockIdx.x];
  const int lane = threadIdx.x % 32, wm = (threadIdx.x / 32) % WARPS_M, wk = threadIdx.x / 32 / WARPS_M;
  T* sa = reinterpret_cast<T*>(smem);
  T* sb = sa + STAGES * AStage<T>();
  const int64_t groups = tile.groups;  // this CTA's slice of K: stages [g0, g1)
  const int g0 = static_cast<int>(groups * blockIdx.z / p.split);
  const int g1 = static_cast<int>(groups * (blockIdx.z + 1) / p.split);
  float acc[M_TILES][N_TILE / 8][4] = {};
  for (int s = 0; s < STAGES - 1; ++s) {
    if (g0 + s < g1) LoadStage(p, tile, sa, sb, g0 + s, s, n0);
    asm volatile("cp.async.commit_group;");
  }
  for (int g = g0; g < g1; ++g) {
    CpAsyncWait<STAGES - 2>();
    __syncthreads();  // stage g visible to all; stage g-1 consumed by all
    const int next = g + STAGES - 1;
    if (next < g1) LoadStage(p, tile, sa, sb, next, (next - g0) % STAGES, n0);
    asm volatile("cp.async.commit_group;");
    ComputeStage(p, sa, sb, (g - g0) % STAGES, wm, wk, lane, acc);
  }
  CpAsyncWait<0>();
  __syncthreads();  // shared memory is reused for the reduction
  if (!Reduce(p, reinterpret_cast<float*>(smem), wm, wk, lane, acc)) return;
  // Role: store the wk == 0 warps' tiles to the tile's rows of C.
  FOR_EACH_ACC {
    const int i = (wm * M_TILES + mt) * 16 + lane / 4 + 8 * (r / 2), col = n0 + j * 8 + 2 * (lane % 4) + r % 2;
    if (j * 8 < p.ncols && i < tile.rows && col < p.n) {
      p.c[static_cast<size_t>(tile.row0 + i) * p.n + col] = T(acc[mt][j][r]);
    }
  }
}

// ---- host: ABI ------------------------------------------------------------------------------------
struct State {
  int32_t dtype = 0;
  int row_tiles = 0, min_groups = 1, sms = 1, max_smem = 0;
  void* a = nullptr;
  Tile* tiles = nullptr;
  int32_t* tickets = nullptr;  // with partial: the split-K workspace
  float* partial = nullptr;
  size_t partial_floats = 0, num_tickets = 0;
};

struct Plan { int ncols = 16, ny = 1, split = 1; size_t partial_floats = 0, tickets = 0; };

template <typename T>
size_t SmemBytes(int ncols) {
  const size_t pipeline = size_t{STAGES} * (AStage<T>() + BStage<T>(ncols)) * sizeof(T);
  return std::max(pipeline, size_t{WARPS_K} * WARPS_M * M_TILES * ncols * 16 * sizeof(float));
}
size_t SmemBytes(int32_t dtype, int n) { return dtype == SD_DTYPE_FP32 ? SmemBytes<float>(n) : SmemBytes<__half>(n); }

// The widest n tile that fits; K split across CTAs when there would be fewer than two CTAs per SM.
Plan MakePlan(const State* s, int64_t n, size_t partial_capacity, size_t ticket_capacity) {
  Plan plan;
  plan.ncols = static_cast<int>(std::min<int64_t>(N_TILE, RoundUp(n, 16)));
  while (plan.ncols > 16 && SmemBytes(s->dtype, plan.ncols) + 16 > static_cast<size_t>(s->max_smem)) plan.ncols -= 16;
  plan.ny = static_cast<int>((n + plan.ncols - 1) / plan.ncols);
  const int64_t ctas = int64_t{s->row_tiles} * plan.ny;
  if (ctas > 0 && ctas < 2 * s->sms) {
    plan.split = static_cast<int>(std::min<int64_t>({MAX_SPLIT, s->min_groups, (2 * s->sms + ctas - 1) / ctas}));
  }
  plan.tickets = static_cast<size_t>(ctas);
  plan.partial_floats = size_t(plan.split) * ctas * kRows * plan.ncols;
  if (plan.split > 1 && (plan.partial_floats > partial_capacity || plan.tickets > ticket_capacity)) plan.split = 1;
  return plan;
}

template <typename D, typename T>
cudaError_t Upload(D** dst, const T* src, size_t count) {
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(dst), std::max<size_t>(count * sizeof(T), 16));
  return err == cudaSuccess && count > 0 ? cudaMemcpy(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice) : err;
}

// The blocks in the dtype, and the kernel allowed all the shared memory there is (less 16 bytes of static).
template <typename T>
cudaError_t PrepareTyped(const Blocks& blocks, State* s) {
  std::vector<T> host(blocks.dense.size());
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<T>(blocks.dense[i]);
  const cudaError_t err = Upload(&s->a, host.data(), host.size());
  if (err != cudaSuccess) return err;
  return cudaFuncSetAttribute(BlockDiagonalGemm<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, s->max_smem - 16);
}

template <typename T>
int Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const Plan plan = MakePlan(s, n, s->partial_floats, s->num_tickets);
  const size_t smem = SmemBytes<T>(plan.ncols);
  if (smem + 16 > static_cast<size_t>(s->max_smem) || plan.ny > 65535) return 1;
  Params<T> p{s->tiles, static_cast<const T*>(s->a), static_cast<const T*>(b), static_cast<T*>(c), s->partial,
              s->tickets, static_cast<int>(n), plan.ncols, s->row_tiles, plan.split,
              n % (16 / sizeof(T)) == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0};
  BlockDiagonalGemm<T><<<dim3(s->row_tiles, plan.ny, plan.split), kThreads, smem, stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  const int64_t blocks = p->pattern.num_blocks;
  if ((p->dtype != SD_DTYPE_FP32 && p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) ||
      !SPARSEDITTO_BUILDS_DTYPE(p->dtype) || p->rows < 1 ||
      p->cols < 1 || p->rows > (1 << 30) || p->cols > (1 << 30) || blocks < 1 || blocks > std::min(p->rows, p->cols)) {
    snprintf(error, cap, "block_diagonal: unsupported dtype %d, size %lld x %lld or num_blocks %lld", p->dtype,
             static_cast<long long>(p->rows), static_cast<long long>(p->cols), static_cast<long long>(blocks));
    return 1;
  }
  Blocks host;
  std::string why;
  if (!BuildBlocks(p->rows, p->cols, blocks, p->row_offsets, p->col_indices, p->values, &host, &why)) {
    snprintf(error, cap, "block_diagonal: %s", why.c_str());
    return 1;
  }
  State* s = new State{p->dtype, static_cast<int>(host.tiles.size()), host.min_groups};
  cudaError_t err = cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, p->device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&s->max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device);
  if (err == cudaSuccess) {
    // Only the task's dtype is instantiated (SPARSEDITTO_BUILDS_DTYPE); prepare refused the others above.
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) if (p->dtype == SD_DTYPE_FP32) err = PrepareTyped<float>(host, s);
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (p->dtype == SD_DTYPE_FP16) err = PrepareTyped<__half>(host, s);
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (p->dtype == SD_DTYPE_BF16) err = PrepareTyped<__nv_bfloat16>(host, s);
  }
  if (err == cudaSuccess) err = Upload(&s->tiles, host.tiles.data(), host.tiles.size());
  for (int32_t i = 0; i < p->num_n_values; ++i) {  // workspace for the largest split any listed n asks for
    const Plan plan = MakePlan(s, p->n_values[i], SIZE_MAX, SIZE_MAX);
    s->partial_floats = std::max(s->partial_floats, plan.split > 1 ? plan.partial_floats : 0);
    s->num_tickets = std::max(s->num_tickets, plan.split > 1 ? plan.tickets : 0);
  }
  if (err == cudaSuccess) err = cudaMalloc(&s->partial, std::max<size_t>(s->partial_floats * 4, 16));
  if (err == cudaSuccess) err = cudaMalloc(&s->tickets, std::max<size_t>(s->num_tickets * 4, 16));
  if (err == cudaSuccess) err = cudaMemset(s->tickets, 0, std::max<size_t>(s->num_tickets * 4, 16));
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess || SmemBytes(s->dtype, 16) + 16 > static_cast<size_t>(s->max_smem)) {
    snprintf(error, cap, "block_diagonal prepare: %s (shared memory: %zu bytes needed, %d available)",
             cudaGetErrorString(err), SmemBytes(s->dtype, 16), s->max_smem);
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  if (n < 1 || n > (int64_t{1} << 30)) return 1;
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) if (s->dtype == SD_DTYPE_FP32) return Launch<float>(s, b, c, n, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (s->dtype == SD_DTYPE_FP16) return Launch<__half>(s, b, c, n, stream);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (s->dtype == SD_DTYPE_BF16) return Launch<__nv_bfloat16>(s, b, c, n, stream);
  return 1;
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  for (void* ptr : {s->a, static_cast<void*>(s->tiles), static_cast<void*>(s->partial), static_cast<void*>(s->tickets)})
    cudaFree(ptr);
  delete s;
}
