// sparseditto-runner: the child process that loads candidate libraries and runs the GPU side of the
// cascade (proto/runner.proto). Started by the evaluator with requests on fd 3 and events on fd 4;
// with `--request FILE --reply FILE` it serves one request from a file (used under compute-sanitizer).
// The candidate's own output goes to stdout/stderr, which the evaluator captures separately.
// Exit codes: 0 at end of requests, 3 after a lost CUDA context, 4 when CUDA cannot start, 2 usage.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "evaluator/gpu/device_limits.h"
#include "evaluator/runner/step_trace.h"
#include "evaluator/runner/candidate_evaluation.h"
#include "evaluator/runner/bracket.h"
#include "evaluator/runner/candidate_host.h"
#include "evaluator/runner/framing.h"
#include "evaluator/runner/gpu_share.h"
#include "evaluator/runner/task_context.h"
#include "evaluator/runner/task_key.h"
#include "evaluator/runner/timing.h"
#include "evaluator/sandbox/host_layers.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr int kExitContextLost = 3;
constexpr int kExitNoCuda = 4;

// sparseditto-candidate-host, installed beside this binary.
std::string HostBinaryBesideUs() {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return "sparseditto-candidate-host";
  self[length] = 0;
  std::string path(self);
  return path.substr(0, path.rfind('/') + 1) + "sparseditto-candidate-host";
}

struct Device {  // read from cudaGetDeviceProperties, never typed in
  std::string name;
  std::string arch;
  int64_t sm_count = 0;
  int64_t shared_memory_per_block_optin = 0;  // bytes
  int64_t shared_memory_per_sm = 0;           // bytes
};

class Runner {
 public:
  // `share`: the lock of a GPU shared with other runners (gpu_share.h); null: this runner's alone.
  Runner(int in_fd, int out_fd, Device device, L2Flusher flusher, std::unique_ptr<GpuShare> share)
      : in_(in_fd), out_(out_fd), device_(std::move(device)), flusher_(std::move(flusher)), share_(std::move(share)) {}

  // Serves requests until end of input (0) or a lost context (kExitContextLost).
  int Serve(bool one_request) {
    v1::RunnerRequest request;
    while (ReadFrame(in_, &request).ok()) {
      v1::RunnerEvent reply;
      if (request.has_setup_task()) {
        *reply.mutable_setup_task() = SetupTask(request.setup_task());
      } else if (request.has_evaluate()) {
        bool lost = false;
        *reply.mutable_evaluate() = Evaluate(request.evaluate(), &lost);
        reply.set_context_lost(lost);
      }
      if (!WriteFrame(out_, reply).ok()) return 0;  // the evaluator has gone
      // Not a return: exit's CUDA teardown can wait for ever on a stream held by a dead host's event.
      if (reply.context_lost()) std::_Exit(kExitContextLost);
      if (one_request) return 0;
      if (request.has_evaluate()) SpawnAhead();
    }
    return 0;
  }

 private:
  absl::StatusOr<TaskContext*> ContextFor(const v1::Task& task) {
    const std::string key = TaskContextKey(task);
    auto it = contexts_.find(key);
    if (it != contexts_.end()) return it->second.get();
    auto context = TaskContext::Create(task);
    if (!context.ok()) return context.status();
    return contexts_.emplace(key, *std::move(context)).first->second.get();
  }

