// Lab probe (not product code), no GPU needed: u24_stream_sp's plans for unstructured 70% at n = 16 on the LLM suite's
// four shapes as prepare sizes them for an H100 (132 SMs, 227 KB a block, 228 KB an SM): splits, CTAs, shared
// memory with the reduction slots sized for the split count (and for eight, as before 2026-12-08), staged residual against the longest list, and
// whether two CTAs fit an SM by shared memory (the 2-CTA share, 113 KB). Occupancy by registers and the clusters
// the device places are the GPU's to say (plan_probe.cu).
//   nvcc -std=c++17 -O2 -arch=sm_90a -I. -Ikernel_abi -o cpu_plans dev/u24_plan/cpu_plans.cu && ./cpu_plans
#include "kernels/seeds/u24_stream_sp.cu"
#include <cstdio>
#include <random>
int main() {
  const int64_t shapes[][2] = {{4096, 4096}, {4096, 11008}, {11008, 4096}, {8192, 8192}};
  const int sms = 132; const size_t budget = SmemBudget(232448, 233472), share = 233472 / 2 - 1024;
  printf("CTAS_PER_SM %d THIRDS %d budget %zu\n", CTAS_PER_SM, kThirds, budget);
  for (const auto& sh : shapes) {
    const int64_t rows = sh[0], cols = sh[1];
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<int32_t> ro(rows + 1, 0), ci; std::vector<float> v;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) if (u(rng) < 0.3f) ci.push_back(int32_t(c)), v.push_back(0.5f);
      ro[r + 1] = int32_t(ci.size());
    }
    U24Host h; std::string why;
    if (!BuildU24(rows, cols, ro.data(), ci.data(), v.data(), &h, &why)) { printf("build: %s\n", why.c_str()); return 1; }
    printf("%lldx%lld: residual entries %zu\n", (long long)rows, (long long)cols, h.residual_val.size());
    int last = 0;
    for (int cap = 8; cap >= 1; --cap) {
      const Plan r = WithResidual(MakePlan(h.mp, h.kp, 16, sms, cap), h.rstart, h.mp, h.kp, budget);
      if (r.splits == 0 || r.splits == last) continue;
      last = r.splits;
      const size_t eight = r.smem + kRedBytes - RedBytes(r.splits);  // the slots sized for eight splits, as before 2026-12-08
      printf("  splits %d per %d ctas %lld: smem %zu (two an SM: %s), with eight splits' slots %zu (%s); res_cap %d / %d longest\n", r.splits,
             r.kt_per_split, (long long)(r.clusters * r.splits), r.smem, r.smem <= share ? "yes" : "no", eight, eight <= share ? "yes" : "no",
             r.res_cap, r.res_longest);
    }
  }
}
