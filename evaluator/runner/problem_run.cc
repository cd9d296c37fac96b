#include "evaluator/runner/problem_run.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_kernels.h"
#include "evaluator/runner/harness_kernels.h"
#include "evaluator/runner/output_check.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
Verdict CrashVerdict(const absl::Status& status, const std::string& what) {
  Verdict v = Verdict::Fail(v1::FAILURE_CATEGORY_CRASH, fmt::format("{}: {}", what, status.message()));
  const cudaError_t device = cudaDeviceSynchronize();
  v.context_lost = IsStickyCudaError(device) || IsStickyCudaError(cudaPeekAtLastError());
  return v;
}

absl::StatusOr<std::unique_ptr<ProblemRun>> ProblemRun::Create(const CandidateLibrary& library, std::string name,
                                                               const CsrMatrix& matrix,
                                                               const v1::PatternSpec& pattern, v1::Dtype dtype,
                                                               std::vector<int64_t> n_values,
                                                               cudaStream_t candidate_stream) {
  auto run = std::unique_ptr<ProblemRun>(new ProblemRun);
  run->library_ = &library;
  run->name_ = std::move(name);
  run->matrix_ = &matrix;
  run->pattern_ = pattern;
  run->dtype_ = dtype;
  run->n_values_ = std::move(n_values);
  run->candidate_stream_ = candidate_stream;
  SD_CUDA_CHECK(cudaStreamCreateWithFlags(&run->harness_stream_, cudaStreamNonBlocking));
  SD_ASSIGN_OR_RETURN(run->gate_, StreamGate::Create("stream gate"));
  SD_ASSIGN_OR_RETURN(run->oracle_, ReferenceOracle::Create(matrix, dtype));
  const int64_t max_n = *std::max_element(run->n_values_.begin(), run->n_values_.end());
  const size_t out_bytes = sizeof(float) * matrix.rows * max_n;
  SD_ASSIGN_OR_RETURN(run->ref_, gpu::DeviceBuffer::Allocate(out_bytes, "reference C"));
  SD_ASSIGN_OR_RETURN(run->abs_sum_, gpu::DeviceBuffer::Allocate(out_bytes, "|A||B|"));
  SD_ASSIGN_OR_RETURN(run->c_float_, gpu::DeviceBuffer::Allocate(out_bytes, "C as fp32"));
  return run;
}

ProblemRun::~ProblemRun() {
  if (prepared_) library_->release(state_);
  if (harness_stream_ != nullptr) cudaStreamDestroy(harness_stream_);
}

Verdict ProblemRun::Prepare() {
  // The candidate gets copies; the originals prove it left them alone.
  std::vector<int32_t> offsets = matrix_->row_offsets, cols = matrix_->col_indices;
  std::vector<float> values = matrix_->values;
  sd_problem problem{};
  problem.abi_version = SPARSEDITTO_ABI_VERSION;
  problem.dtype = dtype_;
  problem.rows = matrix_->rows;
  problem.cols = matrix_->cols;
  problem.nnz = matrix_->nnz();
  problem.pattern = {pattern_.family(), static_cast<float>(pattern_.sparsity()), pattern_.block_rows(),
                     pattern_.block_cols(), pattern_.n(), pattern_.m(), pattern_.half_bandwidth(),
                     pattern_.num_blocks()};
  problem.row_offsets = offsets.data();
  problem.col_indices = cols.data();
  problem.values = values.data();
  problem.n_values = n_values_.data();
  problem.num_n_values = static_cast<int32_t>(n_values_.size());
  cudaGetDevice(&problem.device);

  char error[1024] = {0};
  const auto start = std::chrono::steady_clock::now();
  const int rc = library_->prepare(&problem, &state_, error, sizeof(error) - 1);
  const cudaError_t sync = cudaDeviceSynchronize();
  prepare_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (rc != 0) {
    return CrashVerdict(absl::InternalError(fmt::format("returned {}: {}", rc, error)), name_ + ": prepare");
  }
  prepared_ = true;
  if (sync != cudaSuccess) return CrashVerdict(gpu::CudaStatus(sync, "after prepare"), name_ + ": prepare");
  if (offsets != matrix_->row_offsets || cols != matrix_->col_indices ||
      std::memcmp(values.data(), matrix_->values.data(), values.size() * sizeof(float)) != 0) {
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, name_ + ": prepare modified the matrix it was given (A)");
  }
  return Verdict();
}

