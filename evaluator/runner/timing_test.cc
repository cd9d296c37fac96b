// WorkEscapedStream and Summarise: pure functions of the samples, no GPU.
#include "evaluator/runner/timing.h"
#include "evaluator/runner/bracket.h"

#include <gtest/gtest.h>

#include <vector>

namespace sparseditto {
namespace {

// `trials` trials of (events, host, idle) each; the first `slow` of them get `wait_ms` more host clock,
// a shared GPU's time-slice wait (or escaped work) that the idle trials beside them did not see.
v1::TimingStats Trials(int trials, double event_ms, double host_ms, double idle_host_ms, int slow = 0,
                       double wait_ms = 0) {
  std::vector<double> events(trials, event_ms), host(trials, host_ms), idle(trials, idle_host_ms);
  for (int i = 0; i < slow; ++i) host[i] += wait_ms;
  v1::TimingStats stats;
  Summarise(events, host, idle, &stats);
  return stats;
}

TEST(WorkEscapedStream, JudgesEachTrialsHostClockAgainstItsEventsPlusTheIdleTrial) {
  struct Case {
    const char* name;
    v1::TimingStats stats;
    bool escaped;
  };
  const Case cases[] = {
      {"quiet GPU, launch overhead only", Trials(20, 0.010, 0.040, 0.015), false},
      {"quiet GPU, long kernel", Trials(20, 2.0, 2.1, 0.015), false},
      {"work on a side stream, quiet GPU", Trials(20, 0.010, 0.500, 0.015), true},
      {"just past the threshold", Trials(20, 0.010, 0.010 * 3 + 0.050 + 2 * 0.015 + 0.001, 0.015), true},
      {"just under the threshold", Trials(20, 0.010, 0.010 * 3 + 0.050 + 2 * 0.015 - 0.001, 0.015), false},
      // H200, s9 call 5: six evals sharing the GPU; correct seeds (csr_warp_per_row, nm24_stream_sp, n = 7).
      {"shared GPU, every trial waits, idle too", Trials(20, 0.0055, 0.5626, 0.4139), false},
      {"shared GPU, work on a side stream", Trials(20, 0.0060, 3.5, 0.4240), true},
      // Time-slice waits in a minority of trials, beyond their idle trials: the majority decides.
      {"shared GPU, 10 of 21 trials wait, their idle trials do not", Trials(21, 0.0071, 0.020, 0.015, 10, 0.26),
       false},
      {"side stream in 10 of 21 trials", Trials(21, 0.0071, 0.020, 0.015, 10, 0.5), false},
      {"side stream in 11 of 21 trials", Trials(21, 0.0071, 0.020, 0.015, 11, 0.5), true},
            {"no idle trials recorded (zero): the plain threshold", Trials(20, 0.010, 0.500, 0.0), true},
      {"no trials", v1::TimingStats(), false},
  };
  for (const Case& c : cases) EXPECT_EQ(WorkEscapedStream(c.stats), c.escaped) << c.name;
}

TEST(Summarise, MediansOfEachClockAndTheTrialsThatEscaped) {
  v1::TimingStats stats;
  // Trial 1 (events 0.1, host 0.5 after idle 0.02) exceeds 3 x 0.1 + 0.05 + 0.04; trials 0 and 2 do not.
  Summarise({0.3, 0.1, 0.2}, {0.9, 0.5, 0.7}, {0.04, 0.02, 0.03, 0.01}, &stats);
  EXPECT_EQ(stats.trials(), 3);
  EXPECT_DOUBLE_EQ(stats.median_ms(), 0.2);
  EXPECT_DOUBLE_EQ(stats.min_ms(), 0.1);
  EXPECT_DOUBLE_EQ(stats.max_ms(), 0.3);
  EXPECT_DOUBLE_EQ(stats.host_median_ms(), 0.7);
  EXPECT_DOUBLE_EQ(stats.host_idle_median_ms(), 0.025);
  EXPECT_DOUBLE_EQ(stats.host_idle_quickest_ms(), 0.01);
  EXPECT_EQ(stats.escaped_trials(), 1);
}

// A timing may re-time one disagreeing batch, and one more for every 20 it has run; a host that disagrees in
// every batch is rejected at its second (retimed 1 is not below the allowance at 2 batches).
TEST(BracketRetimesAllowed, OneAndOneMoreEveryTwentyBatches) {
  const struct { int batches, allowed; } cases[] = {{-3, 1}, {0, 1}, {1, 1}, {2, 1}, {19, 1}, {20, 2}, {39, 2},
                                                     {40, 3}, {150, 8}};
  for (const auto& c : cases) EXPECT_EQ(BracketRetimesAllowed(c.batches), c.allowed) << c.batches << " batches";
  int retimed = 0, batches = 0;  // a host that under-reports in every batch, as the timing loop counts it
  for (;;) {
    ++batches;
    if (retimed < BracketRetimesAllowed(batches)) {
      ++retimed;
      continue;
    }
    break;
  }
  EXPECT_EQ(batches, 2) << "rejected at its second batch";
}

}  // namespace
}  // namespace sparseditto
