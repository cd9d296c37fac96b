// sparseditto-candidate-host: the untrusted side of the trust boundary (DESIGN.md §3.6,
// proto/host.proto). The judge (sparseditto-runner) starts one for each candidate; this process
// initialises CUDA, locks itself down, loads the candidate's library and does what the judge asks:
// prepare, checked runs and timed batches on the judge's own buffers, which it maps through CUDA
// IPC. Nothing here is trusted: the candidate may rewrite any byte of this process, so the judge
// checks every output and every time it reports. This file is kept small for that reason: it holds
// no verdict logic. Requests on fd 3, replies on fd 4; exit 0 at end of input, 2 usage, 4 no CUDA.
#include <cuda_runtime_api.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluator/host/host_lockdown.h"
#include "evaluator/host/sanitize_smoke.h"
#include "evaluator/runner/candidate_library.h"
#include "evaluator/runner/framing.h"
#include "evaluator/runner/shared_matrix.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "host.pb.h"


namespace sparseditto {
namespace {

constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kSharedMatrixFd = 5;  // HostOpen.matrix

// What the judge asked this process to apply to itself before the library is loaded.
std::string InProcessLayers() {
  const char* layers = std::getenv("SPARSEDITTO_HOST_LOCKDOWN");
  return layers == nullptr ? "" : layers;
}

class Host {
 public:
  int Serve() {
    v1::HostRequest request;
    while (ReadFrame(kRequestFd, &request).ok()) {
      v1::HostReply reply = Handle(request);
      if (!WriteFrame(kReplyFd, reply).ok()) return 0;
    }
    return 0;
  }

 private:
  v1::HostReply Handle(const v1::HostRequest& request) {
    switch (request.request_case()) {
      case v1::HostRequest::kOpen: return Open(request.open());
      case v1::HostRequest::kChunk: return Chunk(request.chunk());
      case v1::HostRequest::kPrepare: return Prepare(request.prepare());
      case v1::HostRequest::kRun: return Run(request.run());
      case v1::HostRequest::kTimeBatch: return TimeBatch(request.time_batch());
      case v1::HostRequest::kCollect: return Collect();
      case v1::HostRequest::kRelease: return Release();
      case v1::HostRequest::kQuery: return Query();
      default: return Error("unknown request");
    }
  }

  static v1::HostReply Error(std::string what) {
    v1::HostReply reply;
    reply.set_error(std::move(what));
    return reply;
  }
  static v1::HostReply Ok() {
    v1::HostReply reply;
    reply.set_ok(true);
    return reply;
  }
  static std::string CudaText(cudaError_t e) { return fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e)); }

  // The judge's buffer as a pointer here; each allocation is opened once.
  void* Map(const v1::IpcBuffer& buffer, std::string* error) {
    if (buffer.handle().size() != sizeof(cudaIpcMemHandle_t)) {
      *error = "bad IPC handle";
      return nullptr;
    }
    auto it = mapped_.find(buffer.handle());
    if (it == mapped_.end()) {
      cudaIpcMemHandle_t handle;
      std::memcpy(&handle, buffer.handle().data(), sizeof handle);
      void* base = nullptr;
      const cudaError_t e = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
      if (e != cudaSuccess) {
        *error = "cudaIpcOpenMemHandle: " + CudaText(e);
        return nullptr;
      }
      it = mapped_.emplace(buffer.handle(), base).first;
    }
    return static_cast<char*>(it->second) + buffer.offset();
  }

