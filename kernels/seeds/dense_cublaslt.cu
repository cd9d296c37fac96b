// Seed: the dense fallback with cuBLASLt's kernel chosen by timing, per n. dense_cublas (and the cublas_dense
// baseline) take cuBLAS's heuristic pick; for skinny products (n = 16, 128 against M, K in the thousands) the
// heuristic's first answer is not always the fastest of the ones it lists. prepare densifies A, asks cuBLASLt
// for up to ALGOS algorithms for each of the problem's n values, times each on scratch B and C (TIMED_REPS
// launches after two warm-ups, each after an L2 flush as the harness's timing does, median of the events) and
// keeps the fastest; run is one cublasLtMatmul with it.
// Numerics as dense_cublas: CUBLAS_COMPUTE_32F (fp32 stays fp32, no TF32) and split-K reductions only in the
// compute type (the reduction-scheme mask leaves out the in-place and output-type schemes, which add in fp16).
// Row-major C = A * B is the column-major C^T (n x M) = B^T (n x K, ld n) * A^T (K x M, ld K). Layout NK
// (PyTorch's Linear: X = B^T [n x K] in, Y = C^T [n x M] out, row-major) is the column-major C (M x n, ld M)
// = op(A^T stored, ld K) transposed * X stored (K x n, ld K): the dense A becomes the matmul's first operand.
// Alignment: the timed choice assumes B and C 16-byte aligned (our dense A is cudaMalloc's, 256); run takes,
// for pointers that are not, the heuristic's first algorithm for element-aligned buffers.
// prepare's timing runs on a private stream it creates and destroys; run enqueues only on the given stream and
// never allocates (the workspace is prepare's).
// sparseditto:seed families=[unstructured, file, block, n_m, row_sparse, column_sparse, banded, block_diagonal, dense] dtypes=[fp32, fp16, bf16] archs=[sm_80, sm_90]
#include "sparseditto_kernel.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define ALGOS 8          // sparseditto:tunable values=[1, 4, 8, 16]
#define TIMED_REPS 5     // sparseditto:tunable values=[3, 5, 9]
#define WORKSPACE_MIB 32 // sparseditto:tunable values=[4, 32, 64]
static_assert(ALGOS >= 1 && ALGOS <= 32, "algorithms asked of the heuristic");
static_assert(TIMED_REPS >= 1, "timed launches per algorithm");

namespace {

// ---- host-only pieces (tested on the CPU: dense_cublaslt_test.cu) --------------------------------------
size_t ElementBytes(int32_t dtype) { return dtype == SD_DTYPE_FP32 ? 4 : 2; }

// The dense row-major image of the CSR matrix, element bits in the dtype (little-endian bytes).
std::vector<unsigned char> Densify(const sd_problem* p) {
  const size_t bytes = ElementBytes(p->dtype);
  std::vector<unsigned char> out(static_cast<size_t>(p->rows) * p->cols * bytes, 0);
  for (int64_t r = 0; r < p->rows; ++r) {
    for (int32_t e = p->row_offsets[r]; e < p->row_offsets[r + 1]; ++e) {
      unsigned char* at = &out[(static_cast<size_t>(r) * p->cols + p->col_indices[e]) * bytes];
      const float v = p->values[e];
      if (p->dtype == SD_DTYPE_FP32) {
        std::memcpy(at, &v, 4);
      } else {
        const uint16_t h = p->dtype == SD_DTYPE_FP16 ? __half_as_ushort(__float2half_rn(v))
                                                     : __bfloat16_as_ushort(__float2bfloat16_rn(v));
        std::memcpy(at, &h, 2);
      }
    }
  }
  return out;
}

// A column-major operand of cuBLASLt: rows x cols, leading dimension ld.
struct LtShape {
  uint64_t rows, cols;
  int64_t ld;
};
// The three operands of C^T = B^T * A^T for an M x K matrix A and n columns of B and C (KN), or of
// C = (A^T)^T * B (NK), each the column-major view of a buffer as it lies.
struct LtOperands {
  LtShape b_t;  // the harness's B: KN "A" of the matmul, B^T n x K, ld n; NK "B", X^T = B K x n, ld K
  LtShape a_t;  // our row-major M x K dense A as A^T, K x M, ld K: KN "B" of the matmul; NK "A", transposed
  LtShape c_t;  // the harness's C: KN C^T, n x M, ld n; NK Y^T = C, M x n, ld M
};
LtOperands Operands(int64_t m, int64_t k, int64_t n, bool nk = false) {
  const uint64_t um = static_cast<uint64_t>(m), uk = static_cast<uint64_t>(k), un = static_cast<uint64_t>(n);
  if (nk) return {{uk, un, k}, {uk, um, k}, {um, un, m}};
  return {{un, uk, n}, {uk, um, k}, {un, um, n}};
}

// The index of the algorithm with the smallest median time; an empty list marks one that failed to launch.
// Ties go to the lower index (the heuristic's order). -1 when every algorithm failed.
int FastestAlgo(const std::vector<std::vector<float>>& ms_per_algo) {
  int best = -1;
  float best_ms = 0;
  for (size_t i = 0; i < ms_per_algo.size(); ++i) {
    std::vector<float> t = ms_per_algo[i];
    if (t.empty()) continue;
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    const float median = t[t.size() / 2];
    if (best < 0 || median < best_ms) best = static_cast<int>(i), best_ms = median;
  }
  return best;
}

bool Aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

cudaDataType_t DataType(int32_t dtype) {
  return dtype == SD_DTYPE_FP32 ? CUDA_R_32F : dtype == SD_DTYPE_FP16 ? CUDA_R_16F : CUDA_R_16BF;
}

// ---- device side -----------------------------------------------------------------------------------------
// Small values (|v| < 1, exact in every dtype's range) so the timing's inputs are not all zeros.
template <typename T>
__global__ void FillPattern(T* out, size_t count, uint32_t salt) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const uint32_t h = (static_cast<uint32_t>(i) ^ salt) * 2654435761u;
    out[i] = static_cast<T>(static_cast<float>(h >> 20) / 4096.0f - 0.5f);
  }
}