  v1::SetupTaskReply SetupTask(const v1::SetupTaskRequest& request) {
    v1::SetupTaskReply reply;
    // The device limits and the baselines are timed: the GPU to itself.
    GpuShare::Scoped alone(share_.get(), GpuShare::Mode::kExclusive);
    if (!alone.status().ok()) {
      reply.set_error(fmt::format("the GPU's timing lock: {}", alone.status().message()));
      return reply;
    }
    reply.set_gpu_name(device_.name);
    reply.set_arch(device_.arch);
    // The facts the built-in mutator's device-relative tunables resolve against (kernel_abi/tunable_values.h).
    reply.set_sm_count(device_.sm_count);
    reply.set_shared_memory_per_block_optin(device_.shared_memory_per_block_optin);
    reply.set_shared_memory_per_sm(device_.shared_memory_per_sm);
    auto context = ContextFor(request.task());
    if (!context.ok()) {
      reply.set_error(std::string(context.status().message()));
      return reply;
    }
    reply.set_matrix_nnz((*context)->matrix().nnz());
    reply.set_matrix_rows((*context)->matrix().rows);
    reply.set_matrix_cols((*context)->matrix().cols);
    if (request.options().measure_device_limits()) {
      if (!limits_) {
        auto measured = gpu::MeasureDeviceLimits();
        if (!measured.ok()) {
          reply.set_error(std::string(measured.status().message()));
          return reply;
        }
        limits_ = *measured;
      }
      reply.set_copy_bandwidth_gbs(limits_->copy_bandwidth_gbs);
      reply.set_tensor_tflops(limits_->tensor_tflops);
      reply.set_fp32_tflops(limits_->fp32_tflops);
    }
    if (!request.options().skip_baselines()) {
      auto baselines = (*context)->Baselines(request.options(), flusher_, device_.name);
      if (!baselines.ok()) {
        reply.set_error(std::string(baselines.status().message()));
        return reply;
      }
      for (const auto& [n, list] : *baselines) (*reply.mutable_baselines())[n] = list;
    }
    reply.set_ok(true);
    return reply;
  }

