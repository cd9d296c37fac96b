// Lab probe (not product code): a stream seed at n = 16 on the LLM suite's four shapes under every K-split count
// 1..8 its slab allows (forced, not planned), beside the plan its prepare picks: splits, K tiles a split, CTAs,
// clusters the occupancy API holds at once, and for the residual seeds the staged entries against the longest list;
// median of 50 launches each after an L2 flush (events). Built once per seed (the seeds share names):
//   nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=nm24 -o split_nm24 dev/stream_plan/split_probe.cu
//   nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=u14 -o split_u14 dev/stream_plan/split_probe.cu
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

#include <algorithm>
#include <cstdio>
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
// The plan with exactly `splits` K splits where the slab allows it (splits == 0 otherwise).
Plan Forced(const State* s, int splits) {
  Plan plan;
  const int64_t ktiles = s->kp / kBk, per = (ktiles + splits - 1) / splits;
  plan.clusters = s->mp / (16 * WARPS);
  if (per > kMaxSlabTiles || splits > kMaxSplits) return plan;
  plan.kt_per_split = static_cast<int>(per);
  plan.splits = static_cast<int>((ktiles + per - 1) / per);
  plan.smem = kRedBytes + static_cast<size_t>(per) * kBk * kSlabRowBytes;
#if HAS_RESIDUAL
  plan = WithResidual(plan, s->rstart, s->mp, s->kp, s->smem_budget);
#endif
  return plan;
}
}  // namespace

int main() {
  const int64_t shapes[][2] = {{4096, 4096}, {4096, 11008}, {11008, 4096}, {8192, 8192}};
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, 2 * size_t(l2)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (const auto& sh : shapes) {
    const int64_t rows = sh[0], cols = sh[1], n = 16;
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
    if (sparseditto_prepare(&p, &st, err, sizeof err) != 0) { printf("prepare: %s\n", err); return 1; }
    State* s = static_cast<State*>(st);
    void *b, *c;
    CK(cudaMalloc(&b, cols * n * 2));
    CK(cudaMemset(b, 0x3c, cols * n * 2));
    CK(cudaMalloc(&c, rows * n * 2));
    printf("%lldx%lld n=16: prepare chose splits=%d per=%d\n", (long long)rows, (long long)cols, s->plans.front().second.splits,
           s->plans.front().second.kt_per_split);
    int last = 0;
    for (int splits = 1; splits <= kMaxSplits; ++splits) {
      const Plan q = Forced(s, splits);
      if (q.splits == 0 || q.splits == last) continue;  // the slab refuses it, or the same plan as the count before
      last = q.splits;
      cudaLaunchAttribute cluster;
      const cudaLaunchConfig_t config = LaunchConfig(s, q, n, nullptr, &cluster);
      int active = 0;
      if (cudaOccupancyMaxActiveClusters(&active, SEED_KERNEL<__half, false>, &config) != cudaSuccess) active = -1, (void)cudaGetLastError();
      std::vector<float> us;
      for (int t = 0; t < 53; ++t) {
        CK(cudaMemsetAsync(flush, 0x5a, 2 * size_t(l2)));
        CK(cudaEventRecord(e0));
        Launch<__half, false>(s, q, b, c, n, nullptr);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (t >= 3) us.push_back(ms * 1000);
      }
      std::sort(us.begin(), us.end());
      printf("  splits=%d per=%d ctas=%lld active_clusters=%d/%lld", q.splits, q.kt_per_split, (long long)(q.clusters * q.splits), active,
             (long long)q.clusters);
#if HAS_RESIDUAL
      printf(" res_cap=%d longest=%d", q.res_cap, q.res_longest);
#endif
      printf(" -> median %.1f us (p10 %.1f, p90 %.1f)\n", us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]);
    }
    sparseditto_release(st);
    cudaFree(b), cudaFree(c);
  }
  return 0;
}
