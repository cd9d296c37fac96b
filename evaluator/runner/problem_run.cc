#include "evaluator/runner/problem_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_kernels.h"
#include "evaluator/runner/device_output_check.h"
#include "evaluator/runner/harness_kernels.h"
#include "evaluator/runner/output_check.h"
#include "evaluator/runner/step_trace.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
Verdict CrashVerdict(const absl::Status& status, const std::string& what) {
  Verdict v = Verdict::Fail(v1::FAILURE_CATEGORY_CRASH, fmt::format("{}: {}", what, status.message()));
  const cudaError_t device = cudaDeviceSynchronize();
  v.context_lost = IsStickyCudaError(device) || IsStickyCudaError(cudaPeekAtLastError());
  return v;
}

Verdict HarnessVerdict(const absl::Status& status, const std::string& what) {
  Verdict v = CrashVerdict(status, what);
  v.failure = v1::FAILURE_CATEGORY_INTERNAL;
  return v;
}

absl::StatusOr<std::unique_ptr<ProblemRun>> ProblemRun::Create(CandidateHost& host, std::string name,
                                                               const CsrMatrix& matrix,
                                                               const v1::PatternSpec& pattern, v1::Dtype dtype,
                                                               std::vector<int64_t> n_values,
                                                               ReferenceOracle* oracle) {
  ScopedStep step("problem: create (streams, gate, buffers)");
  auto run = std::unique_ptr<ProblemRun>(new ProblemRun);
  run->host_ = &host;
  run->name_ = std::move(name);
  run->matrix_ = &matrix;
  run->pattern_ = pattern;
  run->dtype_ = dtype;
  run->n_values_ = std::move(n_values);
  SD_CUDA_CHECK(cudaStreamCreateWithFlags(&run->judge_stream_, cudaStreamNonBlocking));
  SD_CUDA_CHECK(cudaStreamCreateWithFlags(&run->harness_stream_, cudaStreamNonBlocking));
  SD_ASSIGN_OR_RETURN(run->gate_, StreamGate::Create("stream gate"));
  run->oracle_ = oracle;
  const int64_t max_n = *std::max_element(run->n_values_.begin(), run->n_values_.end());
  const size_t out_bytes = sizeof(float) * matrix.rows * max_n;
  SD_ASSIGN_OR_RETURN(run->ref_, gpu::DeviceBuffer::Allocate(out_bytes, "reference C"));
  SD_ASSIGN_OR_RETURN(run->abs_sum_, gpu::DeviceBuffer::Allocate(out_bytes, "|A||B|"));
  SD_ASSIGN_OR_RETURN(run->c_float_, gpu::DeviceBuffer::Allocate(out_bytes, "C as fp32"));
  SD_ASSIGN_OR_RETURN(run->check_totals_, gpu::DeviceBuffer::Allocate(sizeof(DeviceCheckTotals), "check totals"));
  SD_ASSIGN_OR_RETURN(run->written_flag_, gpu::DeviceBuffer::Allocate(sizeof(unsigned int), "C written flag"));
  return run;
}

ProblemRun::~ProblemRun() {
  ScopedStep step("problem: release");
  // The host unmaps our buffers before they are freed (a dead host has nothing mapped).
  if (prepared_ && host_->alive()) (void)host_->Release();
  if (judge_stream_ != nullptr) cudaStreamDestroy(judge_stream_);
  if (harness_stream_ != nullptr) cudaStreamDestroy(harness_stream_);
}

