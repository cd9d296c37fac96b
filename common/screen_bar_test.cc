#include "common/screen_bar.h"

#include <map>

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

TEST(ScreenBar, OnlyACorrectFullTimingRaisesTheBar) {
  auto result = [](double fitness, bool screen, std::vector<v1::TimingStats> timings) {
    v1::EvalResult r;
    r.set_fitness(fitness);
    r.set_timing_screen(screen);
    for (const v1::TimingStats& t : timings) *r.add_timings() = t;
    return r;
  };
  struct Case {
    const char* what;
    v1::EvalResult result;
    double elite_fitness;
    std::map<int64_t, double> elite_ms;
  };
  const Case cases[] = {
      {"a faster full timing at one n, a slower at another", result(1.5, false, {At(16, 0.008), At(2048, 2.0)}), 1.5,
       {{16, 0.008}, {2048, 1.0}}},
      {"a lower fitness keeps the elite's", result(0.5, false, {At(16, 0.009)}), 1.0, {{16, 0.009}, {2048, 1.0}}},
      {"a new n", result(0.5, false, {At(128, 0.1)}), 1.0, {{16, 0.010}, {128, 0.1}, {2048, 1.0}}},
      {"a screen counts for nothing", result(9.0, true, {At(16, 0.001)}), 1.0, {{16, 0.010}, {2048, 1.0}}},
      {"a failed result counts for nothing", result(0.0, false, {At(16, 0.001)}), 1.0, {{16, 0.010}, {2048, 1.0}}},
      {"a time of 0 is skipped", result(0.5, false, {At(16, 0.0)}), 1.0, {{16, 0.010}, {2048, 1.0}}},
  };
  for (const Case& c : cases) {
    v1::ScreenBar bar;
    bar.set_elite_fitness(1.0);
    (*bar.mutable_elite_ms_by_n())[16] = 0.010;
    (*bar.mutable_elite_ms_by_n())[2048] = 1.0;
    NoteFullTiming(c.result, &bar);
    EXPECT_DOUBLE_EQ(bar.elite_fitness(), c.elite_fitness) << c.what;
    const std::map<int64_t, double> elite_ms(bar.elite_ms_by_n().begin(), bar.elite_ms_by_n().end());
    EXPECT_EQ(elite_ms, c.elite_ms) << c.what;
  }
}

}  // namespace
}  // namespace sparseditto