struct PerN {
  int64_t n = 0;
  cublasLtMatrixLayout_t b_t = nullptr, c_t = nullptr;
  cublasLtMatmulAlgo_t timed{};     // the fastest, for 16-byte aligned B and C
  cublasLtMatmulAlgo_t fallback{};  // the heuristic's first for element-aligned B and C
};

struct State {
  int32_t dtype = 0;
  int64_t rows = 0, cols = 0;
  bool nk = false;            // sd_problem.layout == SD_LAYOUT_NK: the dense A is the matmul's first operand
  void* dense = nullptr;      // M x K row-major in the dtype
  void* workspace = nullptr;  // WORKSPACE_MIB MiB
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a_t = nullptr;
  std::vector<PerN> per_n;
};

constexpr size_t kWorkspaceBytes = size_t{WORKSPACE_MIB} << 20;

cublasLtMatrixLayout_t Layout(cudaDataType_t t, const LtShape& s) {
  cublasLtMatrixLayout_t layout = nullptr;
  return cublasLtMatrixLayoutCreate(&layout, t, s.rows, s.cols, s.ld) == CUBLAS_STATUS_SUCCESS ? layout : nullptr;
}

// Up to `want` algorithms for `per` with B and C aligned to `align` bytes; 0 found on any failure.
int Heuristics(const State* s, const PerN& per, uint32_t align, int want, cublasLtMatmulHeuristicResult_t* out) {
  cublasLtMatmulPreference_t pref = nullptr;
  if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return 0;
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  const uint32_t dense_align = 256;
  int found = 0;
  bool ok = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)) ==
            CUBLAS_STATUS_SUCCESS;
  ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                                  sizeof(schemes)) == CUBLAS_STATUS_SUCCESS;
  // The harness's B is the matmul's "A" in KN and its "B" in NK; the dense A the other one.
  const auto harness_b = s->nk ? CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES : CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES;
  const auto ours = s->nk ? CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES : CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES;
  for (auto attr : {harness_b, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align)) == CUBLAS_STATUS_SUCCESS;
  }
  ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, ours, &dense_align, sizeof(dense_align)) == CUBLAS_STATUS_SUCCESS;
  const cublasLtMatrixLayout_t first = s->nk ? s->a_t : per.b_t, second = s->nk ? per.b_t : s->a_t;
  if (ok && cublasLtMatmulAlgoGetHeuristic(s->lt, s->op, first, second, per.c_t, per.c_t, pref, want, out, &found) !=
                CUBLAS_STATUS_SUCCESS) {
    found = 0;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (!ok) return 0;
  int usable = 0;  // the results whose state says they can run, in the heuristic's order
  for (int i = 0; i < found; ++i) {
    if (out[i].state == CUBLAS_STATUS_SUCCESS) out[usable++] = out[i];
  }
  return usable;
}

