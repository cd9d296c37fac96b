// What the runner keeps per task across candidates: the materialised matrix, the smoke cases, and
// the baseline timings (computed once; also cached on disk when a cache folder is given, keyed by
// matrix, n, dtype and GPU). Not thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <optional>
#include <string>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"
#include "evaluator/runner/reference_oracle.h"
#include "evaluator/runner/shared_matrix.h"
#include "evaluator/runner/smoke_cases.h"
#include "evaluator/runner/timing.h"
#include "matrix/csr_matrix.h"
#include "runner.pb.h"
#include "task.pb.h"

namespace sparseditto {

class TaskContext {
 public:
  // Errors: those of MaterializeTaskMatrix and MakeSmokeCases.
  static absl::StatusOr<std::unique_ptr<TaskContext>> Create(const v1::Task& task);

  const v1::Task& task() const { return task_; }
  const CsrMatrix& matrix() const { return matrix_; }
  const std::vector<SmokeCase>& smoke_cases() const { return smoke_cases_; }

  // The reference of one of this task's problems ("task", or a smoke case's name), made on first use
  // and kept for every later candidate: densifying A and starting cuBLAS once per task, not once per
  // problem of every evaluation (about 30 ms each on the H200). Safe to share: its device memory is the
  // judge's and never exported to a candidate host (only B and C are, ProblemRun). `matrix` must be
  // the one the name stands for. Owned here. Errors: ReferenceOracle::Create's.
  absl::StatusOr<ReferenceOracle*> Oracle(const std::string& problem, const CsrMatrix& matrix);

  // matrix() in a sealed memory file that every candidate host of this task maps (CandidateHostOptions.
  // task_matrix) instead of being sent its own copy; written on first use, owned here. Errors:
  // SharedMatrixFile::Create's.
  absl::StatusOr<const SharedMatrixFile*> SharedMatrix();

  // Every applicable baseline timed at every n of the task, by n. A baseline that does not apply or
  // whose library is absent is listed with available = false and the reason. Errors: CUDA failures
  // of the harness itself.
  absl::StatusOr<std::map<int64_t, v1::BaselineList>> Baselines(const v1::RunnerOptions& options, L2Flusher& flusher,
                                                                const std::string& gpu_name);

 private:
  TaskContext() = default;

  v1::Task task_;
  CsrMatrix matrix_;
  std::vector<SmokeCase> smoke_cases_;
  std::optional<std::map<int64_t, v1::BaselineList>> baselines_;
  std::map<std::string, std::unique_ptr<ReferenceOracle>> oracles_;
  std::unique_ptr<SharedMatrixFile> shared_matrix_;
};

}  // namespace sparseditto
