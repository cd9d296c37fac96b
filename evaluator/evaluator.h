// The evaluator: given a task and a candidate source, answers whether it is allowed, compiles, is
// correct for every input the task allows, how fast it is and against what (DESIGN.md §3.3-3.5).
// Stages 1-2 (screen, compile) run here on the CPU; stages 3-6 in the runner child
// (evaluator/runner_client.h); finalists also run under compute-sanitizer (memcheck, racecheck) on
// the smoke problems, where the tool exists.
// A failed candidate is a typed outcome in the result, never an error of this class.
// Thread-safety: Evaluate and SetupTask must be called from one thread (one GPU); Compile may be
// called from any thread concurrently (it only uses the compile cache, which is safe for that).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "evaluator/compile/compile_result.h"
#include "evaluator/runner_client.h"
#include "runner.pb.h"
#include "task.pb.h"

namespace sparseditto {

struct EvaluatorOptions {
  NvccCompiler::Config compiler;    // nvcc path and compile cache folder (required)
  CompileOptions compile;           // abi_include_dir required; archs are taken from the task
  std::string baseline_cache_dir;   // empty: baselines timed afresh in every process
  RunnerClientOptions runner;       // runner.runner_path required
  v1::RunnerOptions runner_options; // trials, timing budget (defaults in proto/runner.proto)
  std::string compute_sanitizer;    // path; empty: look next to nvcc, else skip the sanitizer stage
  double sanitizer_timeout_seconds = 300;
  // Name prefixes of NVIDIA library kernels (cuBLAS's Hopper GEMMs, "nvjet_sm90_..."). A racecheck run whose every
  // hazard lies wholly inside such kernels is not counted against the candidate (RaceHazardsOnlyInLibraryKernels):
  // a candidate that calls cuBLAS can neither cause nor mend them, and at n = 2048 with K = 11008 they report
  // hundreds (H100, CUDA 13.0, compute-sanitizer 2025.3.1). The run log says so; memcheck and initcheck count as
  // always. Leaving the kernels out of racecheck instead (--kernel-name-exclude) made the tool fail internally there.
  std::vector<std::string> racecheck_library_kernels = {"nvjet_"};
  // Stage 1 on (the default). Off only to test the layers behind it (the judge, the sandbox) with
  // candidates the screen would refuse: the adversarial corpus's "screen": false entries.
  bool static_screen = true;
  // A timing screen's budget per n (Evaluate with TimingDepth::kScreen): so small that the timing
  // stops at the fewest batches it may (3 after the warm-up, problem_run_timing.cc), a few
  // milliseconds of a fast kernel's work per n instead of the wait for a stable spread. Every check
  // (smoke, full correctness, the timed trials' outputs, the recheck, the bracket) runs as in full.
  double screen_timing_seconds = 0.001;
  // Asked by SetupTask before it starts a runner: a sentence when this machine has no NVIDIA driver
  // (gpu::MissingNvidiaDriver), else nullopt. Unset (the default): no look, the runner's own failure
  // says why (tests that run a fake runner on machines with no driver). The command line sets it, so a
  // user without a GPU reads what is missing instead of the runner's dying words.
  std::function<std::optional<std::string>()> missing_driver;
};

// How much timing an evaluation gets: in full (runner_options), or a short screen
// (EvaluatorOptions::screen_timing_seconds; the result says timing_screen).
enum class TimingDepth { kFull, kScreen };

class Evaluator {
 public:
  // Errors: InvalidArgument when a required option is missing or the runner binary does not exist.
  static absl::StatusOr<std::unique_ptr<Evaluator>> Create(EvaluatorOptions options);

  // EvaluatorOptions::static_screen for the evaluations that follow (the corpus test turns it off for
  // the entries that test the layers behind it).
  void set_static_screen(bool on) { options_.static_screen = on; }

