#include "evaluator/runner/candidate_host.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string_view>

#include "common/text_tail.h"
#include "evaluator/sandbox/host_layers.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/runner/framing.h"
#include "evaluator/runner/step_trace.h"
#include "common/status_macros.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kSharedMatrixFd = 5;  // the host's fd of options.task_matrix (HostOpen.matrix)
constexpr size_t kChunkBytes = size_t{16} << 20;  // well under the frame cap
// Replies are small (trial times, messages); a larger announced frame is a hostile host.
constexpr uint32_t kMaxReplyBytes = 1 << 20;
constexpr double kMemoryPollSeconds = 0.25;  // between looks at the host's resident memory

}  // namespace

absl::StatusOr<v1::IpcBuffer> MakeIpcBuffer(void* allocation_base, size_t offset, size_t bytes) {
  cudaIpcMemHandle_t handle;
  SD_CUDA_CHECK(cudaIpcGetMemHandle(&handle, allocation_base));
  v1::IpcBuffer buffer;
  buffer.set_handle(std::string(reinterpret_cast<const char*>(&handle), sizeof handle));
  buffer.set_offset(offset);
  buffer.set_bytes(bytes);
  return buffer;
}

absl::Status ApplyHostSandboxLayers(const std::string& layers, const std::string& host_binary,
                                    const std::string& library_dir, CandidateHostOptions* options) {
  auto parsed = ParseHostSandboxLayers(layers, host_binary, library_dir);
  if (!parsed.ok()) return parsed.status();
  options->sandbox = parsed->spawn;
  options->in_process_layers = parsed->in_process;
  return absl::OkStatus();
}

bool CanSpawnAhead(const CandidateHostOptions& options) {
  return !options.sandbox.has_value() || !options.sandbox->landlock.has_value();
}

absl::StatusOr<std::unique_ptr<CandidateHost>> CandidateHost::Start(const CandidateHostOptions& options,
                                                                    const std::string& library_path, void* flush,
                                                                    size_t flush_bytes) {
  auto host = Spawn(options);
  if (!host.ok()) return host.status();
  if (absl::Status s = (*host)->Open(library_path, flush, flush_bytes); !s.ok()) return s;
  return host;
}

absl::StatusOr<std::unique_ptr<CandidateHost>> CandidateHost::Spawn(const CandidateHostOptions& options) {
  auto host = std::unique_ptr<CandidateHost>(new CandidateHost);
  host->options_ = options;
  SD_CUDA_CHECK(cudaEventCreateWithFlags(&host->start_, cudaEventInterprocess | cudaEventDisableTiming));
  SD_CUDA_CHECK(cudaEventCreateWithFlags(&host->done_, cudaEventInterprocess | cudaEventDisableTiming));

  SpawnOptions spawn;
  spawn.argv = {options.host_path};
  spawn.inherit_variables = options.inherit_variables;
  // Lazy: a module loads at its kernel's first launch. Eager loading made every cuBLAS-based candidate
  // load all of cuBLAS's kernels at its handle's creation (about 1.5 s a host on the H200, half of
  // the GPU stage of a search of the 2:4 task). ProblemRun's warm-up run at each n loads what the
  // candidate uses before any gated run, so no load waits behind a gate or lands in a timed batch.
  spawn.environment["CUDA_MODULE_LOADING"] = "LAZY";
  spawn.pipes = {{kRequestFd, ChildPipe::Direction::kToChild}, {kReplyFd, ChildPipe::Direction::kFromChild}};
  spawn.limits.file_size_bytes = int64_t{1} << 30;
  spawn.max_captured_bytes = options.max_log_bytes;
  spawn.sandbox = options.sandbox;
  if (!options.in_process_layers.empty()) spawn.environment["SPARSEDITTO_HOST_LOCKDOWN"] = options.in_process_layers;
  if (options.task_matrix != nullptr) spawn.inherited_fds = {{options.task_matrix->fd(), kSharedMatrixFd}};
  auto child = sparseditto::Spawn(spawn);  // common/subprocess.h
  if (!child.ok()) return absl::UnavailableError(fmt::format("cannot start the candidate host: {}", child.status().message()));
  host->child_ = *std::move(child);
  return host;
}

