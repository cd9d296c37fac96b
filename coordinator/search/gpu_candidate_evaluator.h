// The search loop's evaluator on the real cascade (evaluator/evaluator.h): screen, compile, check and
// time on the local GPU. SetUp materialises the task and times its baselines once, and fails (no GPU, a
// bad task) with the runner's error.
// Not thread-safe (one GPU, one thread).
#pragma once

#include "coordinator/search/candidate_evaluator.h"
#include "evaluator/evaluator.h"

namespace sparseditto {

class GpuCandidateEvaluator final : public CandidateEvaluator {
 public:
  explicit GpuCandidateEvaluator(Evaluator* evaluator) : evaluator_(evaluator) {}

  absl::Status SetUp(const v1::Task& task) override { return evaluator_->SetupTask(task).status(); }

  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override {
    return evaluator_->Evaluate(task, candidate, /*finalist=*/false, check_seed);
  }

 private:
  Evaluator* evaluator_;  // not owned; outlives this object
};

}  // namespace sparseditto
