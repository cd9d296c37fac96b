// Test code only: the evaluator seam with the REAL compile step (evaluator/compile NvccCompiler, the
// evaluator's compile path) in front of the deterministic fake evaluator, which stands in for the GPU
// stages. A candidate that does not compile gets FAILURE_CATEGORY_COMPILE with the compiler's log and
// detail; one that compiles is scored by the fake, with the compile log attached. Compiles go through
// the compiler's cache (a repeated source compiles once). Counts the compiles. Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/testing/fake_evaluator.h"
#include "evaluator/compile/nvcc_compiler.h"

namespace sparseditto::testing {

class CompilingEvaluator : public CandidateEvaluator {
 public:
  CompilingEvaluator(std::unique_ptr<NvccCompiler> nvcc, CompileOptions options, FakeLandscape landscape)
      : nvcc_(std::move(nvcc)), options_(std::move(options)), fake(std::move(landscape)) {}

  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    absl::StatusOr<CompileResult> compiled = nvcc_->Compile(candidate.source(), options_);
    v1::EvalResult result;
    if (!compiled.ok()) {  // the harness failed, not the candidate
      result.set_stage_reached(v1::EVAL_STAGE_COMPILE);
      result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
      result.set_failure_detail(std::string(compiled.status().message()));
      return result;
    }
    compiled_sources.push_back(candidate.source());
    if (!compiled->ok) {
      result.set_stage_reached(v1::EVAL_STAGE_COMPILE);
      result.set_failure(v1::FAILURE_CATEGORY_COMPILE);
      result.set_failure_detail(compiled->failure);
      result.set_compile_log(compiled->log);
      return result;
    }
    result = fake.Evaluate(candidate);
    result.set_compile_log(compiled->log);
    return result;
  }

 private:
  std::unique_ptr<NvccCompiler> nvcc_;
  CompileOptions options_;

 public:
  FakeEvaluator fake;
  std::vector<std::string> compiled_sources;  // every source handed to nvcc (cache hits included)
};

}  // namespace sparseditto::testing