  v1::HostReply Open(const v1::HostOpen& open) {
    if (stream_ != nullptr) return Error("already open");
    // The host's own clock around each step, in kHostOpenSteps' order (the runner's trace only).
    std::vector<double> steps;
    auto step_began = std::chrono::steady_clock::now();
    auto step_done = [&] {
      const auto now = std::chrono::steady_clock::now();
      steps.push_back(std::chrono::duration<double, std::milli>(now - step_began).count());
      step_began = now;
    };
    auto ok_with_steps = [&] {
      v1::HostReply reply = Ok();
      for (double ms : steps) reply.add_open_step_ms(ms);
      return reply;
    };
    cudaIpcEventHandle_t start, done;
    if (open.start_event().size() != sizeof start || open.done_event().size() != sizeof done) return Error("bad event handle");
    std::memcpy(&start, open.start_event().data(), sizeof start);
    std::memcpy(&done, open.done_event().data(), sizeof done);
    cudaError_t e = cudaIpcOpenEventHandle(&start_, start);
    if (e == cudaSuccess) e = cudaIpcOpenEventHandle(&done_, done);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (e != cudaSuccess) return Error("IPC events or stream: " + CudaText(e));
    step_done();
    std::string error;
    flush_ = Map(open.flush(), &error);
    flush_base_ = mapped_.empty() ? nullptr : mapped_.begin()->second;
    flush_bytes_ = open.flush().bytes();
    if (flush_ == nullptr) return Error(error);
    step_done();
    if (open.has_matrix()) {  // mapped before the lockdown, then its fd closed
      auto layout = SharedMatrixLayout::For(open.matrix().rows(), open.matrix().cols(), open.matrix().nnz());
      if (!layout.ok()) return Error(std::string(layout.status().message()));
      auto mapped = MappedSharedMatrix::Map(kSharedMatrixFd, *layout);
      if (!mapped.ok()) return Error(std::string(mapped.status().message()));
      shared_matrix_ = *std::move(mapped);
      close(kSharedMatrixFd);
    }
    step_done();
    // The last step before the candidate's code exists in this process (its constructors run at load).
    if (absl::Status s = LockDownBeforeLoad(open.library_path(), InProcessLayers()); !s.ok()) return Error(std::string(s.message()));
    step_done();
    if (open.library_path().empty()) {  // the judge's calibration host: runs that do nothing
      library_.run = [](void*, const void*, void*, int64_t, cudaStream_t) { return 0; };
      prepared_ = true;
      return ok_with_steps();
    }
    auto library = LoadCandidateLibrary(open.library_path());
    if (!library.ok()) return Error(std::string(library.status().message()));
    library_ = *library;
    step_done();
    return ok_with_steps();
  }

  v1::HostReply Chunk(const v1::HostMatrixChunk& chunk) {
    std::string* into = chunk.array() == v1::HostMatrixChunk::ROW_OFFSETS   ? &offsets_
                        : chunk.array() == v1::HostMatrixChunk::COL_INDICES ? &cols_
                        : chunk.array() == v1::HostMatrixChunk::VALUES      ? &values_
                                                                            : nullptr;
    if (into == nullptr) return Error("bad matrix chunk");
    into->append(chunk.data());
    return Ok();
  }

  v1::HostReply Prepare(const v1::HostPrepare& p) {
    if (library_.prepare == nullptr) return Error("not open");
    if (prepared_) ReleaseState();
    const MappedSharedMatrix* shared = p.shared_matrix() ? shared_matrix_.get() : nullptr;
    if (p.shared_matrix()) {
      if (shared == nullptr) return Error("no shared matrix");
      if (shared->layout().rows != p.rows() || shared->layout().cols != p.cols() || shared->layout().nnz != p.nnz()) {
        return Error("the shared matrix does not match the problem");
      }
    } else if (offsets_.size() != sizeof(int32_t) * (p.rows() + 1) || cols_.size() != sizeof(int32_t) * p.nnz() ||
               values_.size() != sizeof(float) * p.nnz()) {
      return Error("matrix arrays do not match the problem");
    }
    if (absl::Status s = CheckLayoutSupported(library_, p.layout()); !s.ok()) {
      v1::HostReply reply = Error(std::string(s.message()));
      reply.set_layout_refused(true);
      return reply;
    }
    n_values_.assign(p.n_values().begin(), p.n_values().end());
    sd_problem problem{};
    problem.abi_version = SPARSEDITTO_ABI_VERSION;
    problem.dtype = p.dtype();
    problem.rows = p.rows();
    problem.cols = p.cols();
    problem.nnz = p.nnz();
    problem.pattern = {p.family(), p.sparsity(), p.block_rows(), p.block_cols(), p.nm_n(), p.nm_m(),
                       p.half_bandwidth(), p.num_blocks()};
    problem.row_offsets = shared ? shared->row_offsets() : reinterpret_cast<const int32_t*>(offsets_.data());
    problem.col_indices = shared ? shared->col_indices() : reinterpret_cast<const int32_t*>(cols_.data());
    problem.values = shared ? shared->values() : reinterpret_cast<const float*>(values_.data());
    problem.n_values = n_values_.data();
    problem.num_n_values = static_cast<int32_t>(n_values_.size());
    problem.layout = p.layout();
    cudaGetDevice(&problem.device);
    char error[1024] = {0};
    const auto start = std::chrono::steady_clock::now();
    const int rc = library_.prepare(&problem, &state_, error, sizeof(error) - 1);
    const cudaError_t sync = cudaDeviceSynchronize();
    v1::HostReply reply;
    reply.set_prepare_ms(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    reply.set_return_code(rc);
    offsets_.clear();
    cols_.clear();
    values_.clear();
    if (rc != 0) {
      reply.set_error(error);
      return reply;
    }
    prepared_ = true;
    if (sync != cudaSuccess) {
      reply.set_error("after prepare: " + CudaText(sync));
      return reply;
    }
    reply.set_ok(true);
    return reply;
  }

  v1::HostReply Run(const v1::HostRun& run) {
    if (!prepared_) return Error("not prepared");
    std::string error;
    void* b = Map(run.b(), &error);
    void* c = b == nullptr ? nullptr : Map(run.c(), &error);
    if (c == nullptr) return Error(error);
    cudaError_t e = cudaStreamWaitEvent(stream_, start_, 0);
    v1::HostReply reply;
    if (e == cudaSuccess) reply.set_return_code(library_.run(state_, b, c, run.n(), stream_));
    const cudaError_t recorded = cudaEventRecord(done_, stream_);
    if (e == cudaSuccess) e = recorded;
    if (e != cudaSuccess) return Error(CudaText(e));
    reply.set_ok(true);
    return reply;
  }

  v1::HostReply TimeBatch(const v1::HostTimeBatch& batch) {
    if (!prepared_) return Error("not prepared");
    if (batch.b_size() != batch.c_size() || batch.b_size() == 0) return Error("bad batch");
    while (events_.size() < 2 * static_cast<size_t>(batch.b_size())) {
      cudaEvent_t event;
      if (cudaEventCreate(&event) != cudaSuccess) return Error("cudaEventCreate");
      events_.push_back(event);
    }
    trials_ = batch.b_size();
    cudaError_t e = cudaStreamWaitEvent(stream_, start_, 0);
    int rc = 0;
    for (int i = 0; i < trials_ && e == cudaSuccess && rc == 0; ++i) {
      std::string error;
      void* b = Map(batch.b(i), &error);
      void* c = b == nullptr ? nullptr : Map(batch.c(i), &error);
      if (c == nullptr) return Error(error);
      e = cudaMemsetAsync(flush_, 0x5a, flush_bytes_, stream_);
      if (e == cudaSuccess) e = cudaEventRecord(events_[2 * i], stream_);
      if (e == cudaSuccess) rc = library_.run(state_, b, c, batch.n(), stream_);
      if (e == cudaSuccess) e = cudaEventRecord(events_[2 * i + 1], stream_);
    }
    const cudaError_t recorded = cudaEventRecord(done_, stream_);  // always, so the judge never waits for ever
    if (e == cudaSuccess) e = recorded;
    v1::HostReply reply;
    reply.set_return_code(rc);
    if (e != cudaSuccess) return Error(CudaText(e));
    reply.set_ok(rc == 0);
    return reply;
  }

  v1::HostReply Query() {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaSuccess || e == cudaErrorNotReady) return Ok();
    return Error(CudaText(e));
  }

