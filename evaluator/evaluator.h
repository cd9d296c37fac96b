// The evaluator: given a task and a candidate source, answers whether it is allowed, compiles, is
// correct for every input the task allows, how fast it is and against what (DESIGN.md §3.3-3.5).
// Stages 1-2 (screen, compile) run here on the CPU; stages 3-6 in the runner child
// (evaluator/runner_client.h); finalists also run under compute-sanitizer (memcheck, racecheck) on
// the smoke problems, where the tool exists.
// A failed candidate is a typed outcome in the result, never an error of this class.
// Thread-safety: Evaluate and SetupTask must be called from one thread (one GPU); Compile may be
// called from any thread concurrently (it only uses the compile cache, which is safe for that).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "evaluator/runner_client.h"
#include "runner.pb.h"
#include "task.pb.h"

namespace sparseditto {

struct EvaluatorOptions {
  CompileOptions compile;           // archs are overridden by the task's arch list
  std::string compile_cache_dir;    // required
  std::string baseline_cache_dir;   // empty: baselines timed afresh in every process
  RunnerClientOptions runner;       // runner.runner_path required
  v1::RunnerOptions runner_options; // trials, timing budget (defaults in proto/runner.proto)
  std::string compute_sanitizer;    // path; empty: look next to nvcc, else skip the sanitizer stage
  double sanitizer_timeout_seconds = 300;
};

class Evaluator {
 public:
  // Errors: InvalidArgument when a required option is missing or the runner binary does not exist.
  static absl::StatusOr<std::unique_ptr<Evaluator>> Create(EvaluatorOptions options);

  // Materialises the task in the runner and times the baselines (cached for later Evaluate calls).
  // Errors: the runner's (Unavailable: no GPU or the child died; FailedPrecondition: bad task).
  absl::StatusOr<v1::SetupTaskReply> SetupTask(const v1::Task& task);

  // Stages 1-2 only. Thread-safe.
  absl::StatusOr<CompileResult> Compile(const v1::Task& task, const v1::Candidate& candidate);

  // The whole cascade. `compiled` may come from Compile (to overlap compiles with GPU work); when
  // null the candidate is compiled here. `check_seed` seeds the B draws.
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, bool finalist,
                          uint64_t check_seed, const CompileResult* compiled = nullptr);

 private:
  explicit Evaluator(EvaluatorOptions options);
  CompileOptions CompileOptionsFor(const v1::Task& task) const;
  // Runs the smoke problems under compute-sanitizer `tool`; a finding fails the result (CRASH).
  void RunSanitizer(const std::string& tool, const v1::Task& task, const v1::Candidate& candidate,
                    const std::string& library, uint64_t check_seed, v1::EvalResult* result);

  EvaluatorOptions options_;
  RunnerClient runner_;
};

}  // namespace sparseditto
