// Seed: banded A (local-attention masks, banded operators). prepare stores the band densely per row: row i
// holds the W columns [s_i, s_i + W), W the widest row span, s_i its first nonzero column (lowered where needed
// so s_i + W <= K; the generator's c_i - w, clipped), zeros where the row has none; and for each CTA of
// BAND_ROWS rows the union [lo, hi) of its rows' windows. run: each CTA walks its window in chunks of CHUNK
// columns; a chunk stages the CTA's rows of the band (re-aligned to the chunk, zero outside each row's band)
// and the matching CHUNK rows of B in shared memory (double-buffered, next chunk fetched into registers while
// the current one is used), and a tiled FFMA product (fp32 accumulators) runs on them. Rows of a CTA share
// most of their window, so B is read about once per CTA. All dtypes; values are converted to fp32 when staged.
// sparseditto:seed families=[banded] dtypes=[fp32, fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define BAND_ROWS 32  // sparseditto:tunable values=[32, 64]
#define BAND_N 64     // sparseditto:tunable values=[32, 64]
#define CHUNK 32      // sparseditto:tunable values=[16, 32]

namespace {

constexpr int kThreads = 256;                   // 16 x 16 threads, each TM x TN outputs
constexpr int kTM = BAND_ROWS / 16, kTN = BAND_N / 16;
constexpr int kPerThreadA = BAND_ROWS * CHUNK / kThreads, kPerThreadB = CHUNK * BAND_N / kThreads;
static_assert(BAND_ROWS % 16 == 0 && BAND_N % 16 == 0, "16 x 16 threads");
static_assert((BAND_ROWS * CHUNK) % kThreads == 0 && (CHUNK * BAND_N) % kThreads == 0, "whole chunks per thread");

// ---- host: the band ---------------------------------------------------------------------------------
struct Band {
  int64_t width = 0;              // W >= 1
  std::vector<int32_t> start;     // s_i per row; s_i + W <= K
  std::vector<float> values;      // rows x W
  std::vector<int32_t> lo, hi;    // per CTA of BAND_ROWS rows: the union of its rows' windows
};

Band ExtractBand(int64_t rows, int64_t cols, const int32_t* offsets, const int32_t* col_indices, const float* values) {
  Band b;
  b.width = 1;
  for (int64_t r = 0; r < rows; ++r) {
    if (offsets[r + 1] > offsets[r]) {
      b.width = std::max<int64_t>(b.width, col_indices[offsets[r + 1] - 1] - col_indices[offsets[r]] + 1);
    }
  }
  b.start.resize(rows);
  b.values.assign(rows * b.width, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    // An empty row takes the previous row's window: the CTA's union stays tight.
    const int64_t first = offsets[r + 1] > offsets[r] ? col_indices[offsets[r]] : (r > 0 ? b.start[r - 1] : 0);
    b.start[r] = static_cast<int32_t>(std::min<int64_t>(first, cols - b.width));
    for (int32_t e = offsets[r]; e < offsets[r + 1]; ++e) {
      b.values[r * b.width + col_indices[e] - b.start[r]] = values[e];
    }
  }
  for (int64_t r0 = 0; r0 < rows; r0 += BAND_ROWS) {
    const int64_t r1 = std::min<int64_t>(r0 + BAND_ROWS, rows);
    b.lo.push_back(*std::min_element(&b.start[r0], &b.start[0] + r1));
    b.hi.push_back(static_cast<int32_t>(*std::max_element(&b.start[r0], &b.start[0] + r1) + b.width));
  }
  return b;
}

// ---- device ---------------------------------------------------------------------------------------
template <typename T>
struct Params {
  const T* band;  // rows x width
  const int32_t *start, *lo, *hi;
  const T* b;
  T* c;
  int rows, cols, n, width;
};

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

// Role: fetch chunk [c0, c0 + CHUNK) of the CTA's band rows and of B into registers (zeros outside).
template <typename T>
__device__ void FetchChunk(const Params<T>& p, int r0, int n0, int c0, float (&ra)[kPerThreadA],
                           float (&rb)[kPerThreadB]) {
#pragma unroll
  for (int i = 0; i < kPerThreadA; ++i) {
    const int e = threadIdx.x + i * kThreads, row = r0 + e / CHUNK;
    const int w = row < p.rows ? c0 + e % CHUNK - p.start[row] : -1;
    ra[i] = (w >= 0 && w < p.width) ? ToFloat(p.band[static_cast<size_t>(row) * p.width + w]) : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kPerThreadB; ++i) {
    const int e = threadIdx.x + i * kThreads, k = c0 + e / BAND_N, col = n0 + e % BAND_N;
    rb[i] = (k < p.cols && col < p.n) ? ToFloat(p.b[static_cast<size_t>(k) * p.n + col]) : 0.0f;
  }
}

// Role: registers to shared memory: as[row][CHUNK + 1], bs[CHUNK][BAND_N].
__device__ void StoreChunk(float* as, float* bs, const float (&ra)[kPerThreadA], const float (&rb)[kPerThreadB]) {
#pragma unroll
  for (int i = 0; i < kPerThreadA; ++i) {
    const int e = threadIdx.x + i * kThreads;
    as[(e / CHUNK) * (CHUNK + 1) + e % CHUNK] = ra[i];
  }
#pragma unroll
  for (int i = 0; i < kPerThreadB; ++i) bs[threadIdx.x + i * kThreads] = rb[i];
}

// Role: acc[i][j] += sum_k as[ty + 16 i][k] * bs[k][tx + 16 j].
__device__ void ComputeChunk(const float* as, const float* bs, float (&acc)[kTM][kTN]) {
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
#pragma unroll 8
  for (int k = 0; k < CHUNK; ++k) {
    float a[kTM], b[kTN];
#pragma unroll
    for (int i = 0; i < kTM; ++i) a[i] = as[(ty + 16 * i) * (CHUNK + 1) + k];
#pragma unroll
    for (int j = 0; j < kTN; ++j) b[j] = bs[k * BAND_N + tx + 16 * j];
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) BandedSpmm(Params<T> p) {
  __shared__ float as[2][BAND_ROWS * (CHUNK + 1)];
  __shared__ float bs[2][CHUNK * BAND_N];
  const int r0 = blockIdx.x * BAND_ROWS, n0 = blockIdx.y * BAND_N;
  const int lo = p.lo[blockIdx.x], chunks = (p.hi[blockIdx.x] - lo + CHUNK - 1) / CHUNK;
  float acc[kTM][kTN] = {};
  float ra[kPerThreadA], rb[kPerThreadB];
  if (chunks > 0) {
    FetchChunk(p, r0, n0, lo, ra, rb);
    StoreChunk(as[0], bs[0], ra, rb);
  }
  __syncthreads();
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) FetchChunk(p, r0, n0, lo + (c + 1) * CHUNK, ra, rb);
    ComputeChunk(as[c % 2], bs[c % 2], acc);
    if (c + 1 < chunks) StoreChunk(as[(c + 1) % 2], bs[(c + 1) % 2], ra, rb);  // read at c - 1: done
    __syncthreads();
  }
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int row = r0 + ty + 16 * i, col = n0 + tx + 16 * j;
      if (row < p.rows && col < p.n) p.c[static_cast<size_t>(row) * p.n + col] = T(acc[i][j]);
    }
  }
}

