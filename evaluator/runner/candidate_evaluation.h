// The cascade of DESIGN.md §3.3 inside the runner child (the judge), for one candidate running in its
// own host process (candidate_host.h): smoke problems,
// the task matrix at every n, timing, the re-check with fresh B in the timed buffers, and for
// finalists the determinism rerun; then fitness against the baselines. Stops at the first failure.
// Not thread-safe.
#pragma once

#include <functional>
#include <map>

#include "eval_result.pb.h"
#include "evaluator/runner/bracket.h"
#include "evaluator/runner/candidate_host.h"
#include "evaluator/runner/gpu_share.h"
#include "evaluator/runner/task_context.h"
#include "evaluator/runner/timing.h"
#include "runner.pb.h"

namespace sparseditto {

// Called as each stage begins, so the evaluator knows where a child that dies had got to.
using StageListener = std::function<void(v1::EvalStage)>;

// Fills and returns the result (stage reached, failure, checks, timings, fitness). *context_lost is set
// when the CUDA context is unusable afterwards.
// Every verdict is the judge's: outputs are read from the judge's buffers, times are the host's only
// where they fit the judge's bracket (`calibration`; may be null when the request does not time:
// small_only or correctness_only). `share` (null: the GPU is this runner's alone) is held exclusive
// for the timing stage (gpu_share.h): the caller holds it shared for the rest.
v1::EvalResult EvaluateCandidate(const v1::EvaluateRequest& request, CandidateHost& host,
                                 const BracketCalibration* calibration, TaskContext& context,
                                 const std::map<int64_t, v1::BaselineList>& baselines,
                                 const StageListener& on_stage, bool* context_lost, GpuShare* share = nullptr);

// True when the candidate is faster than the pattern allows: more than 2 / density times faster than
// dense cuBLAS at some n (a sparse kernel must at least touch every nonzero).
bool ImplausiblyFast(const std::vector<v1::TimingStats>& timings,
                     const std::map<int64_t, v1::BaselineList>& baselines, double density);

}  // namespace sparseditto
