// WorkEscapedStream and Summarise: pure functions of the samples, no GPU.
#include "evaluator/runner/timing.h"

#include <gtest/gtest.h>

namespace sparseditto {
namespace {

v1::TimingStats Stats(double event_ms, double host_ms, double idle_host_ms) {
  v1::TimingStats stats;
  Summarise({event_ms}, {host_ms}, {idle_host_ms}, &stats);
  return stats;
}

TEST(WorkEscapedStream, JudgesHostClockAgainstEventsPlusTheIdleTrial) {
  struct Case {
    const char* name;
    double event_ms, host_ms, idle_host_ms;
    bool escaped;
  };
  const Case cases[] = {
      {"quiet GPU, launch overhead only", 0.010, 0.040, 0.015, false},
      {"quiet GPU, long kernel", 2.0, 2.1, 0.015, false},
      {"work on a side stream, quiet GPU", 0.010, 0.500, 0.015, true},
      {"just past the threshold", 0.010, 0.010 * 3 + 0.050 + 2 * 0.015 + 0.001, 0.015, true},
      {"just under the threshold", 0.010, 0.010 * 3 + 0.050 + 2 * 0.015 - 0.001, 0.015, false},
      // H200, s9 call 5: six evals sharing the GPU; correct seeds (csr_warp_per_row, nm24_stream_sp, n = 7).
      {"shared GPU, correct kernel", 0.0055, 0.5626, 0.4139, false},
      {"shared GPU, correct kernel 2", 0.0060, 0.5645, 0.4240, false},
      {"shared GPU, work on a side stream", 0.0060, 3.5, 0.4240, true},
      {"no idle trials recorded (zero): the plain threshold", 0.010, 0.500, 0.0, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(WorkEscapedStream(Stats(c.event_ms, c.host_ms, c.idle_host_ms)), c.escaped) << c.name;
  }
}

TEST(Summarise, MediansOfEachClock) {
  v1::TimingStats stats;
  Summarise({0.3, 0.1, 0.2}, {0.9, 0.5, 0.7}, {0.04, 0.02, 0.03, 0.01}, &stats);
  EXPECT_EQ(stats.trials(), 3);
  EXPECT_DOUBLE_EQ(stats.median_ms(), 0.2);
  EXPECT_DOUBLE_EQ(stats.min_ms(), 0.1);
  EXPECT_DOUBLE_EQ(stats.max_ms(), 0.3);
  EXPECT_DOUBLE_EQ(stats.host_median_ms(), 0.7);
  EXPECT_DOUBLE_EQ(stats.host_idle_median_ms(), 0.025);
}

}  // namespace
}  // namespace sparseditto
