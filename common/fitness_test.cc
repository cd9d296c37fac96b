// SpeedupFitness and FastestBaselineMs: the geomean of fastest-baseline / median, unavailable or
// untimed baselines ignored, 0 when a time or a baseline is missing.
#include "common/fitness.h"

#include <cmath>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

v1::TimingStats Timing(int64_t n, double ms) {
  v1::TimingStats t;
  t.set_n(n);
  t.set_median_ms(ms);
  return t;
}

void AddBaseline(std::map<int64_t, v1::BaselineList>& baselines, int64_t n, const char* name, double ms,
                 bool available = true) {
  v1::BaselineTime* b = baselines[n].add_baselines();
  b->set_name(name);
  b->set_available(available);
  b->mutable_timing()->set_median_ms(ms);
}

TEST(FitnessTest, GeomeanOfTheFastestAvailableBaselineOverTheKernel) {
  std::map<int64_t, v1::BaselineList> baselines;
  AddBaseline(baselines, 16, "cublas_dense", 2.0);
  AddBaseline(baselines, 16, "cusparse_csr", 1.0);
  AddBaseline(baselines, 16, "cusparselt_2to4", 0.1, /*available=*/false);
  AddBaseline(baselines, 128, "cublas_dense", 4.0);
  AddBaseline(baselines, 128, "cusparse_csr", 0.0);  // not timed
  EXPECT_EQ(FastestBaselineMs(baselines, 16), 1.0);
  EXPECT_EQ(FastestBaselineMs(baselines, 16, "cublas_dense"), 2.0);
  EXPECT_EQ(FastestBaselineMs(baselines, 128), 4.0);
  EXPECT_TRUE(std::isinf(FastestBaselineMs(baselines, 2048)));
  EXPECT_NEAR(SpeedupFitness({Timing(16, 0.5), Timing(128, 1.0)}, baselines), std::sqrt(2.0 * 4.0), 1e-12);
  EXPECT_EQ(SpeedupFitness({}, baselines), 0);
  EXPECT_EQ(SpeedupFitness({Timing(16, 0.5), Timing(2048, 1.0)}, baselines), 0) << "no baseline at 2048";
  EXPECT_EQ(SpeedupFitness({Timing(16, 0.0)}, baselines), 0) << "no time";
}

}  // namespace
}  // namespace sparseditto
