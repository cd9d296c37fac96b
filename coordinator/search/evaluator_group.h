// Several local evaluators (one per GPU of this machine: `sparseditto search --gpus`) as one
// CandidateEvaluator for what is asked of the machine as a whole, and one EvaluationPipeline with a
// taker per evaluator for the search's evaluations (SearchLoopOptions::pipeline), so k GPUs evaluate
// k candidates at once. SetUp goes to every member, at once (each times the task's baselines on its
// own GPU: a result's fitness is against its own GPU's baselines); Device, Prefetch, RetimeBaselines
// and the evaluation methods go to the first member (the confirmation stage, which compares
// candidates on one GPU against baselines it has just re-timed there).
//
// Ownership: the members are borrowed and outlive the group. Thread-safety: the CandidateEvaluator
// methods from one thread, and only while no pipeline job is outstanding (the loop asks SetUp before
// its first job and the confirmation after its last); the pipeline's are its own (local_pipeline.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/local_pipeline.h"

namespace sparseditto {

class EvaluatorGroup final : public CandidateEvaluator {
 public:
  // REQUIRES: at least one member, none null.
  explicit EvaluatorGroup(std::vector<CandidateEvaluator*> members)
      : members_(members), pipeline_(std::make_unique<LocalEvaluationPipeline>(std::move(members))) {}

  // Every member's, at once; the first error (lowest member), naming it ("evaluator 2 of 4 (set-up):
  // ..."), with that error's code and payloads (so its NonRetryable mark, common/non_retryable.h).
  absl::Status SetUp(const v1::Task& task) override;
  absl::Status RetimeBaselines(const v1::Task& task) override { return members_[0]->RetimeBaselines(task); }

  DeviceFacts Device() const override { return members_[0]->Device(); }
  void Prefetch(const v1::Task& task, const std::vector<v1::Candidate>& candidates) override {
    members_[0]->Prefetch(task, candidates);
  }
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override {
    return members_[0]->Evaluate(task, candidate, check_seed);
  }
  v1::EvalResult EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                                  const v1::ScreenBar& bar) override {
    return members_[0]->EvaluateScreened(task, candidate, check_seed, bar);
  }
  v1::EvalResult EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override {
    return members_[0]->EvaluateFinalist(task, candidate, check_seed);
  }

  // A taker per member; valid while the group is.
  EvaluationPipeline& pipeline() { return *pipeline_; }
  size_t size() const { return members_.size(); }

 private:

  std::vector<CandidateEvaluator*> members_;
  std::unique_ptr<LocalEvaluationPipeline> pipeline_;
};

}  // namespace sparseditto