// ---- host: ABI ------------------------------------------------------------------------------------
struct State {
  int32_t dtype = 0;
  int rows = 0, cols = 0, width = 0;
  void* band = nullptr;
  int32_t *start = nullptr, *lo = nullptr, *hi = nullptr;
};

template <typename D, typename T>
cudaError_t Upload(D** dst, const T* src, size_t count) {
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(dst), std::max<size_t>(count * sizeof(T), 16));
  return err == cudaSuccess && count > 0 ? cudaMemcpy(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice) : err;
}

template <typename T>
cudaError_t UploadBand(const Band& band, void** dst) {
  std::vector<T> host(band.values.size());
  for (size_t i = 0; i < host.size(); ++i) host[i] = T(band.values[i]);
  return Upload(dst, host.data(), host.size());
}

template <typename T>
int Launch(const State* s, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const Params<T> p{static_cast<const T*>(s->band), s->start, s->lo, s->hi, static_cast<const T*>(b),
                    static_cast<T*>(c), s->rows, s->cols, static_cast<int>(n), s->width};
  const dim3 grid((s->rows + BAND_ROWS - 1) / BAND_ROWS, static_cast<unsigned>((n + BAND_N - 1) / BAND_N));
  if (grid.y > 65535) return 1;
  BandedSpmm<T><<<grid, kThreads, 0, stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if ((p->dtype != SD_DTYPE_FP32 && p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) ||
      !SPARSEDITTO_BUILDS_DTYPE(p->dtype) || p->rows < 1 ||
      p->cols < 1 || p->rows > (1 << 30) || p->cols > (1 << 30)) {
    snprintf(error, cap, "banded: unsupported dtype %d or size %lld x %lld", p->dtype,
             static_cast<long long>(p->rows), static_cast<long long>(p->cols));
    return 1;
  }
  const Band band = ExtractBand(p->rows, p->cols, p->row_offsets, p->col_indices, p->values);
  if (static_cast<double>(p->rows) * band.width > 4e9) {
    snprintf(error, cap, "banded: band of width %lld too large to store densely", static_cast<long long>(band.width));
    return 1;
  }
  State* s = new State{p->dtype, static_cast<int>(p->rows), static_cast<int>(p->cols), static_cast<int>(band.width)};
  // Only the task's dtype is instantiated (SPARSEDITTO_BUILDS_DTYPE); prepare refused the others above.
  cudaError_t err = cudaErrorInvalidValue;
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) if (p->dtype == SD_DTYPE_FP32) err = UploadBand<float>(band, &s->band);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (p->dtype == SD_DTYPE_FP16) err = UploadBand<__half>(band, &s->band);
  if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (p->dtype == SD_DTYPE_BF16) err = UploadBand<__nv_bfloat16>(band, &s->band);
  if (err == cudaSuccess) err = Upload(&s->start, band.start.data(), band.start.size());
  if (err == cudaSuccess) err = Upload(&s->lo, band.lo.data(), band.lo.size());
  if (err == cudaSuccess) err = Upload(&s->hi, band.hi.data(), band.hi.size());
  if (err != cudaSuccess) {
    snprintf(error, cap, "banded prepare: %s", cudaGetErrorString(err));
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
  for (void* ptr : {s->band, static_cast<void*>(s->start), static_cast<void*>(s->lo), static_cast<void*>(s->hi)}) {
    cudaFree(ptr);
  }
  delete s;
}
