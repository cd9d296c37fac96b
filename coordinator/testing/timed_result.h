// A hand-made evaluation result for tests of plan choice and the plan stage: timed at each (n, ms),
// against one cublas_dense baseline of `baseline_ms` at every n.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "eval_result.pb.h"

namespace sparseditto::testing {

inline v1::EvalResult TimedResult(const std::string& id, double fitness,
                                  const std::vector<std::pair<int64_t, double>>& times,
                                  v1::FailureCategory failure = v1::FAILURE_CATEGORY_NONE, double baseline_ms = 1.0) {
  v1::EvalResult r;
  r.set_candidate_id(id);
  r.set_fitness(fitness);
  r.set_failure(failure);
  r.set_stage_reached(v1::EVAL_STAGE_DONE);
  for (const auto& [n, ms] : times) {
    v1::TimingStats* t = r.add_timings();
    t->set_n(n);
    t->set_median_ms(ms);
    v1::BaselineTime* b = (*r.mutable_baselines())[n].add_baselines();
    b->set_name("cublas_dense");
    b->set_available(true);
    b->mutable_timing()->set_median_ms(baseline_ms);
  }
  return r;
}

}  // namespace sparseditto::testing
