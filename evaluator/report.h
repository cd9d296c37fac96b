// Presenting an evaluation: the readable report `sparseditto eval` prints, and the artifact files
// (kernel.cu, compile.log, verify.json, benchmark.json, result.json) written beside it.
// Pure formatting plus file writes; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "common/shared_gpu.h"
#include "eval_result.pb.h"
#include "task.pb.h"

namespace sparseditto {

// Several lines: stages and verdict, errors, per-n times against each baseline, fitness, and a warning
// when SharedGpuIdleTrialMs (common/shared_gpu.h) is not 0.
std::string FormatReport(const v1::Task& task, const v1::EvalResult& result);

// The result as JSON (protobuf's JSON mapping, field names as in the proto).
std::string ResultToJson(const google::protobuf::Message& message);

// Writes kernel.cu, compile.log, verify.json (stage, failure, checks, errors), benchmark.json (timings,
// baselines, fitness, prepare time) and result.json (everything) into `dir`, creating it.
// Errors: Unavailable naming the file that could not be written.
absl::Status WriteArtifacts(const std::string& dir, const std::string& source, const v1::EvalResult& result);

}  // namespace sparseditto