  v1::EvalResult Evaluate(const v1::EvaluateRequest& request, bool* lost) {
    // Shared with other runners' untimed stages for the whole request (the host's start and teardown
    // included: declared before the host); EvaluateCandidate holds it exclusive while it times.
    GpuShare::Scoped beside(share_.get(), GpuShare::Mode::kShared);
    v1::EvalResult result;
    result.set_candidate_id(request.candidate_id());
    result.set_task_name(request.task().name());
    result.set_gpu_name(device_.name);
    result.set_arch(device_.arch);
    auto fail = [&](v1::FailureCategory category, std::string detail) {
      result.set_failure(category);
      result.set_failure_detail(std::move(detail));
      return result;
    };
    auto context = [&] {
      ScopedStep step("runner: task context");
      return ContextFor(request.task());
    }();
    if (!context.ok()) return fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(context.status().message()));
    if (!beside.status().ok()) {
      return fail(v1::FAILURE_CATEGORY_INTERNAL, fmt::format("the GPU's lock: {}", beside.status().message()));
    }
    std::map<int64_t, v1::BaselineList> baselines(request.baselines().begin(), request.baselines().end());
    if (baselines.empty() && !request.options().skip_baselines() && !request.small_only()) {
      GpuShare::Scoped alone(share_.get(), GpuShare::Mode::kExclusive);
      auto timed = (*context)->Baselines(request.options(), flusher_, device_.name);
      if (!timed.ok()) return fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(timed.status().message()));
      baselines = *timed;
    }
    // Only a request that times needs the bracket calibration (not the sanitizers' smoke-only runs).
    const BracketCalibration* calibration = nullptr;
    if (!request.small_only() && !request.options().correctness_only()) {
      auto measured = Calibration();
      if (!measured.ok()) return fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(measured.status().message()));
      calibration = &*calibration_;
    }
    // A fresh host for every candidate: nothing it leaves behind reaches the next one.
    auto host_options = HostOptions(request.library_path());
    if (!host_options.ok()) return fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(host_options.status().message()));
    if (!request.small_only()) {  // the task matrix is prepared only past the smoke stage
      auto shared = (*context)->SharedMatrix();
      if (!shared.ok()) return fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(shared.status().message()));
      host_options->task_matrix = *shared;
    }
    auto host = HostFor(*host_options, request.library_path());
    if (!host.ok()) {
      return fail(absl::IsFailedPrecondition(host.status()) ? v1::FAILURE_CATEGORY_COMPILE : v1::FAILURE_CATEGORY_CRASH,
                  fmt::format("the candidate host: {}", host.status().message()));
    }
    const int out = out_;
    result = EvaluateCandidate(request, **host, calibration, **context, baselines,
                               [out](v1::EvalStage stage) {
                                 v1::RunnerEvent event;
                                 event.set_stage_entered(stage);
                                 (void)WriteFrame(out, event);
                               },
                               lost, share_.get());
    result.set_gpu_name(device_.name);
    result.set_arch(device_.arch);
    // The candidate's own output, for the run log (the evaluator treats it as untrusted text).
    bool asked = false;
    const std::string layers = HostSandboxLayerList(&asked);
    std::string log = fmt::format("[sandbox] candidate host layers: {}{}\n", layers,
                                  asked ? " (SPARSEDITTO_HOST_SANDBOX)" : " (default)");
    if (const std::string host_log = (*host)->Log(); !host_log.empty()) log += "[candidate host]\n" + host_log;
    result.set_run_log(log);
    FlushStepTrace(request.candidate_id());
    return result;
  }

  // A host for `options` that has loaded `library_path`: the one spawned ahead when it was spawned with
  // the same options and is still running (its start, CUDA included, then overlapped the judge's wait
  // for this request), else a fresh one. A host spawned ahead that died before being asked anything is
  // not the candidate's doing: a fresh host is started instead. Errors: CandidateHost::Start's.
  absl::StatusOr<std::unique_ptr<CandidateHost>> HostFor(const CandidateHostOptions& options,
                                                         const std::string& library_path) {
    std::unique_ptr<CandidateHost> ahead = std::move(ahead_);
    last_host_options_ = options;
    if (ahead != nullptr && ahead->options() == options && ahead->StillRunning()) {
      ScopedStep step("runner: candidate host open (spawned ahead: lockdown, load)");
      if (absl::Status s = ahead->Open(library_path, flusher_.buffer(), flusher_.bytes()); !s.ok()) return s;
      return ahead;
    }
    ahead.reset();
    ScopedStep step("runner: candidate host start (spawn, sandbox, CUDA, load)");
    return CandidateHost::Start(options, library_path, flusher_.buffer(), flusher_.bytes());
  }

  // After an evaluation's reply (its host is gone by then: no two candidates' hosts ever overlap, and
  // this one has nothing loaded): spawns the host of the next candidate with the last one's options,
  // when they allow it (CanSpawnAhead). A failure here is not reported: the next evaluation starts its
  // own host and reports that one's error.
  // Not on a shared GPU: the host's CUDA start would run outside any lock, beside another runner's timing.
  void SpawnAhead() {
    ahead_.reset();
    if (share_ != nullptr || !last_host_options_ || !CanSpawnAhead(*last_host_options_)) return;
    ScopedStep step("runner: candidate host spawned ahead");
    auto spawned = CandidateHost::Spawn(*last_host_options_);
    if (spawned.ok()) ahead_ = *std::move(spawned);
  }

  // The host's sandbox: SPARSEDITTO_HOST_SANDBOX (a layer list, or "off" to run candidates
  // unconfined, which must be asked for) or the default layers.
  absl::StatusOr<CandidateHostOptions> HostOptions(const std::string& library_path) const {
    CandidateHostOptions options;
    options.host_path = host_path_;
    const std::string layers = HostSandboxLayerList();
    const std::string folder = library_path.empty() ? "/nonexistent" : library_path.substr(0, library_path.rfind('/'));
    if (absl::Status s = ApplyHostSandboxLayers(layers, host_path_, folder, &options); !s.ok()) return s;
    return options;
  }

  // The judge's bracket calibration, measured once with a host that loads nothing.
  absl::StatusOr<BracketCalibration> Calibration() {
    if (calibration_) return *calibration_;
    GpuShare::Scoped alone(share_.get(), GpuShare::Mode::kExclusive);  // it times
    if (!alone.status().ok()) return alone.status();
    auto host_options = HostOptions("");
    if (!host_options.ok()) return host_options.status();
    auto null_host = CandidateHost::Start(*host_options, "", flusher_.buffer(), flusher_.bytes());
    if (!null_host.ok()) return null_host.status();
    auto any = MakeIpcBuffer(flusher_.buffer(), 0, 256);
    if (!any.ok()) return any.status();
    auto measured = CalibrateBracket(**null_host, *any);
    if (!measured.ok()) return measured.status();
    calibration_ = *measured;
    fmt::print(stderr, "sparseditto-runner: bracket calibration: fixed {:.4f} ms, per trial {:.4f} ms, noise {:.4f} ms\n",
               calibration_->fixed_ms, calibration_->per_trial_ms, calibration_->noise_ms);
    return *calibration_;
  }

  int in_;
  int out_;
  Device device_;
  L2Flusher flusher_;
  std::map<std::string, std::unique_ptr<TaskContext>> contexts_;
  std::optional<gpu::DeviceLimits> limits_;  // measured once per process
  std::optional<BracketCalibration> calibration_;
  std::string host_path_ = HostBinaryBesideUs();
  std::unique_ptr<GpuShare> share_;
  // The options of the last candidate's host, and the host spawned ahead with them (SpawnAhead).
  // Declared last: destroyed (killed) first.
  std::optional<CandidateHostOptions> last_host_options_;
  std::unique_ptr<CandidateHost> ahead_;
};

