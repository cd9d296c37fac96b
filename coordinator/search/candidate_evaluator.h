// The seam between the search loop and whatever scores a candidate. The real implementation will wrap
// evaluator/Evaluator (compile, check, time on a GPU); the tests adapt coordinator/testing/fake_evaluator.
// An implementation reports every outcome, failures included, inside the EvalResult (failure category,
// fitness 0); it has no error channel because a candidate that fails is a result, not an error.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "runner.pb.h"
#include "kernel_abi/tunable_values.h"
#include "task.pb.h"

namespace sparseditto {

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // Prepares for the candidates of `task` (the real evaluator materialises the matrix and times the
  // baselines). An error fails this attempt at the task's search; batch_search.h retries it unless it
  // is marked NonRetryable (common/non_retryable.h: no driver, a task the runner refuses).
  virtual absl::Status SetUp(const v1::Task& task) {
    (void)task;
    return absl::OkStatus();
  }
  // Times the baselines of `task` again, so that the next Evaluate calls are judged against fresh ones
  // (the confirmation stage, confirmation.h). The GPU evaluator times them in a new process with no
  // cache; the default sets the task up again.
  virtual absl::Status RetimeBaselines(const v1::Task& task) { return SetUp(task); }
  // The facts of the device candidates are evaluated on, as read from it (after SetUp): what
  // device-relative tunables resolve against (kernel_abi/tunable_values.h). The default knows none, so
  // such tunables stay at their current values.
  virtual DeviceFacts Device() const { return {}; }
  // The reply of the last successful SetUp: the baselines' times at each n, the matrix's shape and
  // nonzeros, the device and its measured limits (what `sparseditto bench`'s table is made of,
  // bench/bench_loop.h). The default knows none: an empty reply (no baselines, no limits).
  virtual v1::SetupTaskReply SetupReply() const { return {}; }
  // Told the candidates the loop will evaluate next, in order (SearchLoopOptions.compile_ahead > 1);
  // an implementation may prepare them (compile them together). It must not change any result.
  virtual void Prefetch(const v1::Task& task, const std::vector<v1::Candidate>& candidates) {
    (void)task;
    (void)candidates;
  }
  // Scores `candidate` (a candidate of `task`). `check_seed` seeds the correctness check's inputs.
  virtual v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) = 0;
  // The whole cascade with a short timing screen instead of a full timing (every check runs as in
  // Evaluate): the search screens each child and times in full only those near `bar` (the elite's
  // fitness and per-n times, common/screen_bar.h). An implementation either returns the screen (the
  // result says timing_screen; the caller then applies NearScreenBar and calls Evaluate for a full
  // timing) or goes on to the full timing itself when the screen is near the bar (the result says
  // timed_in_full_after_screen; the GPU evaluator does, in the same host). The default has no screen
  // and times in full (neither flag), so the loop never asks again.
  virtual v1::EvalResult EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                                          const v1::ScreenBar& bar) {
    (void)bar;
    return Evaluate(task, candidate, check_seed);
  }
  // The whole cascade plus the finalist checks (determinism rerun, compute-sanitizer memcheck,
  // racecheck, initcheck) for a candidate the search has already scored. The default has none to run:
  // an INTERNAL failure that says so.
  virtual v1::EvalResult EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) {
    (void)check_seed;
    v1::EvalResult result;
    result.set_candidate_id(candidate.id());
    result.set_task_name(task.name());
    result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    result.set_failure_detail("this evaluator has no finalist checks");
    return result;
  }
};

}  // namespace sparseditto
