// Presenting an evaluation: the readable report `sparseditto eval` prints, and the artifact files
// (kernel.cu, compile.log, verify.json, benchmark.json, result.json) written beside it.
// Pure formatting plus file writes; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "eval_result.pb.h"
#include "task.pb.h"

namespace sparseditto {

// An idle trial (TimingStats.host_idle_median_ms) slower than this means other work shared the GPU
// while timing: 0.01-0.03 ms on a quiet H200, 0.41-0.42 ms with six evals at once (s9 call 5).
constexpr double kSharedGpuIdleTrialMs = 0.1;

// The largest idle-trial host clock of the result's timings when it is above kSharedGpuIdleTrialMs
// (the GPU was shared: times are not comparable with a quiet GPU's), otherwise 0.
double SharedGpuIdleTrialMs(const v1::EvalResult& result);

// Several lines: stages and verdict, errors, per-n times against each baseline, fitness, and a warning
// when SharedGpuIdleTrialMs is not 0.
std::string FormatReport(const v1::Task& task, const v1::EvalResult& result);

// The result as JSON (protobuf's JSON mapping, field names as in the proto).
std::string ResultToJson(const google::protobuf::Message& message);

// Writes kernel.cu, compile.log, verify.json (stage, failure, checks, errors), benchmark.json (timings,
// baselines, fitness, prepare time) and result.json (everything) into `dir`, creating it.
// Errors: Unavailable naming the file that could not be written.
absl::Status WriteArtifacts(const std::string& dir, const std::string& source, const v1::EvalResult& result);

}  // namespace sparseditto
