// FormatReport's shared-GPU warning and SharedGpuIdleTrialMs.
#include "evaluator/report.h"

#include "common/shared_gpu.h"

#include <gtest/gtest.h>

namespace sparseditto {
namespace {

struct IdleTrials {
  double median_ms;
  double quickest_ms;
};

v1::EvalResult WithIdleTrials(std::initializer_list<IdleTrials> idle) {
  v1::EvalResult result;
  int64_t n = 1;
  for (const IdleTrials& ms : idle) {
    v1::TimingStats* t = result.add_timings();
    t->set_n(n++);
    t->set_median_ms(0.01);
    t->set_host_idle_median_ms(ms.median_ms);
    t->set_host_idle_quickest_ms(ms.quickest_ms);
  }
  return result;
}

TEST(SharedGpuWarning, OnlyWhenTheMedianIdleTrialIsBeyondTheQuickestByTheRule) {
  struct Case {
    const char* name;
    std::initializer_list<IdleTrials> idle_ms;
    double expected;
  };
  v1::TimingStats at_limit;
  at_limit.set_host_idle_quickest_ms(0.1);
  const double limit = SharedGpuIdleLimitMs(at_limit);
  const Case cases[] = {
      {"no timings", {}, 0},
      {"quiet GPU, one-CTA gate", {{0.012, 0.009}, {0.03, 0.011}}, 0},
      // Session 11 call 1: a quiet H200 under the whole-GPU gate, flagged shared by the old 0.1 ms limit.
      {"quiet GPU, whole-GPU gate", {{0.144, 0.118}}, 0},
      {"at the limit", {{limit, 0.1}}, 0},
      {"just over the limit", {{limit + 0.001, 0.1}}, limit + 0.001},
      {"one n shared", {{0.02, 0.015}, {0.4139, 0.02}}, 0.4139},
      {"every idle trial waits, the quickest over 1 ms", {{2.0, 1.2}}, 2.0},
      {"every idle trial waits a little: not seen alone", {{0.6, 0.4}}, 0},
      // Session 11 call 2 (eight evals at once): n=128's quickest waited too; n=16's is the reference.
      {"the evaluation's quickest is the reference", {{0.380, 0.134}, {0.454, 0.450}}, 0.454},
      {"stored before the quickest was recorded: the old 0.1 ms limit", {{0.15, 0}}, 0.15},
      {"worst of several", {{0.3, 0.01}, {0.42, 0.02}, {0.2, 0.01}}, 0.42},
  };
  const v1::Task task;
  for (const Case& c : cases) {
    const v1::EvalResult result = WithIdleTrials(c.idle_ms);
    EXPECT_DOUBLE_EQ(SharedGpuIdleTrialMs(result), c.expected) << c.name;
    const bool warned = FormatReport(task, result).find("the GPU was shared while timing") != std::string::npos;
    EXPECT_EQ(warned, c.expected > 0) << c.name;
  }
}

// A verdict that did not run the smoke shapes says so, in the report and in the JSON (eval --json, --out).
TEST(FormatReport, SaysWhenTheSmokeShapesWereSkipped) {
  v1::Task task;
  task.set_name("t");
  for (const bool skipped : {false, true}) {
    v1::EvalResult result;
    result.set_candidate_id("c");
    result.set_stage_reached(v1::EVAL_STAGE_DONE);
    result.set_smoke_skipped(skipped);
    const std::string report = FormatReport(task, result);
    EXPECT_EQ(report.find("the smoke shapes were skipped") != std::string::npos, skipped) << report;
    const std::string json = ResultToJson(result);
    EXPECT_NE(json.find(skipped ? "\"smoke_skipped\": true" : "\"smoke_skipped\": false"), std::string::npos) << json;
  }
}

}  // namespace
}  // namespace sparseditto