cublasStatus_t Matmul(const State* s, const PerN& per, const cublasLtMatmulAlgo_t* algo, const void* b, void* c,
                      cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  if (s->nk) {
    return cublasLtMatmul(s->lt, s->op, &alpha, s->dense, s->a_t, b, per.b_t, &beta, c, per.c_t, c, per.c_t, algo,
                          s->workspace, kWorkspaceBytes, stream);
  }
  return cublasLtMatmul(s->lt, s->op, &alpha, b, per.b_t, s->dense, s->a_t, &beta, c, per.c_t, c, per.c_t, algo,
                        s->workspace, kWorkspaceBytes, stream);
}

// Times every candidate on scratch b and c and sets per->timed; per->fallback must be set. Returns false
// only for a CUDA failure of the timing itself (a candidate that fails to launch is skipped).
// flush (flush_bytes, twice the device's L2) is overwritten before every timed launch.
bool TimeCandidates(const State* s, PerN* per, const cublasLtMatmulHeuristicResult_t* found, int count,
                    const void* b, void* c, void* flush, size_t flush_bytes, cudaStream_t stream) {
  cudaEvent_t start = nullptr, stop = nullptr;
  bool cuda_ok = cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess;
  std::vector<std::vector<float>> ms(count);
  for (int i = 0; i < count && cuda_ok; ++i) {
    bool launched = true;
    for (int w = 0; w < 2 && launched; ++w) launched = Matmul(s, *per, &found[i].algo, b, c, stream) == CUBLAS_STATUS_SUCCESS;
    for (int r = 0; r < TIMED_REPS && launched; ++r) {
      cuda_ok = cudaMemsetAsync(flush, r, flush_bytes, stream) == cudaSuccess &&
                cudaEventRecord(start, stream) == cudaSuccess;
      launched = Matmul(s, *per, &found[i].algo, b, c, stream) == CUBLAS_STATUS_SUCCESS;
      cuda_ok = cuda_ok && cudaEventRecord(stop, stream) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess;
      float t = 0;
      if (launched && cuda_ok && cudaEventElapsedTime(&t, start, stop) == cudaSuccess) ms[i].push_back(t);
      if (!cuda_ok) break;
    }
    if (!launched) ms[i].clear();
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  const int best = FastestAlgo(ms);
  per->timed = best >= 0 ? found[best].algo : per->fallback;
  return cuda_ok;
}

}  // namespace

SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) {
  return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK);
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if (p->layout != SD_LAYOUT_KN && p->layout != SD_LAYOUT_NK) {
    snprintf(error, cap, "dense_cublaslt: unsupported layout %d", p->layout);
    return 1;
  }
  if ((p->dtype != SD_DTYPE_FP32 && p->dtype != SD_DTYPE_FP16 && p->dtype != SD_DTYPE_BF16) ||
      !SPARSEDITTO_BUILDS_DTYPE(p->dtype)) {
    snprintf(error, cap, "dense_cublaslt: unsupported dtype %d (or not in this build)", p->dtype);
    return 1;
  }
  if (p->rows < 1 || p->cols < 1 || p->rows > INT32_MAX || p->cols > INT32_MAX || p->num_n_values < 1) {
    snprintf(error, cap, "dense_cublaslt: matrix size or n values out of range");
    return 1;
  }
  State* s = new State;
  s->dtype = p->dtype, s->rows = p->rows, s->cols = p->cols;
  s->nk = p->layout == SD_LAYOUT_NK;
  const cudaDataType_t t = DataType(p->dtype);
  const size_t eb = ElementBytes(p->dtype);
  const std::vector<unsigned char> host = Densify(p);
  int64_t n_max = 0;
  for (int i = 0; i < p->num_n_values; ++i) n_max = std::max(n_max, p->n_values[i]);
  void *b = nullptr, *c = nullptr, *flush = nullptr;
  int l2_bytes = 0;
  cudaStream_t stream = nullptr;
  const char* failed = nullptr;
  cudaError_t err = cudaMalloc(&s->dense, host.size());
  if (err == cudaSuccess) err = cudaMemcpy(s->dense, host.data(), host.size(), cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMalloc(&s->workspace, kWorkspaceBytes);
  // Zeroed once, as dense_cublas's (initcheck: a split-K kernel reading workspace it did not write).
  if (err == cudaSuccess) err = cudaMemset(s->workspace, 0, kWorkspaceBytes);
  if (err == cudaSuccess) err = cudaMalloc(&b, static_cast<size_t>(p->cols) * n_max * eb);
  if (err == cudaSuccess) err = cudaMalloc(&c, static_cast<size_t>(p->rows) * n_max * eb);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, p->device);
  const size_t flush_bytes = 2 * static_cast<size_t>(std::max(l2_bytes, 1 << 20));
  if (err == cudaSuccess) err = cudaMalloc(&flush, flush_bytes);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) {
    const size_t count = static_cast<size_t>(p->cols) * n_max;
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32)) if (p->dtype == SD_DTYPE_FP32) FillPattern<<<256, 256, 0, stream>>>(static_cast<float*>(b), count, 7u);
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16)) if (p->dtype == SD_DTYPE_FP16) FillPattern<<<256, 256, 0, stream>>>(static_cast<__half*>(b), count, 7u);
    if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16)) if (p->dtype == SD_DTYPE_BF16) FillPattern<<<256, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(b), count, 7u);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess) failed = cudaGetErrorString(err);
  const cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale = CUDA_R_32F;
  if (!failed && (cublasLtCreate(&s->lt) != CUBLAS_STATUS_SUCCESS ||
                  cublasLtMatmulDescCreate(&s->op, compute, scale) != CUBLAS_STATUS_SUCCESS)) {
    failed = "cuBLASLt handle or matmul descriptor";
  }
  const cublasOperation_t transpose = CUBLAS_OP_T;  // NK: the dense A, stored as A^T (K x M), read transposed
  if (!failed && s->nk &&
      cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)) !=
          CUBLAS_STATUS_SUCCESS) {
    failed = "cuBLASLt transpose attribute";
  }
  if (!failed && (s->a_t = Layout(t, Operands(p->rows, p->cols, 1).a_t)) == nullptr) failed = "layout of A";
  for (int i = 0; i < p->num_n_values && !failed; ++i) {
    PerN per;
    per.n = p->n_values[i];
    const LtOperands ops = Operands(p->rows, p->cols, per.n, s->nk);
    per.b_t = Layout(t, ops.b_t);
    per.c_t = Layout(t, ops.c_t);
    s->per_n.push_back(per);  // owned by s from here, so release frees its layouts
    PerN& mine = s->per_n.back();
    cublasLtMatmulHeuristicResult_t found[ALGOS];
    if (mine.b_t == nullptr || mine.c_t == nullptr) {
      failed = "layout of B or C";
    } else if (Heuristics(s, mine, static_cast<uint32_t>(eb), 1, found) < 1) {
      failed = "no cuBLASLt algorithm for element-aligned B and C";
    } else {
      mine.fallback = found[0].algo;
      const int count = Heuristics(s, mine, 16, ALGOS, found);
      if (count < 1) {
        mine.timed = mine.fallback;
      } else if (!TimeCandidates(s, &mine, found, count, b, c, flush, flush_bytes, stream)) {
        failed = "timing the algorithms";
      }
    }
  }
  if (stream != nullptr) {
    if (cudaStreamSynchronize(stream) != cudaSuccess && !failed) failed = "the timing stream";
    cudaStreamDestroy(stream);
  }
  cudaFree(b);
  cudaFree(c);
  cudaFree(flush);
  if (failed) {
    snprintf(error, cap, "dense_cublaslt prepare: %s", failed);
    sparseditto_release(s);
    return 1;
  }
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  const State* s = static_cast<const State*>(state);
  for (const PerN& per : s->per_n) {
    if (per.n != n) continue;
    const cublasLtMatmulAlgo_t* algo = Aligned(b, 16) && Aligned(c, 16) ? &per.timed : &per.fallback;
    return Matmul(s, per, algo, b, c, stream) == CUBLAS_STATUS_SUCCESS ? 0 : 1;
  }
  return 1;  // an n prepare was not given
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  if (s == nullptr) return;
  for (PerN& per : s->per_n) {
    if (per.b_t != nullptr) cublasLtMatrixLayoutDestroy(per.b_t);
    if (per.c_t != nullptr) cublasLtMatrixLayoutDestroy(per.c_t);
  }
  if (s->a_t != nullptr) cublasLtMatrixLayoutDestroy(s->a_t);
  if (s->op != nullptr) cublasLtMatmulDescDestroy(s->op);
  if (s->lt != nullptr) cublasLtDestroy(s->lt);
  cudaFree(s->dense);
  cudaFree(s->workspace);
  delete s;
}