  // Materialises the task in the runner and times the baselines (cached for later Evaluate calls).
  // Errors: the runner's (Unavailable: no GPU or the child died; FailedPrecondition: bad task);
  // Unavailable with options.missing_driver's sentence, before any runner starts, when it gives one.
  // After Unavailable, Evaluate still runs the CPU stages and ends at INTERNAL ("GPU stages not run").
  // `fresh_baselines`: the baselines are timed again with no cache (the runner that times them is a
  // new process each time: the confirmation stage's rounds).
  absl::StatusOr<v1::SetupTaskReply> SetupTask(const v1::Task& task, bool fresh_baselines = false);

  // Stage 1 (the static screen, static_screen.h) and the compile options for stage 2; the compile
  // itself can then run anywhere (compiler(), or a CompilePool over it). The screen reads the
  // candidate's spelling, then its host translation unit preprocessed with the task's compile options
  // (NvccCompiler::PreprocessHost, about 0.4 s; remembered per source and archs, so Evaluate does not
  // preprocess again what a caller screened). PermissionDenied: refused (also when preprocessing
  // runs out of time); a source that does not preprocess passes here and fails its compile.
  // Thread-safe.
  absl::Status Screen(const v1::Candidate& candidate, const v1::Task& task) const;
  // EvaluatorOptions::compile with the task's archs and, when the task names a dtype,
  // -DSPARSEDITTO_TASK_DTYPE=<its number> after the configured extra flags: the candidate is built for
  // that dtype only (kernel_abi/sparseditto_kernel.h, SPARSEDITTO_BUILDS_DTYPE); and always
  // -DSPARSEDITTO_TASK_LAYOUT=<the task's layout> (SPARSEDITTO_BUILDS_LAYOUT).
  CompileOptions CompileOptionsFor(const v1::Task& task) const;
  const NvccCompiler& compiler() const { return *compiler_; }

  // The whole cascade. `compiled` may be a compile made elsewhere with CompileOptionsFor(task) (to
  // overlap compiles with GPU work); when null the candidate is screened and compiled here.
  // `check_seed` seeds the B draws. The runner loads a verified copy of the cached library
  // (StagedLibrary), never the cache's file; a cached library that fails its hash check is
  // recompiled. Every text field the candidate could have written (logs, details, notes) is
  // cleaned (common/untrusted_text.h) before the result is returned.
  // `depth`: kScreen times each n briefly (never with `finalist`, which always times in full); with
  // `screen_bar` (not owned; its screen_timing_seconds is replaced by the options') the runner goes on
  // to a full timing in the same evaluation when the screen is near the bar (common/screen_bar.h):
  // the result then says timed_in_full_after_screen, else timing_screen.
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, bool finalist,
                          uint64_t check_seed, const CompileResult* compiled = nullptr,
                          TimingDepth depth = TimingDepth::kFull, const v1::ScreenBar* screen_bar = nullptr);

 private:
  Evaluator(EvaluatorOptions options, std::unique_ptr<NvccCompiler> compiler);
  v1::EvalResult RunCascade(const v1::Task& task, const v1::Candidate& candidate, bool finalist, uint64_t check_seed,
                            const CompileResult* compiled, TimingDepth depth, const v1::ScreenBar* screen_bar);
  // Runs the smoke problems under compute-sanitizer `tool`; a finding fails the result (CRASH).
  void RunSanitizer(const std::string& tool, const v1::Task& task, const v1::Candidate& candidate,
                    const std::string& library, uint64_t check_seed, v1::EvalResult* result);

  EvaluatorOptions options_;
  std::unique_ptr<NvccCompiler> compiler_;
  RunnerClient baseline_runner_;  // lazy module loading: times the baselines in SetupTask
  std::map<std::string, v1::SetupTaskReply> setups_;  // by TaskContextKey
  std::string gpu_unavailable_;  // set when SetupTask found no usable runner/GPU
  mutable absl::Mutex screen_mutex_;
  mutable std::map<std::string, absl::Status> screened_ ABSL_GUARDED_BY(screen_mutex_);  // by SHA-256 of source + archs
  RunnerClient runner_;           // eager module loading: runs candidates
};

}  // namespace sparseditto