absl::Status CandidateHost::Open(const std::string& library_path, void* flush, size_t flush_bytes) {
  if (opened_) return absl::FailedPreconditionError("the candidate host is open already");
  opened_ = true;
  cudaIpcEventHandle_t start, done;
  SD_CUDA_CHECK(cudaIpcGetEventHandle(&start, start_));
  SD_CUDA_CHECK(cudaIpcGetEventHandle(&done, done_));
  auto flush_buffer = MakeIpcBuffer(flush, 0, flush_bytes);
  if (!flush_buffer.ok()) return flush_buffer.status();
  v1::HostRequest request;
  v1::HostOpen* open = request.mutable_open();
  open->set_library_path(library_path);
  open->set_start_event(std::string(reinterpret_cast<const char*>(&start), sizeof start));
  open->set_done_event(std::string(reinterpret_cast<const char*>(&done), sizeof done));
  *open->mutable_flush() = *flush_buffer;
  if (options_.task_matrix != nullptr) {
    const SharedMatrixLayout& layout = options_.task_matrix->layout();
    open->mutable_matrix()->set_rows(layout.rows);
    open->mutable_matrix()->set_cols(layout.cols);
    open->mutable_matrix()->set_nnz(layout.nnz);
  }
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  if (!reply->ok()) return absl::FailedPreconditionError(reply->error());
  TraceHostOpenSteps(*reply);
  return absl::OkStatus();
}

void TraceHostOpenSteps(const v1::HostReply& reply) {
  if (!StepTraceOn()) return;
  const int steps = std::min<int>(reply.open_step_ms_size(), std::size(kHostOpenSteps));
  for (int i = 0; i < steps; ++i) {
    const double ms = reply.open_step_ms(i);
    if (std::isfinite(ms) && ms >= 0 && ms < 1e7) AddStepTime(kHostOpenSteps[i], ms / 1000);
  }
}

bool CandidateHost::StillRunning() {
  if (!alive()) return false;
  (void)child_->Pump(DeadlineAfter(0));  // notices an exit (and reaps it) without waiting
  return alive();
}

CandidateHost::~CandidateHost() {
  child_.reset();  // kills the group and reaps it
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (done_ != nullptr) cudaEventDestroy(done_);
}

std::string CandidateHost::Log() const {
  if (child_ == nullptr) return "";
  std::string log;
  const std::string& out = child_->captured_stdout().bytes;
  const std::string& err = child_->captured_stderr().bytes;
  if (!out.empty()) log += "[stdout]\n" + TextTail(out, 16 << 10);
  if (!err.empty()) log += "[stderr]\n" + TextTail(err, 16 << 10);
  return log;
}

absl::StatusOr<v1::HostReply> CandidateHost::Call(const v1::HostRequest& request) {
  if (!alive()) return absl::UnavailableError("the candidate host has exited");
  const Deadline deadline = DeadlineAfter(options_.request_timeout_seconds);
  auto frame = EncodeFrame(request);
  if (!frame.ok()) return frame.status();
  auto fail = [&](absl::Status s) -> absl::Status {
    const bool timed_out = absl::IsDeadlineExceeded(s) || Clock::now() >= deadline;
    // A host that is exiting by itself says how (an exit code names the step: 4 = no CUDA); then kill.
    auto outcome = child_->WaitFor(DeadlineAfter(timed_out ? 0 : 2));
    child_->Kill();
    const std::string how = outcome.ok() ? outcome->ToString() : "lost";
    if (timed_out) {
      return absl::DeadlineExceededError(fmt::format("the candidate host did not answer within {:.0f} s",
                                                     options_.request_timeout_seconds));
    }
    // Its own last words (e.g. why CUDA would not start under a sandbox layer), as untrusted text.
    const std::string log = Log();
    return absl::UnavailableError(fmt::format("the candidate host {}: {}{}{}", how, s.message(), log.empty() ? "" : "\n",
                                              TextTail(log, 2048)));
  };
  if (absl::Status s = child_->WriteToChild(kRequestFd, *frame, deadline); !s.ok()) return fail(s);
  // Wait for the reply's first byte, checking the host's memory meanwhile: a candidate that allocates
  // host memory without bound is stopped before it takes the machine.
  if (absl::Status s = child_->WaitReadableWithin(kReplyFd, deadline, options_.max_resident_bytes, kMemoryPollSeconds);
      !s.ok()) {
    if (!absl::IsResourceExhausted(s)) return fail(s);
    child_->Kill();
    return absl::ResourceExhaustedError(fmt::format("the candidate host {}", s.message()));
  }
  auto header = child_->ReadFromChild(kReplyFd, kFrameHeaderBytes, deadline);
  if (!header.ok()) return fail(header.status());
  auto size = DecodeFrameLength(*header);
  if (!size.ok()) return fail(size.status());
  if (*size > kMaxReplyBytes) return fail(absl::DataLossError(fmt::format("a reply of {} bytes", *size)));
  auto payload = child_->ReadFromChild(kReplyFd, *size, deadline);
  if (!payload.ok()) return fail(payload.status());
  v1::HostReply reply;
  if (!reply.ParseFromString(*payload)) return fail(absl::DataLossError("a reply that does not parse"));
  return reply;
}

