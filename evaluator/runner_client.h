// The evaluator's side of the runner child (evaluator/runner/runner_main.cc): starts it with a clean
// environment and limits, sends requests, reads events under per-stage deadlines and a memory limit,
// and turns a child that dies, hangs or faults into a typed result. A child that faulted, timed out
// or died is replaced before the next request; otherwise one child serves many candidates (CUDA
// context start-up is costly), which is safe because every verdict is decided inside one request
// and a faulted child never serves another.
// Not thread-safe: one RunnerClient per GPU, driven by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/subprocess.h"
#include "eval_result.pb.h"
#include "runner.pb.h"

namespace sparseditto {

struct RunnerClientOptions {
  std::string runner_path;  // the sparseditto-runner binary; required
  // Wall-time limit of each stage; a stage that overruns ends as TIMEOUT. Timing gets this plus
  // (max_timing_seconds + 5) per n.
  double stage_timeout_seconds = 60;
  double setup_timeout_seconds = 900;   // materialising the matrix and timing the baselines
  int64_t max_resident_bytes = int64_t{64} << 30;  // host memory of the child; beyond: CRASH
  int64_t max_log_bytes = 1 << 20;      // candidate output kept per stream
  // Our variables the child may see (everything else is dropped: no inherited secrets).
  // SPARSEDITTO_HOST_SANDBOX: the candidate host's layers (evaluator/runner/candidate_host.h);
  // SPARSEDITTO_MAX_BATCH_TRIALS: a lower cap on timed trials per bracket (problem_run_timing.cc);
  // SPARSEDITTO_RUNNER_TRACE: where the judge's steps are summed per candidate (runner/step_trace.h).
  std::vector<std::string> inherit_variables = {"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "PATH",
                                                "NVIDIA_TF32_OVERRIDE", "SPARSEDITTO_HOST_SANDBOX",
                                                "SPARSEDITTO_MAX_BATCH_TRIALS", "SPARSEDITTO_RUNNER_TRACE"};
  // CUDA_MODULE_LOADING=EAGER: every kernel of a candidate is loaded at dlopen, so a first launch
  // never stalls behind the stream gate (evaluator/runner/problem_run.h). Off for a child that only
  // times baselines: eager loading of cuSPARSELt's thousands of kernels took minutes on the H200.
  bool eager_module_loading = true;
  // Set: the child's CUDA_VISIBLE_DEVICES (e.g. "1"), so that it sees one GPU of several, as its
  // device 0 (`sparseditto search --gpus`: one evaluator per GPU). Empty: ours, inherited.
  std::string cuda_visible_devices;
  // Set: other runners share this GPU (`sparseditto search --per-gpu K`): the child's
  // SPARSEDITTO_GPU_SHARE_DIR, where the runners of one GPU keep the lock that gives each timing the
  // GPU to itself (evaluator/runner/gpu_share.h). Must exist. Empty: this runner's GPU alone.
  std::string gpu_share_dir;
  // On destruction a healthy child is asked to leave (its request pipe is closed; the runner exits
  // at end of input) and given this long before it is killed, so a wrapper around the runner (a
  // profiler such as ncu, which writes its report when its target exits) can finish.
  double exit_grace_seconds = 5;
};

class RunnerClient {
 public:
  explicit RunnerClient(RunnerClientOptions options) : options_(std::move(options)) {}
  // Ends a healthy child gracefully (RunnerClientOptions::exit_grace_seconds), then kills what is left.
  ~RunnerClient();
  RunnerClient(const RunnerClient&) = delete;
  RunnerClient& operator=(const RunnerClient&) = delete;

  // Materialises the task in the child and times its baselines. Errors: Unavailable when the child
  // cannot start or dies (the message carries its output), DeadlineExceeded, or the child's own
  // error (FailedPrecondition with its message).
  absl::StatusOr<v1::SetupTaskReply> SetupTask(const v1::SetupTaskRequest& request);

  // Runs the GPU stages for one candidate. Never fails: a dead or hung child becomes a CRASH or
  // TIMEOUT result at the stage it had reached, with its output in run_log.
  v1::EvalResult Evaluate(const v1::EvaluateRequest& request);

  // Kills the child (if any); the next request starts a new one.
  void Reset() { child_.reset(); }

 private:
  absl::Status EnsureChild();
  absl::Status Send(const v1::RunnerRequest& request);
  // Reads one event; DeadlineExceeded / ResourceExhausted (memory) / Unavailable (child gone).
  absl::StatusOr<v1::RunnerEvent> ReadEvent(Deadline deadline);
  std::string ChildLogSince(size_t stdout_offset, size_t stderr_offset) const;
  double StageSeconds(v1::EvalStage stage, const v1::EvaluateRequest& request) const;

  RunnerClientOptions options_;
  std::unique_ptr<ChildProcess> child_;
};

}  // namespace sparseditto
