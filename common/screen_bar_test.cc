#include "common/screen_bar.h"

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

v1::TimingStats At(int64_t n, double ms) {
  v1::TimingStats t;
  t.set_n(n);
  t.set_median_ms(ms);
  return t;
}

TEST(ScreenBar, NearByFitnessOrByATimeAtOneN) {
  v1::ScreenBar bar;
  bar.set_margin(0.10);
  bar.set_elite_fitness(1.0);
  (*bar.mutable_elite_ms_by_n())[16] = 0.010;
  (*bar.mutable_elite_ms_by_n())[2048] = 1.0;
  v1::ScreenBar no_elite;
  no_elite.set_margin(0.10);
  struct Case {
    const char* what;
    const v1::ScreenBar* bar;
    double fitness;
    std::vector<v1::TimingStats> timings;
    bool near;
  };
  const Case cases[] = {
      {"failed screen", &bar, 0.0, {At(16, 0.001)}, false},
      {"failed screen, no elite", &no_elite, 0.0, {}, false},
      {"no elite yet", &no_elite, 0.2, {At(16, 5.0)}, true},
      {"fitness within the margin", &bar, 0.91, {At(16, 1.0), At(2048, 9.0)}, true},
      {"fitness just outside, times far", &bar, 0.89, {At(16, 0.02), At(2048, 2.0)}, false},
      {"slow overall, fast at n=16", &bar, 0.5, {At(16, 0.011), At(2048, 5.0)}, true},
      {"slow overall, just outside at n=16", &bar, 0.5, {At(16, 0.0111), At(2048, 5.0)}, false},
      {"an n never timed in full", &bar, 0.5, {At(16, 1.0), At(128, 9.0)}, true},
  };
  for (const Case& c : cases) EXPECT_EQ(NearScreenBar(c.fitness, c.timings, *c.bar), c.near) << c.what;
}

}  // namespace
}  // namespace sparseditto
