// The search loop's evaluator on the real cascade (evaluator/evaluator.h): screen, compile, check and
// time on the local GPU. SetUp materialises the task and times its baselines once, and fails (no GPU, a
// bad task) with the runner's error. Prefetch screens and compiles the batch in the background, on a
// CompilePool (one worker per core), and returns at once: the batch's compiles overlap one another and
// the GPU work of its first candidates; Evaluate waits only for its own candidate's compile and uses it
// (its compile_seconds is the real compile's) instead of compiling again.
// Not thread-safe (one GPU, one thread): Prefetch and Evaluate from one thread; the background work
// touches only the Evaluator's thread-safe screen and compiler.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/search/candidate_evaluator.h"
#include "evaluator/compile/compile_pool.h"
#include "evaluator/evaluator.h"

namespace sparseditto {

class GpuCandidateEvaluator final : public CandidateEvaluator {
 public:
  // `missing_driver` says whether this machine lacks the NVIDIA driver (a test seam); by default
  // gpu::MissingNvidiaDriver (evaluator/gpu/cuda_status.h).
  explicit GpuCandidateEvaluator(Evaluator* evaluator,
                                 std::function<std::optional<std::string>()> missing_driver = nullptr);

  // The runner's error, marked NonRetryable (common/non_retryable.h) where no retry can help: no NVIDIA
  // driver on this machine (checked first, naming what was looked for), a task the runner refuses
  // (FailedPrecondition, InvalidArgument), or a task no arch of which this GPU is (FailedPrecondition,
  // CheckDeviceServesTask, task/arch_populations.h: its population is never timed here). Unavailable
  // (the runner child died) stays retryable.
  absl::Status SetUp(const v1::Task& task) override;
  // The baselines timed again in a new runner process, with no baseline cache (Evaluator::SetupTask
  // with fresh_baselines); errors as SetUp's.
  absl::Status RetimeBaselines(const v1::Task& task) override;

  // Returns before the work is done. Candidates the static screen refuses are not compiled (Evaluate
  // refuses them). A compile the pool could not run is left to Evaluate. A candidate already pending
  // is not submitted again.
  void Prefetch(const v1::Task& task, const std::vector<v1::Candidate>& candidates) override;

  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override;
  // Evaluator::Evaluate with TimingDepth::kScreen, on the prefetched compile like Evaluate; a full
  // Evaluate of the same candidate afterwards compiles from the cache.
  v1::EvalResult EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                                  const v1::ScreenBar& bar) override;
  // From the last successful SetUp's reply (DeviceFactsFromSetup); none before.
  DeviceFacts Device() const override { return device_; }
  // The last successful SetUp's (or RetimeBaselines') reply; empty before.
  v1::SetupTaskReply SetupReply() const override { return setup_; }
  // The cascade with the finalist checks, on the prefetched compile like Evaluate (which it then lets
  // go of: `bench --finalist` prefetches every seed); not prefetched, it compiles (the cache makes a
  // compile seen before cheap).
  v1::EvalResult EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override;

 private:
  absl::Status SetUpWith(const v1::Task& task, bool fresh_baselines);
  v1::EvalResult EvaluateAt(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                            TimingDepth depth, const v1::ScreenBar* bar = nullptr, bool finalist = false);
  Evaluator* evaluator_;              // not owned; outlives this object
  std::function<std::optional<std::string>()> missing_driver_;
  std::unique_ptr<CompilePool> pool_;  // made by the first Prefetch
  // By candidate id, until evaluated: the screen then the compile, in the background. Declared after
  // pool_, so destroyed (waiting for the work) before it.
  std::map<std::string, std::shared_future<absl::StatusOr<CompileResult>>> pending_;
  DeviceFacts device_;
  v1::SetupTaskReply setup_;
};

// The facts a runner's setup reply reports: arch from its arch string ("sm_90a" -> 90), the SM count
// and shared memory sizes from their fields (0 where the reply leaves them out).
DeviceFacts DeviceFactsFromSetup(const v1::SetupTaskReply& reply);

}  // namespace sparseditto