absl::StatusOr<ProblemRun::Buffers*> ProblemRun::BuffersFor(int64_t n) {
  auto it = buffers_.find(n);
  if (it != buffers_.end()) return &it->second;
  const size_t elem = DtypeBytes(dtype_);
  Buffers buffers;
  SD_ASSIGN_OR_RETURN(buffers.b, gpu::DeviceBuffer::Allocate(elem * matrix_->cols * n, "B"));
  SD_ASSIGN_OR_RETURN(buffers.abs_b, gpu::DeviceBuffer::Allocate(elem * matrix_->cols * n, "|B|"));
  SD_ASSIGN_OR_RETURN(buffers.c, GuardedBuffer::Allocate(elem * matrix_->rows * n));
  return &buffers_.emplace(n, std::move(buffers)).first->second;
}

absl::Status ProblemRun::FillB(int64_t n, uint64_t seed, Buffers* buffers) {
  const int64_t count = matrix_->cols * n;
  SD_CUDA_CHECK(FillUniform(buffers->b.get(), count, dtype_, seed, false, harness_stream_));
  SD_CUDA_CHECK(FillUniform(buffers->abs_b.get(), count, dtype_, seed, true, harness_stream_));
  SD_RETURN_IF_ERROR(oracle_->Compute(buffers->b.get(), buffers->abs_b.get(), n, ref_.as<float>(),
                                      abs_sum_.as<float>(), harness_stream_));
  SD_CUDA_CHECK(cudaStreamSynchronize(harness_stream_));
  return absl::OkStatus();
}

bool ProblemRun::COutsideStreamWasWritten(const GuardedBuffer& c) {
  // Give work on other streams time to land, then read C without waiting for the candidate's stream.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<unsigned char> bytes(c.payload_bytes());
  if (cudaMemcpyAsync(bytes.data(), c.payload(), bytes.size(), cudaMemcpyDeviceToHost, harness_stream_) != cudaSuccess ||
      cudaStreamSynchronize(harness_stream_) != cudaSuccess) {
    return false;  // a fault shows up at the next synchronisation
  }
  return std::any_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b != 0xff; });
}

Verdict ProblemRun::RunAndRead(int64_t n, Buffers* buffers, std::vector<float>* c_host) {
  const int64_t count = matrix_->rows * n;
  if (absl::Status s = gpu::CudaStatus(cudaMemset(buffers->c.payload(), 0xff, buffers->c.payload_bytes()), "fill C");
      !s.ok()) {
    return CrashVerdict(s, name_);
  }
  if (absl::Status s = buffers->c.ResetGuards(); !s.ok()) return CrashVerdict(s, name_);
  cudaDeviceSynchronize();
  // Hold the candidate's stream closed, call run, and look at C before opening it again.
  if (absl::Status s = gate_.Close(candidate_stream_, kStreamGateTimeoutNs, "stream gate"); !s.ok()) {
    gate_.Open();  // whether or not the gate was enqueued, it must not hold the stream
    return CrashVerdict(s, name_);
  }
  const int rc = library_->run(state_, buffers->b.get(), buffers->c.payload(), n, candidate_stream_);
  const bool written_behind_gate = COutsideStreamWasWritten(buffers->c);
  gate_.Open();
  if (rc != 0) return CrashVerdict(absl::InternalError(fmt::format("returned {}", rc)), fmt::format("{}: run(n={})", name_, n));
  if (absl::Status s = gpu::CudaStatus(cudaStreamSynchronize(candidate_stream_), "run"); !s.ok()) {
    return CrashVerdict(s, fmt::format("{}: run(n={})", name_, n));
  }
  if (written_behind_gate && gate_.ReleasedByHost()) {
    cudaDeviceSynchronize();
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG,
                         fmt::format("{}: n={}: work escaped the given stream: C was written while that stream was "
                                     "held closed", name_, n));
  }
  // Read C now, on a stream that does not wait for anything else: work the candidate left on other
  // streams is not finished for us.
  c_host->resize(count);
  absl::Status s = gpu::CudaStatus(gpu::LaunchConvertToFloat(buffers->c.payload(), static_cast<gpu::ElementType>(dtype_),
                                                             count, c_float_.as<float>(), harness_stream_),
                                   "convert C");
  if (s.ok()) {
    s = gpu::CudaStatus(cudaMemcpyAsync(c_host->data(), c_float_.get(), count * sizeof(float),
                                        cudaMemcpyDeviceToHost, harness_stream_),
                        "copy C");
  }
  if (s.ok()) s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "copy C");
  if (s.ok()) s = gpu::CudaStatus(cudaDeviceSynchronize(), "after run");
  if (!s.ok()) return CrashVerdict(s, fmt::format("{}: run(n={})", name_, n));
  if (absl::Status guards = buffers->c.CheckGuards(); !guards.ok()) {
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, fmt::format("{}: n={}: {}", name_, n, guards.message()));
  }
  return Verdict();
}