int Main(int argc, char** argv) {
  int in_fd = 3, out_fd = 4;
  bool one_request = false;
  if (argc == 5 && std::strcmp(argv[1], "--request") == 0 && std::strcmp(argv[3], "--reply") == 0) {
    in_fd = open(argv[2], O_RDONLY | O_CLOEXEC);
    out_fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    one_request = true;
    if (in_fd < 0 || out_fd < 0) {
      fmt::print(stderr, "sparseditto-runner: cannot open {} or {}: {}\n", argv[2], argv[4], std::strerror(errno));
      return 2;
    }
  } else if (argc != 1) {
    fmt::print(stderr, "usage: sparseditto-runner [--request FILE --reply FILE]  (default: fds 3 and 4)\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  cudaDeviceProp prop;
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fmt::print(stderr, "sparseditto-runner: no usable CUDA device: {}\n", cudaGetErrorString(cudaGetLastError()));
    return kExitNoCuda;
  }
  auto flusher = L2Flusher::Create();
  if (!flusher.ok()) {
    fmt::print(stderr, "sparseditto-runner: {}\n", flusher.status().message());
    return kExitNoCuda;
  }
  const Device device{prop.name, fmt::format("sm_{}{}", prop.major, prop.minor), prop.multiProcessorCount,
                      static_cast<int64_t>(prop.sharedMemPerBlockOptin),
                      static_cast<int64_t>(prop.sharedMemPerMultiprocessor)};
  // SPARSEDITTO_GPU_SHARE_DIR: other runners share this GPU (RunnerClientOptions::gpu_share_dir); the
  // lock files are named by the GPU's UUID, so every runner on it finds the same ones.
  std::unique_ptr<GpuShare> share;
  if (const char* dir = std::getenv("SPARSEDITTO_GPU_SHARE_DIR"); dir != nullptr && *dir != 0) {
    std::string uuid;
    for (unsigned char byte : prop.uuid.bytes) uuid += fmt::format("{:02x}", byte);
    auto opened = GpuShare::Open(dir, uuid);
    if (!opened.ok()) {
      fmt::print(stderr, "sparseditto-runner: cannot share the GPU: {}\n", opened.status().message());
      return 2;
    }
    share = *std::move(opened);
  }
  Runner runner(in_fd, out_fd, device, *std::move(flusher), std::move(share));
  return runner.Serve(one_request);
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