Verdict ProblemRun::Prepare() {
  ScopedStep step("problem: host prepare");
  auto outcome = host_->Prepare(*matrix_, pattern_, dtype_, n_values_, oracle_->layout());
  if (!outcome.ok()) {
    Verdict v = Verdict::Fail(absl::IsDeadlineExceeded(outcome.status()) ? v1::FAILURE_CATEGORY_TIMEOUT
                                                                          : v1::FAILURE_CATEGORY_CRASH,
                              fmt::format("{}: prepare: {}", name_, outcome.status().message()));
    return v;
  }
  if (outcome->layout_refused) {
    return Verdict::Fail(v1::FAILURE_CATEGORY_REJECTED, fmt::format("{}: prepare: {}", name_, outcome->error));
  }
  prepare_ms_ = outcome->prepare_ms;
  if (outcome->return_code != 0) {
    return Verdict::Fail(v1::FAILURE_CATEGORY_CRASH,
                         fmt::format("{}: prepare: returned {}: {}", name_, outcome->return_code, outcome->error));
  }
  prepared_ = true;
  if (!outcome->ok) return Verdict::Fail(v1::FAILURE_CATEGORY_CRASH, fmt::format("{}: prepare: {}", name_, outcome->error));
  return Verdict();
}

absl::StatusOr<ProblemRun::Buffers*> ProblemRun::BuffersFor(int64_t n) {
  auto it = buffers_.find(n);
  if (it != buffers_.end()) return &it->second;
  ScopedStep step("problem: buffers for a new n (alloc, IPC export)");
  const size_t elem = DtypeBytes(dtype_);
  Buffers buffers;
  SD_ASSIGN_OR_RETURN(buffers.b, gpu::DeviceBuffer::Allocate(elem * matrix_->cols * n, "B"));
  SD_ASSIGN_OR_RETURN(buffers.abs_b, gpu::DeviceBuffer::Allocate(elem * matrix_->cols * n, "|B|"));
  SD_ASSIGN_OR_RETURN(buffers.b_before, gpu::DeviceBuffer::Allocate(elem * matrix_->cols * n, "B as drawn"));
  SD_ASSIGN_OR_RETURN(buffers.c, GuardedBuffer::Allocate(elem * matrix_->rows * n));
  SD_ASSIGN_OR_RETURN(buffers.b_ipc, MakeIpcBuffer(buffers.b.get(), 0, buffers.b.size()));
  SD_ASSIGN_OR_RETURN(buffers.c_ipc, MakeIpcBuffer(buffers.c.allocation(), GuardedBuffer::kGuardBytes,
                                                   buffers.c.payload_bytes()));
  return &buffers_.emplace(n, std::move(buffers)).first->second;
}

Verdict ProblemRun::WarmUp(int64_t n) {
  if (warm_.count(n) != 0) return Verdict();
  ScopedStep step("check: warm-up run (ungated: loads the candidate's modules)");
  auto buffers = BuffersFor(n);
  if (!buffers.ok()) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(buffers.status().message()));
  const std::string what = fmt::format("warm-up run(n={})", n);
  absl::Status s = gpu::CudaStatus(FillUniform((*buffers)->b.get(), matrix_->cols * n, dtype_, 0, false, harness_stream_),
                                   "fill B");
  if (s.ok()) s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "fill B");
  if (s.ok()) s = gpu::CudaStatus(cudaEventRecord(host_->start_event(), judge_stream_), "start event");
  if (!s.ok()) return CrashVerdict(s, name_);
  auto rc = host_->EnqueueRun(n, (*buffers)->b_ipc, (*buffers)->c_ipc);
  if (!rc.ok()) return HostLost(rc.status(), what);
  if (s = gpu::CudaStatus(cudaStreamWaitEvent(judge_stream_, host_->done_event(), 0), "done event"); !s.ok()) {
    return CrashVerdict(s, name_);
  }
  if (Verdict v = WaitJudgeStream(60, what); !v.ok()) return v;
  if (*rc != 0) return Verdict::Fail(v1::FAILURE_CATEGORY_CRASH, fmt::format("{}: {} returned {}", name_, what, *rc));
  warm_.insert(n);
  return Verdict();
}

