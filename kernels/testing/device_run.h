// Test support for the seeds' GPU tests: one run of a loaded candidate on the device, with the operands
// placed where a test wants them and C's surroundings watched.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/testing/candidate_build.h"

namespace sparseditto::testing {

// Prepares `problem` (its n_values must name n; the problem's host arrays are the caller's), copies `b`
// (problem.dtype values, already in problem.layout's order: B K x n for KN, X = B^T n x K for NK) to the
// device `b_off` values past an aligned allocation, runs at n on a fresh stream into C `c_off` values past
// one (every byte 0xff beforehand: NaN in fp32, fp16 and bf16, so an element left unwritten fails a
// check), and releases the state. Returns C (rows x n values in the layout's order) as floats.
// Errors: FailedPrecondition with prepare's message; Internal on a CUDA error, a nonzero run, or a
// value written within 16 values before or after C (naming which). Not thread-safe (the current device).
absl::StatusOr<std::vector<float>> RunOnDevice(const CandidateLibrary& library, const sd_problem& problem,
                                               const std::vector<float>& b, int64_t n, int b_off, int c_off);

}  // namespace sparseditto::testing
