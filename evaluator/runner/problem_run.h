// One problem (a matrix, its declared pattern and n values) handed to a loaded candidate, with the
// checks of DESIGN.md §3.4 around every call: A unchanged by prepare; per run a fresh B from a seed
// the candidate never sees, C filled with NaN and guarded on both sides, B unchanged, the result read
// back as soon as the candidate's stream is done (work left on other streams is not waited for) and
// judged against the fp32 cuBLAS reference. Every checked run is made behind a gate kernel that holds
// the candidate's stream closed: if C changes before the gate opens, the work ran on another stream. Buffers for each n are made once and kept, so the re-check
// after timing uses the very addresses the timing used.
// Not thread-safe; the current CUDA device is used.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"
#include "evaluator/gpu/device_buffer.h"
#include "evaluator/runner/candidate_library.h"
#include "evaluator/runner/guarded_buffer.h"
#include "evaluator/runner/reference_oracle.h"
#include "evaluator/runner/stream_gate.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

// How a step ended for the candidate. A harness failure (not the candidate's fault) is INTERNAL.
struct Verdict {
  v1::FailureCategory failure = v1::FAILURE_CATEGORY_NONE;
  std::string detail;
  bool context_lost = false;  // a sticky CUDA error: the process must be replaced

  bool ok() const { return failure == v1::FAILURE_CATEGORY_NONE; }
  static Verdict Fail(v1::FailureCategory category, std::string detail) { return {category, std::move(detail), false}; }
};

// Turns a non-OK status from code that ran after the candidate into a verdict: CRASH, with
// context_lost when the device reports a sticky error.
Verdict CrashVerdict(const absl::Status& status, const std::string& what);

class ProblemRun {
 public:
  // Does not call the candidate yet. `matrix` must outlive this object.
  static absl::StatusOr<std::unique_ptr<ProblemRun>> Create(const CandidateLibrary& library, std::string name,
                                                            const CsrMatrix& matrix, const v1::PatternSpec& pattern,
                                                            v1::Dtype dtype, std::vector<int64_t> n_values,
                                                            cudaStream_t candidate_stream);
  ~ProblemRun();  // releases the candidate's state if prepared

  // Calls prepare with copies of the matrix arrays and checks the originals are unchanged. (Reads of
  // memory the candidate never wrote are left to compute-sanitizer initcheck for finalists: freshly
  // allocated device memory was measured to come back zeroed, so poisoning freed memory does not work.)
  Verdict Prepare();
  double prepare_ms() const { return prepare_ms_; }

  // One checked run for width n with B drawn from `seed`, recorded in *check; the output (as fp32)
  // into *output when given.
  Verdict CheckRun(int64_t n, uint64_t seed, const std::string& label, v1::CorrectnessCheck* check,
                   std::vector<float>* output = nullptr);

  // Runs twice on the same B (seed). Each run must pass the tolerance; outputs that differ only in
  // rounding (atomics, split-K) pass, and how many elements differ bit for bit goes into check->detail.
  Verdict CheckDeterminism(int64_t n, uint64_t seed, v1::CorrectnessCheck* check);

  // The timed launch for width n: uses the same buffers as CheckRun (B as last filled).
  absl::Status Launch(int64_t n, cudaStream_t stream);

 private:
  struct Buffers {
    gpu::DeviceBuffer b, abs_b;
    GuardedBuffer c;
  };
  ProblemRun() = default;
  absl::StatusOr<Buffers*> BuffersFor(int64_t n);
  absl::Status FillB(int64_t n, uint64_t seed, Buffers* buffers);
  Verdict RunAndRead(int64_t n, Buffers* buffers, std::vector<float>* c_host);
  // True when any byte of C's payload is no longer the NaN fill (read on the harness stream).
  bool COutsideStreamWasWritten(const GuardedBuffer& c);

  const CandidateLibrary* library_ = nullptr;
  std::string name_;
  const CsrMatrix* matrix_ = nullptr;
  v1::PatternSpec pattern_;
  v1::Dtype dtype_ = v1::DTYPE_FP32;
  std::vector<int64_t> n_values_;
  cudaStream_t candidate_stream_ = nullptr;
  cudaStream_t harness_stream_ = nullptr;  // non-blocking: never waits for the candidate's other streams
  std::unique_ptr<ReferenceOracle> oracle_;
  std::map<int64_t, Buffers> buffers_;
  gpu::DeviceBuffer ref_, abs_sum_, c_float_;
  StreamGate gate_;  // holds candidate_stream_ closed during each checked run
  void* state_ = nullptr;
  bool prepared_ = false;
  double prepare_ms_ = 0;
};

}  // namespace sparseditto