absl::Status ProblemRun::FillB(int64_t n, uint64_t seed, Buffers* buffers) {
  ScopedStep step("check: fill B and reference");
  const int64_t count = matrix_->cols * n;
  SD_CUDA_CHECK(FillUniform(buffers->b.get(), count, dtype_, seed, false, harness_stream_));
  SD_CUDA_CHECK(FillUniform(buffers->abs_b.get(), count, dtype_, seed, true, harness_stream_));
  SD_RETURN_IF_ERROR(oracle_->Compute(buffers->b.get(), buffers->abs_b.get(), n, ref_.as<float>(),
                                      abs_sum_.as<float>(), harness_stream_));
  SD_CUDA_CHECK(cudaStreamSynchronize(harness_stream_));
  return absl::OkStatus();
}

bool ProblemRun::COutsideStreamWasWritten(const void* c, size_t size) {
  // Give work on other streams (and the host's context its time slices) time to land, then look at C
  // without waiting for the judge's stream: on the device, only a flag comes back.
  ScopedStep step("check: outside-stream look (5 ms sleep)");
  std::this_thread::sleep_for(kOutsideStreamLookDelay);
  unsigned int any = 0;
  if (LaunchAnyByteDiffers(c, size, 0xff, written_flag_.as<unsigned int>(), harness_stream_) != cudaSuccess ||
      cudaMemcpyAsync(&any, written_flag_.get(), sizeof any, cudaMemcpyDeviceToHost, harness_stream_) != cudaSuccess ||
      cudaStreamSynchronize(harness_stream_) != cudaSuccess) {
    return false;  // a fault shows up at the next synchronisation
  }
  return any != 0;
}

Verdict ProblemRun::HostLost(const absl::Status& status, const std::string& what) const {
  Verdict v = Verdict::Fail(absl::IsDeadlineExceeded(status) ? v1::FAILURE_CATEGORY_TIMEOUT : v1::FAILURE_CATEGORY_CRASH,
                            fmt::format("{}: {}: {}", name_, what, status.message()));
  v.context_lost = true;  // our stream may wait for an event the host will never record
  return v;
}

Verdict ProblemRun::WaitJudgeStream(double seconds, const std::string& what) {
  const absl::Status s = WaitWhileHostAlive(judge_stream_, *host_, seconds);
  if (s.ok()) return Verdict();
  if (absl::IsDeadlineExceeded(s) || absl::IsUnavailable(s) || absl::IsAborted(s)) return HostLost(s, what);
  return CrashVerdict(s, name_);
}

Verdict ProblemRun::RunAndRead(int64_t n, Buffers* buffers, std::vector<float>* c_host) {
  if (absl::Status s = gpu::CudaStatus(cudaMemset(buffers->c.payload(), 0xff, buffers->c.payload_bytes()), "fill C");
      !s.ok()) {
    return CrashVerdict(s, name_);
  }
  if (absl::Status s = buffers->c.ResetGuards(); !s.ok()) return CrashVerdict(s, name_);
  cudaDeviceSynchronize();
  // Hold the judge's stream closed, record the start event behind the gate, have the host enqueue its
  // run behind that event, and look at C before opening the gate.
  if (absl::Status s = gate_.Close(judge_stream_, kStreamGateTimeoutNs, "stream gate"); !s.ok()) {
    gate_.Open();  // whether or not the gate was enqueued, it must not hold the stream
    return CrashVerdict(s, name_);
  }
  if (absl::Status s = gpu::CudaStatus(cudaEventRecord(host_->start_event(), judge_stream_), "start event"); !s.ok()) {
    gate_.Open();
    return CrashVerdict(s, name_);
  }
  auto rc = host_->EnqueueRun(n, buffers->b_ipc, buffers->c_ipc);
  const bool written_behind_gate = rc.ok() && COutsideStreamWasWritten(buffers->c.payload(), buffers->c.payload_bytes());
  gate_.Open();
  const std::string what = fmt::format("run(n={})", n);
  if (!rc.ok()) return HostLost(rc.status(), what);
  if (*rc != 0) {
    // The host recorded done regardless; let the stream pass before reporting.
    (void)WaitJudgeStream(10, what);
    return Verdict::Fail(v1::FAILURE_CATEGORY_CRASH, fmt::format("{}: {} returned {}", name_, what, *rc));
  }
  if (absl::Status s = gpu::CudaStatus(cudaStreamWaitEvent(judge_stream_, host_->done_event(), 0), "done event");
      !s.ok()) {
    return CrashVerdict(s, name_);
  }
  if (Verdict v = WaitJudgeStream(60, what); !v.ok()) return v;
  if (written_behind_gate && gate_.ReleasedByHost()) {
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG,
                         fmt::format("{}: n={}: work escaped the given stream: C was written while that stream was "
                                     "held closed", name_, n));
  }
  // Read C now, on a stream that does not wait for anything else: work the candidate left on other
  // streams is not finished for us.
  absl::Status s = ReadOutputAsFloat(buffers->c.payload(), matrix_->rows * n, c_host);
  if (!s.ok()) return CrashVerdict(s, fmt::format("{}: {}", name_, what));
  if (absl::Status guards = buffers->c.CheckGuards(); !guards.ok()) {
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, fmt::format("{}: n={}: {}", name_, n, guards.message()));
  }
  return Verdict();
}