  v1::HostReply Collect() {
    const cudaError_t e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) return Error(CudaText(e));
    v1::HostReply reply;
    for (int i = 0; i < trials_; ++i) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]) != cudaSuccess) return Error("event times");
      reply.add_trial_ms(ms);
    }
    reply.set_ok(true);
    return reply;
  }

  void ReleaseState() {
    if (prepared_ && library_.release != nullptr) library_.release(state_);
    prepared_ = false;
    state_ = nullptr;
  }

  v1::HostReply Release() {
    ReleaseState();
    // The judge frees these buffers next; a later problem maps its own.
    for (auto it = mapped_.begin(); it != mapped_.end();) {
      if (it->second == flush_base_) {
        ++it;
        continue;
      }
      cudaIpcCloseMemHandle(it->second);
      it = mapped_.erase(it);
    }
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return Error("after release: " + CudaText(e));
    return Ok();
  }

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, done_ = nullptr;
  void* flush_ = nullptr;
  void* flush_base_ = nullptr;
  size_t flush_bytes_ = 0;
  std::map<std::string, void*> mapped_;  // IPC handle bytes -> mapped base
  CandidateLibrary library_;  // empty until Open
  std::string offsets_, cols_, values_;
  std::unique_ptr<MappedSharedMatrix> shared_matrix_;  // HostOpen.matrix, read-only
  std::vector<int64_t> n_values_;
  void* state_ = nullptr;
  bool prepared_ = false;
  std::vector<cudaEvent_t> events_;
  int trials_ = 0;
};

int Main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--sanitize") == 0) return RunSanitizeSmoke(argc, argv);
  if (argc != 1) {
    fmt::print(stderr, "usage: sparseditto-candidate-host  (started by sparseditto-runner; fds 3 and 4)\n"
                       "       sparseditto-candidate-host --sanitize REQUEST_FILE ROWS COLS  (under compute-sanitizer)\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  // CUDA first: its initialisation opens device files and reads /proc and /sys, which the lockdown
  // then closes off.
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    fmt::print(stderr, "sparseditto-candidate-host: no usable CUDA device: {}\n", cudaGetErrorString(cudaGetLastError()));
    return 4;
  }
  Host host;
  return host.Serve();
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
