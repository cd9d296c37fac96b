// Lab probe (not product code): a stream seed at n = 16 on the LLM suite's four shapes under every K-split count
// 1..8 its slab allows (forced, not planned), beside the plan its prepare picks: splits, K tiles a split, CTAs,
// clusters the occupancy API holds at once, and for the residual seeds the staged entries against the longest list;
// median of 50 launches each after an L2 flush (events). Built once per seed (the seeds share names):
//   nvcc -std=c++20 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=nm24 -o split_nm24 dev/stream_plan/split_probe.cu -lcublas
//   nvcc -std=c++20 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=u14 -o split_u14 dev/stream_plan/split_probe.cu -lcublas
// Run `split_nm24` (every split count on the four shapes) or `split_nm24 fixed` (time against K, beside cuBLAS).
// Questions (docs/results/session_h100_2026-12-07c.md): nm24_stream_sp runs 5 splits at 2:4 4096² (160 CTAs on 132
// SMs); is 4 (one CTA an SM) faster? Does u14_stream_sp's prepare fall into the plan u24's did at 8192² (fewer
// splits whose residual outgrows shared memory)? Matrices: 2:4 (two of each four kept) for nm24, unstructured
// 90% for u14, uniform rows, generator std::mt19937(11).
#define nm24 1
#define u14 2
#if SEED == nm24
#include "kernels/seeds/nm24_stream_sp.cu"
#define SEED_KERNEL Nm24StreamKernel
#define HAS_RESIDUAL 0
#else
#include "kernels/seeds/u14_stream_sp.cu"
#define SEED_KERNEL U14StreamKernel
#define HAS_RESIDUAL 1
#endif

#include <cublas_v2.h>

#include "../probe_timing.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

namespace {
void RandomA(int64_t rows, int64_t cols, std::vector<int32_t>* ro, std::vector<int32_t>* ci, std::vector<float>* v) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0, 1);
  ro->assign(1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const bool keep = SEED == nm24 ? (c % 4 == (r % 3)) || (c % 4 == 3) : u(rng) < 0.1f;  // 2:4: two of each four
      if (keep) ci->push_back(int32_t(c)), v->push_back(float(int(u(rng) * 8) - 4) * 0.25f + 0.125f);
    }
    ro->push_back(int32_t(ci->size()));
  }
}
// The plan with exactly `splits` K splits where the slab allows it (splits == 0 otherwise), sized by the seed's own
// MakePlan (an SM count this large makes it take max_splits): the probe's first version sized shared memory itself,
// left out u14's per-warp scratch, and its forced plans wrote past the allocation (compute-sanitizer, 2026-12-07).
Plan Forced(const State* s, int splits) {
  Plan plan = MakePlan(s->mp, s->kp, 16, 1 << 20, splits);
  if (plan.splits != splits) return Plan{};  // the slab needs more splits than this
#if HAS_RESIDUAL
  plan = WithResidual(plan, s->rstart, s->mp, s->kp, s->smem_budget);
#endif
  return plan;
}
}  // namespace

