#include "coordinator/search/gpu_candidate_evaluator.h"

#include <future>
#include <utility>

#include "common/non_retryable.h"
#include "evaluator/gpu/nvidia_driver.h"
#include "task/arch_populations.h"

namespace sparseditto {

GpuCandidateEvaluator::GpuCandidateEvaluator(Evaluator* evaluator,
                                             std::function<std::optional<std::string>()> missing_driver)
    : evaluator_(evaluator),
      missing_driver_(missing_driver ? std::move(missing_driver) : [] { return gpu::MissingNvidiaDriver(); }) {}

absl::Status GpuCandidateEvaluator::SetUp(const v1::Task& task) { return SetUpWith(task, false); }

absl::Status GpuCandidateEvaluator::RetimeBaselines(const v1::Task& task) { return SetUpWith(task, true); }

absl::Status GpuCandidateEvaluator::SetUpWith(const v1::Task& task, bool fresh_baselines) {
  if (std::optional<std::string> missing = missing_driver_()) {
    return NonRetryable(absl::FailedPreconditionError(*missing));
  }
  absl::StatusOr<v1::SetupTaskReply> reply = evaluator_->SetupTask(task, fresh_baselines);
  const absl::Status status = reply.status();
  if (reply.ok()) {
    device_ = DeviceFactsFromSetup(*reply);
    // Never time a population on a GPU of another arch (task/arch_populations.h).
    if (absl::Status s = CheckDeviceServesTask(task, reply->arch(), reply->gpu_name()); !s.ok()) return NonRetryable(s);
    setup_ = *reply;
  }
  if (absl::IsFailedPrecondition(status) || absl::IsInvalidArgument(status)) return NonRetryable(status);
  return status;
}

void GpuCandidateEvaluator::Prefetch(const v1::Task& task, const std::vector<v1::Candidate>& candidates) {
  if (pool_ == nullptr) pool_ = std::make_unique<CompilePool>(&evaluator_->compiler());
  for (const v1::Candidate& c : candidates) {
    if (pending_.contains(c.id())) continue;
    pending_[c.id()] = std::async(std::launch::async, [this, c, task]() -> absl::StatusOr<CompileResult> {
                         // Never compile what the screen refuses; Evaluate then refuses it itself.
                         if (absl::Status s = evaluator_->Screen(c, task); !s.ok()) return s;
                         return pool_->Submit(c.source(), evaluator_->CompileOptionsFor(task)).get();
                       }).share();
  }
}

DeviceFacts DeviceFactsFromSetup(const v1::SetupTaskReply& reply) {
  return {.sm_count = reply.sm_count(),
          .smem_per_block = reply.shared_memory_per_block_optin(),
          .smem_per_sm = reply.shared_memory_per_sm(),
          .arch = ArchNumber(reply.arch())};
}

v1::EvalResult GpuCandidateEvaluator::Evaluate(const v1::Task& task, const v1::Candidate& candidate,
                                               uint64_t check_seed) {
  return EvaluateAt(task, candidate, check_seed, TimingDepth::kFull);
}

v1::EvalResult GpuCandidateEvaluator::EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate,
                                                       uint64_t check_seed, const v1::ScreenBar& bar) {
  return EvaluateAt(task, candidate, check_seed, TimingDepth::kScreen, &bar);
}

v1::EvalResult GpuCandidateEvaluator::EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate,
                                                       uint64_t check_seed) {
  return EvaluateAt(task, candidate, check_seed, TimingDepth::kFull, nullptr, /*finalist=*/true);
}

v1::EvalResult GpuCandidateEvaluator::EvaluateAt(const v1::Task& task, const v1::Candidate& candidate,
                                                 uint64_t check_seed, TimingDepth depth,
                                                 const v1::ScreenBar* bar, bool finalist) {
  auto it = pending_.find(candidate.id());
  if (it == pending_.end()) return evaluator_->Evaluate(task, candidate, finalist, check_seed, nullptr, depth, bar);
  const absl::StatusOr<CompileResult> compiled = it->second.get();  // waits for this candidate only
  pending_.erase(it);
  if (!compiled.ok()) return evaluator_->Evaluate(task, candidate, finalist, check_seed, nullptr, depth, bar);
  return evaluator_->Evaluate(task, candidate, finalist, check_seed, &*compiled, depth, bar);
}

}  // namespace sparseditto
