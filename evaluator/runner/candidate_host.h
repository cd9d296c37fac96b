// The judge's side of one candidate host process (evaluator/host/, proto/host.proto): the only
// process that loads the candidate's library. The judge (this process) never runs candidate code;
// it starts a fresh host for every candidate (so nothing a candidate leaves behind, threads, signal
// handlers, mappings, device allocations or limits, outlives its evaluation), hands it the judge's own
// device buffers through CUDA IPC, and gates every run with two interprocess events: the host's
// stream waits for `start_event` (which the judge records behind its closed gate) and records
// `done_event` after the run. What the host replies is a claim: return codes and trial times are
// checked by the caller (ProblemRun) against outputs and a bracket the judge measures itself.
// Not thread-safe: one thread drives a CandidateHost.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/subprocess.h"
#include "evaluator/runner/shared_matrix.h"
#include "evaluator/sandbox/sandbox_policy.h"
#include "host.pb.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

struct CandidateHostOptions {
  std::string host_path;  // the sparseditto-candidate-host binary; required
  // How long one request may take before the host is killed (prepare of a large matrix included).
  double request_timeout_seconds = 120;
  int64_t max_log_bytes = 1 << 20;  // the candidate's stdout/stderr kept per stream
  // Host memory (resident) the host may use while the judge waits for a reply; beyond it the host is
  // killed and the request fails ResourceExhausted. Generous: a candidate's prepare of a large matrix
  // holds a few copies of it (the largest task matrices are a few hundred MB); the limit is there so
  // that one candidate cannot take the machine. 8 GiB, not more: on the H200 a host populating memory
  // reached 32 GiB only after the smoke stage's 20 s limit, so it read TIMEOUT instead of this CRASH.
  int64_t max_resident_bytes = int64_t{8} << 30;
  // Our variables the host may see; nothing else of our environment reaches it (no secrets).
  std::vector<std::string> inherit_variables = {"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "PATH",
                                                "NVIDIA_TF32_OVERRIDE"};
  // The layers set up before the host's program starts (evaluator/sandbox); nullopt: none.
  std::optional<SandboxPolicy> sandbox;
  // The layers the host applies to itself after CUDA is up and before it loads the library
  // (evaluator/host/host_lockdown.h): "landlock", "seccomp", comma-separated.
  std::string in_process_layers;
  // The task's matrix in a sealed memory file (TaskContext::SharedMatrix), not owned; must outlive the
  // host. Given: the host maps it at start, and Prepare of that very matrix (its source()) sends no
  // arrays. Null: every Prepare sends its matrix over the request pipe (a copy per host, 16 MB a
  // frame: about 0.1-0.3 s for the 67 MB of a 2:4 4096-square task).
  const SharedMatrixFile* task_matrix = nullptr;

  bool operator==(const CandidateHostOptions&) const = default;
};

// The steps of a host's Open, in the order of HostReply.open_step_ms: with SPARSEDITTO_RUNNER_TRACE,
// Open adds the host's own times to the runner's step trace under these labels (measurement only).
inline constexpr const char* kHostOpenSteps[] = {
    "host open (host clock): IPC events and stream", "host open (host clock): map the flush buffer",
    "host open (host clock): map the task matrix", "host open (host clock): lockdown",
    "host open (host clock): load the library"};

// Adds an Open reply's open_step_ms to the step trace under kHostOpenSteps (no-op with the trace off).
// The host's numbers are claims: entries beyond the known steps, negative, non-finite or absurd
// (over 10^7 ms) are dropped.
void TraceHostOpenSteps(const v1::HostReply& reply);

// Whether a host with these options can be spawned before the library it will load is known
// (CandidateHost::Spawn, then Open): every layer applied at spawn is then the same for any library.
// False with the spawn-time Landlock layer ("spawn-landlock"), whose rules name the library's folder.
bool CanSpawnAhead(const CandidateHostOptions& options);

// The candidate host's layers from a comma list (SPARSEDITTO_HOST_SANDBOX, runner_main.cc), as
// ParseHostSandboxLayers (evaluator/sandbox/host_layers.h) reads it, into `options`. Errors: its InvalidArgument.
absl::Status ApplyHostSandboxLayers(const std::string& layers, const std::string& host_binary,
                                    const std::string& library_dir, CandidateHostOptions* options);

// A range of one of the judge's device allocations, as the host is told about it.
// Errors of MakeIpcBuffer: the cudaIpcGetMemHandle error (e.g. memory not from cudaMalloc).
absl::StatusOr<v1::IpcBuffer> MakeIpcBuffer(void* allocation_base, size_t offset, size_t bytes);

