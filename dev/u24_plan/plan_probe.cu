// Lab probe (not product code): which plan u24_stream_sp's prepare picks on this GPU for unstructured 70% at n = 16
// on the LLM suite's four shapes, and what the kernel takes under each plan its FittedPlan considered (K splits 8
// down to 2: splits, K tiles a split, residual entries staged per list against the longest list, shared memory,
// active clusters the occupancy API allows), with an L2 flush before each of 50 trials, median of events.
// Question (docs/results/session_h100_2026-12-07b.md): is u24's 1.4-2x gap to nm24_stream_sp at large K the plan
// (residual entries left unstaged and walked from global memory, or a second wave) rather than the residual walk?
// Answer (H100, 2026-12-07): at 8192² yes, the plan: prepare took 3 splits whose lists outgrew shared memory (73.0 us)
// where 5 splits ran 65.2; now PickPlan (f7e2027). Elsewhere prepare already took the fastest plan, so the rest of
// the gap to nm24_stream_sp lies in the kernel (residual walk, 120 registers), not the plan (docs/results/session_h100_2026-12-07c.md).
//   nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -o plan_probe dev/u24_plan/plan_probe.cu && ./plan_probe
#include "kernels/seeds/u24_stream_sp.cu"
#include "../probe_timing.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main() {
  const int64_t shapes[][2] = {{4096, 4096}, {4096, 11008}, {11008, 4096}, {8192, 8192}};
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, 2 * size_t(l2)));
  for (const auto& sh : shapes) {
    const int64_t rows = sh[0], cols = sh[1], n = 16;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<int32_t> ro(rows + 1, 0), ci;
    std::vector<float> v;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        if (u(rng) < 0.3f) ci.push_back(int32_t(c)), v.push_back(float(int(u(rng) * 8) - 4) * 0.25f + 0.125f);
      ro[r + 1] = int32_t(ci.size());
    }
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
    const Plan chosen = s->plans.front().second;
    printf("%lldx%lld u70 n=16: prepare chose splits=%d per=%d res_cap=%d smem=%zu\n", (long long)rows, (long long)cols,
           chosen.splits, chosen.kt_per_split, chosen.res_cap, chosen.smem);
    for (int cap = 8; cap >= 2; --cap) {
      const Plan q = WithResidual(MakePlan(s->mp, s->kp, n, s->sms, cap), s->rstart, s->mp, s->kp, s->smem_budget);
      if (cap < 8 && q.splits >= cap + 1) continue;  // the same plan as a larger cap
      cudaLaunchAttribute cluster;
      const cudaLaunchConfig_t config = LaunchConfig(s, q, n, nullptr, &cluster);
      int active = 0;
      cudaOccupancyMaxActiveClusters(&active, U24StreamKernel<__half, false>, &config);
      FlushedTiming t;
      if (!TimeFlushed([&] { Launch<__half, false>(s, q, b, c, n, nullptr); return true; }, flush, 2 * size_t(l2), 3, 50, &t)) return 1;
      printf("  cap %d: splits=%d per=%d res_cap=%d longest=%d smem=%zu clusters=%lld active=%d -> median %.1f us (p10 %.1f, p90 %.1f)\n",
             cap, q.splits, q.kt_per_split, q.res_cap, q.res_longest, q.smem, (long long)q.clusters, active, t.median_us, t.p10_us, t.p90_us);
    }
    sparseditto_release(st);
    cudaFree(b), cudaFree(c);
  }
  return 0;
}
