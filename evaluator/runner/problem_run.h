// One problem (a matrix, its declared pattern and n values) handed to a candidate that runs in its own
// host process (CandidateHost), with the checks of DESIGN.md §3.4 around every call, all made here,
// by the judge, on buffers the judge allocated and reads itself: per run a fresh B from a seed the
// candidate never sees, C filled with NaN and guarded on both sides, B unchanged, the result read
// back as soon as the host's run has signalled done (work left on other streams is not waited for)
// and judged against the fp32 cuBLAS reference. Every checked run is held behind the judge's gate: the
// host's stream waits for an event the judge records behind it, so if C changes before the gate opens,
// the work did not wait for its stream. Buffers for each n are made once and kept, so the re-check
// after timing uses the very addresses the timing used. The first run at each n is a warm-up, neither
// gated nor judged: the host loads modules lazily (CandidateHost), and a kernel's first launch loads
// its module, which waits for the host's stream; behind a closed gate it would stall until the gate
// timed out and the check behind it would see nothing. Timing: Time() (problem_run_timing.cc).
// Not thread-safe; the current CUDA device is used.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"
#include "evaluator/gpu/device_buffer.h"
#include "evaluator/runner/bracket.h"
#include "evaluator/runner/candidate_host.h"
#include "evaluator/runner/timing.h"
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
// The same for the judge's own steps before it calls the candidate in a problem (its reference, its
// buffers): INTERNAL, not the candidate's fault (the host's context cannot break the judge's), with
// context_lost when the judge's own context reports a sticky error.
Verdict HarnessVerdict(const absl::Status& status, const std::string& what);

class ProblemRun {
 public:
  // Does not call the candidate yet. `host`, `matrix` and `oracle` (the reference of this matrix in
  // this dtype, TaskContext::Oracle) must outlive this object. The candidate's B and C lie in the
  // oracle's layout (the task's): B is filled, C poisoned, read and judged as that layout says.
  static absl::StatusOr<std::unique_ptr<ProblemRun>> Create(CandidateHost& host, std::string name,
                                                            const CsrMatrix& matrix, const v1::PatternSpec& pattern,
                                                            v1::Dtype dtype, std::vector<int64_t> n_values,
                                                            ReferenceOracle* oracle);
  ~ProblemRun();  // releases the candidate's state in the host if prepared

  // Sends the matrix to the host and calls prepare there. (The host gets a copy: the judge's matrix is
  // out of the candidate's reach. Reads of memory the candidate never wrote are left to
  // compute-sanitizer initcheck for finalists.) REJECTED when the library's sparseditto_layouts()
  // lacks the oracle's layout (prepare is then not called).
  Verdict Prepare();
  double prepare_ms() const { return prepare_ms_; }

  // One checked run for width n with B drawn from `seed`, recorded in *check; the output (as fp32)
  // into *output when given.
  Verdict CheckRun(int64_t n, uint64_t seed, const std::string& label, v1::CorrectnessCheck* check,
                   std::vector<float>* output = nullptr);

  // Runs twice on the same B (seed). Each run must pass the tolerance; outputs that differ only in
  // rounding (atomics, split-K) pass, and how many elements differ bit for bit goes into check->detail.
  Verdict CheckDeterminism(int64_t n, uint64_t seed, v1::CorrectnessCheck* check);

  // Times width n (problem_run_timing.cc): batches of trials on fresh B and poisoned C, each batch
  // bracketed by the judge's own stamps; the host's trial times are believed only when they fit the
  // bracket, and sampled outputs of timed trials are checked. The verdict is not ok (REJECTED, WRONG or
  // CRASH, with the reason) when they do not; *stats is filled when it is.
  // REQUIRES: set_calibration first.
  // The L2 flush between trials is the host's, on the judge's flush buffer (CandidateHost::Start).
  Verdict Time(int64_t n, uint64_t seed, const v1::RunnerOptions& options, v1::TimingStats* stats);
  // The judge's bracket calibration (bracket.h) that Time checks the host's claims with; not owned.
  void set_calibration(const BracketCalibration* calibration) { calibration_ = calibration; }

