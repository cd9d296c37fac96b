#include "evaluator/runner/task_context.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "evaluator/gpu/baseline.h"
#include "evaluator/gpu/baseline_cache_key.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_buffer.h"
#include "evaluator/runner/harness_kernels.h"
#include "common/status_format.h"
#include "evaluator/gpu/baseline_cache.h"
#include "fmt/format.h"
#include "task/task_matrix.h"

namespace sparseditto {

absl::StatusOr<std::unique_ptr<TaskContext>> TaskContext::Create(const v1::Task& task) {
  auto context = std::unique_ptr<TaskContext>(new TaskContext);
  context->task_ = task;
  SD_ASSIGN_OR_RETURN(context->matrix_, MaterializeTaskMatrix(task));
  SD_ASSIGN_OR_RETURN(context->smoke_cases_,
                      MakeSmokeCases(task, context->matrix_.rows, context->matrix_.cols, task.seed() + 1000));
  return context;
}

absl::StatusOr<std::map<int64_t, v1::BaselineList>> TaskContext::Baselines(const v1::RunnerOptions& options,
                                                                           L2Flusher& flusher,
                                                                           const std::string& gpu_name) {
  if (baselines_) return *baselines_;
  std::map<int64_t, v1::BaselineList> result;
  const std::vector<int64_t> n_values(task_.n().begin(), task_.n().end());
  cudaStream_t stream = nullptr;
  SD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t elem = DtypeBytes(task_.dtype());
  const uint64_t fingerprint = gpu::MatrixFingerprint(matrix_);
  for (auto& baseline : gpu::MakeBaselines(task_.pattern(), task_.dtype())) {
    bool prepared = false;
    absl::Status prepare_status;
    for (int64_t n : n_values) {
      v1::BaselineTime* entry = result[n].add_baselines();
      entry->set_name(baseline->name());
      const std::string key = gpu::BaselineCacheKey(fingerprint, task_.dtype(), n, gpu_name, baseline->name(),
                                                    task_.layout());
      // Written by this trusted process only, hash-checked on use (evaluator/gpu/baseline_cache.h).
      if (auto cached = gpu::LookupCachedBaseline(options.baseline_cache_dir(), key)) {
        *entry = *cached;
        continue;
      }
      if (!prepared) {
        prepare_status = baseline->Prepare(matrix_, task_.dtype(), task_.pattern(), n_values, task_.layout());
        prepared = true;
      }
      if (!prepare_status.ok()) {
        entry->set_available(false);
        entry->set_note(std::string(prepare_status.message()));
        continue;  // not cached: a library may be present next time
      }
      SD_ASSIGN_OR_RETURN(auto b, gpu::DeviceBuffer::Allocate(elem * matrix_.cols * n, "baseline B"));
      SD_ASSIGN_OR_RETURN(auto c, gpu::DeviceBuffer::Allocate(elem * matrix_.rows * n, "baseline C"));
      SD_CUDA_CHECK(FillUniform(b.get(), matrix_.cols * n, task_.dtype(), 12345 + n, false, stream));
      auto timing = TimeLaunches([&](cudaStream_t s) { return baseline->Run(b.get(), c.get(), n, s); }, stream, n,
                                 flusher, options);
      if (!timing.ok()) {
        entry->set_available(false);
        entry->set_note(fmt::format("failed while timing: {}", timing.status().message()));
        continue;
      }
      entry->set_available(true);
      entry->set_note(baseline->note());
      *entry->mutable_timing() = *timing;
      if (absl::Status stored = gpu::StoreCachedBaseline(options.baseline_cache_dir(), key, *entry); !stored.ok()) {
        fmt::print(stderr, "sparseditto-runner: warning: baseline cache: {}\n", stored.message());
      }
    }
  }
  cudaStreamDestroy(stream);
  baselines_ = result;
  return result;
}

absl::StatusOr<ReferenceOracle*> TaskContext::Oracle(const std::string& problem, const CsrMatrix& matrix) {
  auto it = oracles_.find(problem);
  if (it != oracles_.end()) return it->second.get();
  absl::StatusOr<std::unique_ptr<ReferenceOracle>> oracle = ReferenceOracle::Create(matrix, task_.dtype(), task_.layout());
  if (!oracle.ok()) return oracle.status();
  return oracles_.emplace(problem, *std::move(oracle)).first->second.get();
}

absl::StatusOr<const SharedMatrixFile*> TaskContext::SharedMatrix() {
  if (shared_matrix_ == nullptr) {
    auto file = SharedMatrixFile::Create(matrix_);
    if (!file.ok()) return file.status();
    shared_matrix_ = *std::move(file);
  }
  return shared_matrix_.get();
}

}  // namespace sparseditto