absl::Status ProblemRun::ReadOutputAsFloat(const void* c, int64_t count, std::vector<float>* out) {
  SD_CUDA_CHECK(gpu::LaunchConvertToFloat(c, static_cast<gpu::ElementType>(dtype_), count, c_float_.as<float>(),
                                          harness_stream_));
  if (out != nullptr) {
    out->resize(count);
    SD_CUDA_CHECK(cudaMemcpyAsync(out->data(), c_float_.get(), count * sizeof(float), cudaMemcpyDeviceToHost,
                                  harness_stream_));
  }
  SD_CUDA_CHECK(cudaStreamSynchronize(harness_stream_));
  return absl::OkStatus();
}

Verdict ProblemRun::CheckRun(int64_t n, uint64_t seed, const std::string& label, v1::CorrectnessCheck* check,
                             std::vector<float>* output) {
  check->set_case_name(label);
  check->set_rows(matrix_->rows);
  check->set_cols(matrix_->cols);
  check->set_n(n);
  if (Verdict v = WarmUp(n); !v.ok()) {
    check->set_detail(v.detail);
    return v;
  }
  auto buffers = BuffersFor(n);
  if (!buffers.ok()) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(buffers.status().message()));
  if (absl::Status s = FillB(n, seed, *buffers); !s.ok()) return CrashVerdict(s, name_ + ": reference");
  const size_t b_bytes = (*buffers)->b.size();
  {
    // The judge's own copy of B as drawn (never exported to the host), compared on the device after.
    ScopedStep copy("check: B copied aside (device)");
    absl::Status s = gpu::CudaStatus(cudaMemcpyAsync((*buffers)->b_before.get(), (*buffers)->b.get(), b_bytes,
                                                     cudaMemcpyDeviceToDevice, harness_stream_), "copy B");
    if (s.ok()) s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "copy B");
    if (!s.ok()) return CrashVerdict(s, name_ + ": B");
  }

  std::vector<float> got;
  Verdict verdict = [&] {
    ScopedStep run("check: run and read C");
    return RunAndRead(n, *buffers, output != nullptr ? &got : nullptr);
  }();
  if (!verdict.ok()) {
    check->set_detail(verdict.detail);
    return verdict;
  }
  unsigned int b_changed = 0;
  {
    ScopedStep compare("check: B compared with its copy (device)");
    absl::Status s = gpu::CudaStatus(LaunchBytesDiffer((*buffers)->b.get(), (*buffers)->b_before.get(), b_bytes,
                                                       written_flag_.as<unsigned int>(), harness_stream_), "compare B");
    if (s.ok()) {
      s = gpu::CudaStatus(cudaMemcpyAsync(&b_changed, written_flag_.get(), sizeof b_changed, cudaMemcpyDeviceToHost,
                                          harness_stream_), "compare B");
    }
    if (s.ok()) s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "compare B");
    if (!s.ok()) return CrashVerdict(s, name_ + ": B");
  }
  if (b_changed != 0) {
    check->set_detail("run modified its input B");
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, fmt::format("{}: n={}: run modified its input B", name_, n));
  }
  if (Verdict v = CheckAgainstReference(n, label, check); !v.ok()) return v;
  if (output != nullptr) *output = std::move(got);
  return Verdict();
}