absl::StatusOr<HostPrepareOutcome> CandidateHost::Prepare(const CsrMatrix& matrix, const v1::PatternSpec& pattern,
                                                          v1::Dtype dtype, const std::vector<int64_t>& n_values,
                                                          v1::Layout layout) {
  auto send = [&](v1::HostMatrixChunk::Array array, const void* data, size_t bytes) -> absl::Status {
    const char* p = static_cast<const char*>(data);
    for (size_t at = 0; at < bytes; at += kChunkBytes) {
      v1::HostRequest request;
      request.mutable_chunk()->set_array(array);
      request.mutable_chunk()->set_data(std::string(p + at, std::min(kChunkBytes, bytes - at)));
      auto reply = Call(request);
      if (!reply.ok()) return reply.status();
      if (!reply->ok()) return absl::UnavailableError("the candidate host refused the matrix: " + reply->error());
    }
    return absl::OkStatus();
  };
  // The task matrix is mapped by the host at start (HostOpen.matrix): nothing to send.
  const bool shared = options_.task_matrix != nullptr && options_.task_matrix->source() == &matrix;
  if (!shared) {
    ScopedStep step("problem: host prepare: matrix sent over the pipe");
    SD_RETURN_IF_ERROR(
        send(v1::HostMatrixChunk::ROW_OFFSETS, matrix.row_offsets.data(), matrix.row_offsets.size() * sizeof(int32_t)));
    SD_RETURN_IF_ERROR(
        send(v1::HostMatrixChunk::COL_INDICES, matrix.col_indices.data(), matrix.col_indices.size() * sizeof(int32_t)));
    SD_RETURN_IF_ERROR(send(v1::HostMatrixChunk::VALUES, matrix.values.data(), matrix.values.size() * sizeof(float)));
  }
  v1::HostRequest request;
  v1::HostPrepare* p = request.mutable_prepare();
  p->set_dtype(dtype);
  p->set_rows(matrix.rows);
  p->set_cols(matrix.cols);
  p->set_nnz(matrix.nnz());
  p->set_family(pattern.family());
  p->set_sparsity(static_cast<float>(pattern.sparsity()));
  p->set_block_rows(pattern.block_rows());
  p->set_block_cols(pattern.block_cols());
  p->set_nm_n(pattern.n());
  p->set_nm_m(pattern.m());
  p->set_half_bandwidth(pattern.half_bandwidth());
  p->set_num_blocks(pattern.num_blocks());
  for (int64_t n : n_values) p->add_n_values(n);
  p->set_shared_matrix(shared);
  p->set_layout(layout);
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  HostPrepareOutcome outcome;
  outcome.ok = reply->ok();
  outcome.return_code = reply->return_code();
  outcome.error = reply->error();
  outcome.prepare_ms = reply->prepare_ms();
  outcome.layout_refused = reply->layout_refused();
  return outcome;
}

absl::StatusOr<int> CandidateHost::EnqueueRun(int64_t n, const v1::IpcBuffer& b, const v1::IpcBuffer& c) {
  v1::HostRequest request;
  request.mutable_run()->set_n(n);
  *request.mutable_run()->mutable_b() = b;
  *request.mutable_run()->mutable_c() = c;
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  if (!reply->ok()) return absl::InternalError("the candidate host could not enqueue the run: " + reply->error());
  return reply->return_code();
}

absl::StatusOr<int> CandidateHost::EnqueueBatch(int64_t n, const std::vector<v1::IpcBuffer>& b,
                                                const std::vector<v1::IpcBuffer>& c) {
  v1::HostRequest request;
  v1::HostTimeBatch* batch = request.mutable_time_batch();
  batch->set_n(n);
  for (const auto& x : b) *batch->add_b() = x;
  for (const auto& x : c) *batch->add_c() = x;
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  if (!reply->ok() && reply->return_code() == 0) {
    return absl::InternalError("the candidate host could not enqueue the batch: " + reply->error());
  }
  return reply->return_code();
}

absl::StatusOr<std::vector<double>> CandidateHost::Collect() {
  v1::HostRequest request;
  request.mutable_collect();
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  if (!reply->ok()) return absl::InternalError("the candidate host has no trial times: " + reply->error());
  return std::vector<double>(reply->trial_ms().begin(), reply->trial_ms().end());
}

absl::Status CandidateHost::QueryStream() {
  v1::HostRequest request;
  request.mutable_query();
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  if (!reply->ok()) return absl::AbortedError("the candidate's work failed on the device: " + reply->error());
  return absl::OkStatus();
}

absl::Status CandidateHost::Release() {
  v1::HostRequest request;
  request.mutable_release();
  auto reply = Call(request);
  if (!reply.ok()) return reply.status();
  if (!reply->ok()) return absl::InternalError("release: " + reply->error());
  return absl::OkStatus();
}

}  // namespace sparseditto
