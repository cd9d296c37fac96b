// FormatReport's shared-GPU warning and SharedGpuIdleTrialMs.
#include "evaluator/report.h"

#include "common/shared_gpu.h"

#include <gtest/gtest.h>

namespace sparseditto {
namespace {

v1::EvalResult WithIdleTrials(std::initializer_list<double> idle_ms) {
  v1::EvalResult result;
  int64_t n = 1;
  for (double ms : idle_ms) {
    v1::TimingStats* t = result.add_timings();
    t->set_n(n++);
    t->set_median_ms(0.01);
    t->set_host_idle_median_ms(ms);
  }
  return result;
}

TEST(SharedGpuWarning, OnlyWhenAnIdleTrialIsSlowerThanTheLimit) {
  struct Case {
    const char* name;
    std::initializer_list<double> idle_ms;
    double expected;
  };
  const Case cases[] = {
      {"no timings", {}, 0},
      {"quiet GPU", {0.012, 0.03}, 0},
      {"at the limit", {kSharedGpuIdleTrialMs}, 0},
      {"one n shared", {0.02, 0.4139}, 0.4139},
      {"worst of several", {0.3, 0.42, 0.2}, 0.42},
  };
  const v1::Task task;
  for (const Case& c : cases) {
    const v1::EvalResult result = WithIdleTrials(c.idle_ms);
    EXPECT_DOUBLE_EQ(SharedGpuIdleTrialMs(result), c.expected) << c.name;
    const bool warned = FormatReport(task, result).find("the GPU was shared while timing") != std::string::npos;
    EXPECT_EQ(warned, c.expected > 0) << c.name;
  }
}

}  // namespace
}  // namespace sparseditto
