// Fitness (DESIGN.md §3.5): the geometric mean over the task's n values of (the fastest available
// baseline's median time / the kernel's median time). The one formula for every kernel, a plan's
// prediction (coordinator/plan_choice.h) and the judge's (evaluator/runner/candidate_evaluation.cc)
// included. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "eval_result.pb.h"

namespace sparseditto {

// The smallest positive median of the available baselines at n (only the one named `only`, when not
// null); +infinity when there is none.
double FastestBaselineMs(const std::map<int64_t, v1::BaselineList>& baselines, int64_t n, const char* only = nullptr);

// Geometric mean over `timings` of FastestBaselineMs(n) / median_ms; 0 when `timings` is empty or any
// n lacks a baseline or a positive time.
double SpeedupFitness(const std::vector<v1::TimingStats>& timings, const std::map<int64_t, v1::BaselineList>& baselines);

}  // namespace sparseditto