 private:
  struct Buffers {
    gpu::DeviceBuffer b, abs_b;
    gpu::DeviceBuffer b_before;  // the judge's copy of B before a checked run: B must be unchanged after
    GuardedBuffer c;
    v1::IpcBuffer b_ipc, c_ipc;  // b and c's payload as the host is told about them
  };
  ProblemRun() = default;
  absl::StatusOr<Buffers*> BuffersFor(int64_t n);
  // Runs the candidate once at n on the buffers for n, open (no gate) and unjudged, unless done for
  // this n already: CheckRun and Time call it first. A failure is the candidate's verdict as in
  // RunAndRead (CRASH, TIMEOUT).
  Verdict WarmUp(int64_t n);
  absl::Status FillB(int64_t n, uint64_t seed, Buffers* buffers);
  // Runs the candidate at n and takes C as fp32 into c_float_ on the device (and into *c_host when
  // given: the determinism check compares two runs bit for bit).
  Verdict RunAndRead(int64_t n, Buffers* buffers, std::vector<float>* c_host);
  // True when any byte of C's payload is no longer the NaN fill (read on the harness stream).
  bool COutsideStreamWasWritten(const void* c, size_t bytes);
  // The host died, hung or lost its stream during `what`: TIMEOUT for a deadline, else CRASH, always
  // with context_lost (the judge's stream may wait for an event the host will never record).
  Verdict HostLost(const absl::Status& status, const std::string& what) const;
  // Waits for the judge's stream (which waits for the host's done event) at most `seconds`.
  Verdict WaitJudgeStream(double seconds, const std::string& what);
  // `count` outputs of the problem's dtype at `c`, as fp32 into c_float_, on the harness stream (which
  // waits for nothing else); then into *out when given.
  absl::Status ReadOutputAsFloat(const void* c, int64_t count, std::vector<float>* out);
  // Judges c_float_ (width n, as ReadOutputAsFloat left it) against the reference last computed into
  // ref_ and abs_sum_, on the device (device_output_check.h): only the totals come back.
  Verdict CheckAgainstReference(int64_t n, const std::string& label, v1::CorrectnessCheck* check);

  CandidateHost* host_ = nullptr;
  std::string name_;
  const CsrMatrix* matrix_ = nullptr;
  v1::PatternSpec pattern_;
  v1::Dtype dtype_ = v1::DTYPE_FP32;
  std::vector<int64_t> n_values_;
  cudaStream_t judge_stream_ = nullptr;    // the gate, the start event, the wait for done, the stamps
  cudaStream_t harness_stream_ = nullptr;  // non-blocking: reads C without waiting for anything else
  ReferenceOracle* oracle_ = nullptr;  // TaskContext's
  std::map<int64_t, Buffers> buffers_;
  std::set<int64_t> warm_;  // the n values WarmUp has run
  struct TimedBuffers {  // Time()'s pairs for one n, and its scratch for the checks
    std::vector<gpu::DeviceBuffer> slabs;  // the allocations the pairs are slices of
    std::vector<void*> b, c;               // pair i's B and C, in slabs
    std::vector<v1::IpcBuffer> b_ipc, c_ipc;
    gpu::DeviceBuffer fresh, abs_b;
    // Copies of the outputs picked for a check, kept while the next batch refills `c`: they are
    // checked while that batch waits behind the gate.
    std::vector<gpu::DeviceBuffer> picked;
  };
  std::map<int64_t, TimedBuffers> timed_;
  gpu::DeviceBuffer ref_, abs_sum_, c_float_;
  gpu::DeviceBuffer check_totals_;  // a DeviceCheckTotals
  gpu::DeviceBuffer written_flag_;  // COutsideStreamWasWritten's answer (LaunchAnyByteDiffers)
  StreamGate gate_;  // holds judge_stream_ (and so the host's stream) closed while a run is enqueued
  const BracketCalibration* calibration_ = nullptr;
  bool prepared_ = false;
  double prepare_ms_ = 0;
};

}  // namespace sparseditto