int main(int argc, char** argv) {
  // Default: the LLM suite's four shapes, every split count. `fixed`: M = 4096 at K = 256 .. 16384, the plan prepare
  // picks beside cuBLAS's dense product of the same shape (dense_cublas's call), to split each time into a fixed part
  // and one that grows with K (the intercept and slope of time against bytes).
  const bool fixed = argc > 1 && std::string(argv[1]) == "fixed";
  std::vector<std::pair<int64_t, int64_t>> shapes = {{4096, 4096}, {4096, 11008}, {11008, 4096}, {8192, 8192}};
  if (fixed) shapes = {{4096, 256}, {4096, 512}, {4096, 1024}, {4096, 2048}, {4096, 4096}, {4096, 8192}, {4096, 16384}};
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, 2 * size_t(l2)));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) { printf("cublasCreate failed\n"); return 1; }
  for (const auto& [rows, cols] : shapes) {
    const int64_t n = 16;
    std::vector<int32_t> ro, ci;
    std::vector<float> v;
    RandomA(rows, cols, &ro, &ci, &v);
    sd_problem p = {};
    p.abi_version = SPARSEDITTO_ABI_VERSION, p.dtype = SD_DTYPE_FP16, p.rows = rows, p.cols = cols, p.nnz = int64_t(v.size());
    p.row_offsets = ro.data(), p.col_indices = ci.data(), p.values = v.data();
    const int64_t ns[] = {n};
    p.n_values = ns, p.num_n_values = 1, p.device = 0, p.layout = SD_LAYOUT_KN;
    void* st = nullptr;
    char err[512] = {};
    if (sparseditto_prepare(&p, &st, err, sizeof err) != 0) { printf("%lldx%lld prepare: %s\n", (long long)rows, (long long)cols, err); continue; }
    State* s = static_cast<State*>(st);
    void *b, *c, *dense;
    CK(cudaMalloc(&b, cols * n * 2));
    CK(cudaMemset(b, 0x3c, cols * n * 2));
    CK(cudaMalloc(&c, rows * n * 2));
    const Plan chosen = s->plans.front().second;
    printf("%lldx%lld n=16: prepare chose splits=%d per=%d\n", (long long)rows, (long long)cols, chosen.splits, chosen.kt_per_split);
    std::vector<Plan> plans;
    if (fixed) plans.push_back(chosen);
    for (int splits = 1; !fixed && splits <= kMaxSplits; ++splits) {
      const Plan q = Forced(s, splits);
      if (q.splits != 0) plans.push_back(q);
    }
    for (const Plan& q : plans) {
      cudaLaunchAttribute cluster;
      const cudaLaunchConfig_t config = LaunchConfig(s, q, n, nullptr, &cluster);
      int active = 0;
      if (cudaOccupancyMaxActiveClusters(&active, SEED_KERNEL<__half, false>, &config) != cudaSuccess) active = -1, (void)cudaGetLastError();
      FlushedTiming t;
      if (!TimeFlushed([&] { Launch<__half, false>(s, q, b, c, n, nullptr); return true; }, flush, 2 * size_t(l2), 3, 50, &t)) return 1;
      printf("  splits=%d per=%d ctas=%lld active_clusters=%d/%lld", q.splits, q.kt_per_split, (long long)(q.clusters * q.splits), active,
             (long long)q.clusters);
#if HAS_RESIDUAL
      printf(" res_cap=%d longest=%d", q.res_cap, q.res_longest);
#endif
      printf(" -> median %.1f us (p10 %.1f, p90 %.1f)\n", t.median_us, t.p10_us, t.p90_us);
    }
    if (fixed) {  // cuBLAS, dense A (K x M column-major = row-major A), as dense_cublas runs the KN layout
      CK(cudaMalloc(&dense, rows * cols * 2));
      CK(cudaMemset(dense, 0x3c, rows * cols * 2));
      const float alpha = 1, beta = 0;
      FlushedTiming t;
      if (!TimeFlushed([&] {
            return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(rows), int(cols), &alpha, b, CUDA_R_16F, int(n), dense,
                                CUDA_R_16F, int(cols), &beta, c, CUDA_R_16F, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) ==
                   CUBLAS_STATUS_SUCCESS;
          }, flush, 2 * size_t(l2), 3, 50, &t))
        return 1;
      printf("  cublas dense %.1f MB -> median %.1f us (p10 %.1f, p90 %.1f); seed's A %.1f MB (nm24: 1.125 B an element; u14: nnz x 4 B)\n", rows * cols * 2 / 1e6, t.median_us, t.p10_us, t.p90_us,
             (SEED == nm24 ? rows * cols * 1.125 : v.size() * 4.0) / 1e6);  // u14: nnz x 4 B, a rough size
      cudaFree(dense);
    }
    sparseditto_release(st);
    cudaFree(b), cudaFree(c);
  }
  return 0;
}