// How prepare ended in the host: `ok` false with the candidate's message and code, or a CUDA error.
struct HostPrepareOutcome {
  bool ok = false;
  int return_code = 0;
  std::string error;
  double prepare_ms = 0;  // the host's clock: reported, not verified (format-conversion cost only)
  bool layout_refused = false;  // prepare was not called: the library's sparseditto_layouts() lacks the layout
};

class CandidateHost {
 public:
  // Spawn then Open: a host that has loaded `library_path` (an empty path starts a host that loads
  // nothing and whose runs do nothing: the judge's calibration of its own measurement). Errors: Spawn's
  // and Open's.
  static absl::StatusOr<std::unique_ptr<CandidateHost>> Start(const CandidateHostOptions& options,
                                                              const std::string& library_path, void* flush,
                                                              size_t flush_bytes);
  // Starts the host process under options.sandbox and returns without waiting for it: the host brings
  // CUDA up by itself meanwhile, and has loaded nothing (no candidate code exists in it) until Open.
  // So the judge can spawn the next candidate's host while it waits for that candidate
  // (runner_main.cc keeps one spawned ahead). The judge's interprocess events are made here.
  // Errors: Unavailable (the process could not start), or a CUDA error making the events.
  static absl::StatusOr<std::unique_ptr<CandidateHost>> Spawn(const CandidateHostOptions& options);
  // Has a spawned host open the judge's events, map `flush` (the judge's L2 flush buffer: an
  // allocation base and its size) and the task matrix, lock itself down and load `library_path`.
  // Once only. Errors: Unavailable (the host died, before or during: the message carries its output),
  // FailedPrecondition (the host refused or failed to load the library: its message, e.g. a dlopen
  // error or a missing entry point; also a second Open), DeadlineExceeded.
  absl::Status Open(const std::string& library_path, void* flush, size_t flush_bytes);
  ~CandidateHost();  // kills the host's whole process group; the events are destroyed
  CandidateHost(const CandidateHost&) = delete;
  CandidateHost& operator=(const CandidateHost&) = delete;

  // Sends the matrix (in chunks, unless it is options.task_matrix's source) and calls prepare with
  // run's operands in `layout` (the host refuses, layout_refused, when the library's mask lacks it).
  // Errors: Unavailable / DeadlineExceeded (the host died or hung; its state is unknown: do not use it again).
  absl::StatusOr<HostPrepareOutcome> Prepare(const CsrMatrix& matrix, const v1::PatternSpec& pattern, v1::Dtype dtype,
                                             const std::vector<int64_t>& n_values, v1::Layout layout);

  // Has the host enqueue run(B, C, n) between the start and done events; returns the candidate's
  // return code. REQUIRES: start_event() recorded by the caller behind a closed gate first.
  absl::StatusOr<int> EnqueueRun(int64_t n, const v1::IpcBuffer& b, const v1::IpcBuffer& c);

  // Has the host enqueue a timed batch (flush, event, run, event per pair) between the events; the
  // candidate's return code (nonzero: the batch stopped there). Collect() then returns the host's
  // claimed trial times in ms once the batch ran.
  absl::StatusOr<int> EnqueueBatch(int64_t n, const std::vector<v1::IpcBuffer>& b, const std::vector<v1::IpcBuffer>& c);
  absl::StatusOr<std::vector<double>> Collect();

  // Whether the host's stream failed: OK while its work runs or is done, Aborted with the host's CUDA
  // error once a kernel faulted (its context is then lost: the done event will never be recorded).
  // A claim like any other: a host that lies "running" only runs into the caller's deadline.
  // Errors also: Unavailable / DeadlineExceeded (the host died or hung).
  absl::Status QueryStream();

  // Calls release and unmaps the judge's buffers in the host (before the judge frees them).
  absl::Status Release();

  cudaEvent_t start_event() const { return start_; }
  cudaEvent_t done_event() const { return done_; }
  bool alive() const { return child_ != nullptr && !child_->outcome().has_value(); }
  bool opened() const { return opened_; }
  // alive(), after a look at whether the process exited since (a spawned host waiting for Open).
  bool StillRunning();
  const CandidateHostOptions& options() const { return options_; }
  // The host's output since it started (untrusted text: for the run log only).
  std::string Log() const;

 private:
  CandidateHost() = default;
  absl::StatusOr<v1::HostReply> Call(const v1::HostRequest& request);

  CandidateHostOptions options_;
  std::unique_ptr<ChildProcess> child_;
  cudaEvent_t start_ = nullptr, done_ = nullptr;
  bool opened_ = false;  // Open was asked (whatever it answered)
};

}  // namespace sparseditto
