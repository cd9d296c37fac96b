// A hand-made evaluation result for tests of plan choice and the plan stage: timed at each (n, ms),
// against one cublas_dense baseline of `baseline_ms` at every n.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "coordinator/testing/test_util.h"
#include "eval_result.pb.h"

namespace sparseditto::testing {

// Adds a timing at each (n, ms) to `r`, each n against one cublas_dense baseline of `baseline_ms`.
inline void AddTimings(v1::EvalResult& r, const std::vector<std::pair<int64_t, double>>& times,
                       double baseline_ms = 1.0) {
  for (const auto& [n, ms] : times) {
    v1::TimingStats* t = r.add_timings();
    t->set_n(n);
    t->set_median_ms(ms);
    v1::BaselineTime* b = (*r.mutable_baselines())[n].add_baselines();
    b->set_name("cublas_dense");
    b->set_available(true);
    b->mutable_timing()->set_median_ms(baseline_ms);
  }
}

inline v1::EvalResult TimedResult(const std::string& id, double fitness,
                                  const std::vector<std::pair<int64_t, double>>& times,
                                  v1::FailureCategory failure = v1::FAILURE_CATEGORY_NONE, double baseline_ms = 1.0) {
  v1::EvalResult r = MakeResult(id, fitness, failure);
  r.set_stage_reached(v1::EVAL_STAGE_DONE);
  AddTimings(r, times, baseline_ms);
  return r;
}

}  // namespace sparseditto::testing