Verdict ProblemRun::CheckRun(int64_t n, uint64_t seed, const std::string& label, v1::CorrectnessCheck* check,
                             std::vector<float>* output) {
  check->set_case_name(label);
  check->set_rows(matrix_->rows);
  check->set_cols(matrix_->cols);
  check->set_n(n);
  auto buffers = BuffersFor(n);
  if (!buffers.ok()) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(buffers.status().message()));
  if (absl::Status s = FillB(n, seed, *buffers); !s.ok()) return CrashVerdict(s, name_ + ": reference");
  const size_t b_bytes = (*buffers)->b.size();
  std::vector<char> b_before(b_bytes), b_after(b_bytes);
  cudaMemcpy(b_before.data(), (*buffers)->b.get(), b_bytes, cudaMemcpyDeviceToHost);

  std::vector<float> got;
  Verdict verdict = RunAndRead(n, *buffers, &got);
  if (!verdict.ok()) {
    check->set_detail(verdict.detail);
    return verdict;
  }
  cudaMemcpy(b_after.data(), (*buffers)->b.get(), b_bytes, cudaMemcpyDeviceToHost);
  if (b_before != b_after) {
    check->set_detail("run modified its input B");
    return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, fmt::format("{}: n={}: run modified its input B", name_, n));
  }
  std::vector<float> ref(got.size()), abs_sum(got.size());
  cudaMemcpy(ref.data(), ref_.get(), ref.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(abs_sum.data(), abs_sum_.get(), abs_sum.size() * sizeof(float), cudaMemcpyDeviceToHost);
  const OutputCheckResult r = CheckOutput(got.data(), ref.data(), abs_sum.data(), matrix_->rows, n, dtype_, matrix_->cols);
  check->set_max_abs_error(r.max_abs_error);
  check->set_max_rel_error(r.max_rel_error);
  check->set_tolerance(r.worst_ratio);  // worst error / tolerance; passing needs <= 1
  check->set_passed(r.passed);
  check->set_detail(r.detail);
  if (!r.passed) return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG, fmt::format("{}: n={}: {}", label, n, r.detail));
  if (output != nullptr) *output = std::move(got);
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

absl::Status ProblemRun::Launch(int64_t n, cudaStream_t stream) {
  auto buffers = BuffersFor(n);
  if (!buffers.ok()) return buffers.status();
  const int rc = library_->run(state_, (*buffers)->b.get(), (*buffers)->c.payload(), n, stream);
  if (rc != 0) return absl::InternalError(fmt::format("run(n={}) returned {}", n, rc));
  return absl::OkStatus();
}

}  // namespace sparseditto