Verdict ProblemRun::CheckAgainstReference(int64_t n, const std::string& label, v1::CorrectnessCheck* check) {
  ScopedStep step("check: compare with the reference (device)");
  const int64_t count = matrix_->rows * n;
  const DeviceTolerance tolerance{OutputEpsilon(dtype_), OutputFloor(dtype_), AccumulationEpsilon(matrix_->cols)};
  DeviceCheckTotals totals{};
  absl::Status s = gpu::CudaStatus(LaunchOutputCheck(c_float_.as<float>(), ref_.as<float>(), abs_sum_.as<float>(), count,
                                                     tolerance, check_totals_.as<DeviceCheckTotals>(), harness_stream_),
                                   "output check");
  if (s.ok()) {
    s = gpu::CudaStatus(cudaMemcpyAsync(&totals, check_totals_.get(), sizeof(totals), cudaMemcpyDeviceToHost,
                                        harness_stream_), "check totals");
  }
  if (s.ok()) s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "output check");
  if (!s.ok()) return CrashVerdict(s, fmt::format("{}: n={}", label, n));
  OutputCheckResult r;
  r.max_abs_error = totals.max_abs_error;
  r.worst_ratio = totals.worst_ratio;
  r.bad_elements = static_cast<int64_t>(totals.bad_elements);
  r.non_finite = static_cast<int64_t>(totals.non_finite);
  r.max_rel_error = totals.ref_squares > 0 ? std::sqrt(totals.error_squares / totals.ref_squares)
                                           : std::sqrt(totals.error_squares);
  r.passed = r.bad_elements == 0;
  if (!r.passed) {
    // The first bad element's three values, for the same message as CheckOutput's.
    const int64_t i = static_cast<int64_t>(std::min<unsigned long long>(totals.first_bad, count - 1));
    float got = 0, want = 0, abs_sum = 0;
    cudaMemcpy(&got, c_float_.as<float>() + i, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&want, ref_.as<float>() + i, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&abs_sum, abs_sum_.as<float>() + i, sizeof(float), cudaMemcpyDeviceToHost);
    r.detail = DescribeWrongOutput(r.bad_elements, count, r.non_finite, i, n, got, want,
                                   ElementTolerance(want, abs_sum, dtype_, matrix_->cols), oracle_->layout());
  }
  check->set_max_abs_error(r.max_abs_error);
  check->set_max_rel_error(r.max_rel_error);
  check->set_tolerance(r.worst_ratio);  // worst error / tolerance; passing needs <= 1
  check->set_passed(r.passed);
  check->set_detail(r.detail);
  if (!r.passed) return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, fmt::format("{}: n={}: {}", label, n, r.detail));
  return Verdict();
}

Verdict ProblemRun::CheckDeterminism(int64_t n, uint64_t seed, v1::CorrectnessCheck* check) {
  std::vector<float> first;
  Verdict v = CheckRun(n, seed, fmt::format("determinism/n={}/first", n), check, &first);
  if (!v.ok()) return v;
  std::vector<float> second;
  v = CheckRun(n, seed, fmt::format("determinism/n={}/second", n), check, &second);
  if (!v.ok()) {
    v.detail = "nondeterministic: a second run on the same input is wrong: " + v.detail;
    return v;
  }
  int64_t differ = 0;
  for (size_t i = 0; i < first.size(); ++i) differ += std::memcmp(&first[i], &second[i], sizeof(float)) != 0;
  check->set_detail(fmt::format("two runs on the same input: {} of {} elements differ bit for bit (all within "
                                "tolerance)", differ, first.size()));
  return Verdict();
}

}  // namespace sparseditto
