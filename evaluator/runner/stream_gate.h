// The host side of the stream gate (LaunchStreamGate, evaluator/runner/harness_kernels.h): ints in
// mapped pinned memory, [0] the open flag the host writes, [1] what the gate kernel reports (1: released
// by the host, 0: timed out) and one resident flag a gate CTA. Close() arms them and enqueues the gate kernel, which
// holds the stream closed until Open() or until its timeout passes; ReleasedByHost() then says which
// of the two ended it. The timing loop (timing.cc) closes the stream while a trial is enqueued;
// ProblemRun (problem_run.cc) closes it around each checked run to catch work on other streams.
//
//   SD_ASSIGN_OR_RETURN(StreamGate gate, StreamGate::Create("stream gate"));
//   SD_RETURN_IF_ERROR(gate.Close(stream, timeout_ns, "stream gate"));
//   ... enqueue work on `stream`: none of it runs yet ...
//   gate.Open();
//   cudaStreamSynchronize(stream);
//   if (!gate.ReleasedByHost()) ... the gate timed out before Open() ...
//
// Ownership: a StreamGate owns one cudaHostAlloc(cudaHostAllocMapped) allocation (2 + gate CTAs ints) and
// frees it with cudaFreeHost in its destructor (or when moved onto). Move-only; a default-constructed
// or moved-from gate owns nothing. The destructor does not open the gate: callers Open() on every path
// after a successful Close(), and let the stream pass the gate (or the timeout run out) before the
// gate is destroyed, since the kernel reads the pair until then.
// Errors: Status from gpu::CudaStatus (evaluator/gpu/cuda_status.h) whose message begins with the
// caller's `what`. Failures while freeing cannot be reported from a destructor and are ignored.
// Thread-safety: none; Create, Close, Open and ReleasedByHost are called from one thread. (The pair is
// written and read with sequentially consistent atomics so that host and gate kernel see each other's
// stores; that is not a lock between host threads.) The current CUDA device is used.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/runner/harness_kernels.h"

namespace sparseditto {

// How long a gate holds its stream before it gives up, on the device clock: the timing loop's trials
// (timing.cc) and ProblemRun's checked runs (problem_run.cc) both close their gates with it. A run that
// waits on work of its own stream (which the closed gate holds back) is released after this long.
inline constexpr int64_t kStreamGateTimeoutNs = 200'000'000;

// How long Close() waits (wall clock) for a whole-GPU gate's CTAs to become resident.
inline constexpr std::chrono::milliseconds kGateFillTimeout{1000};

// What a closed gate holds. kStream: the one stream it is enqueued on (a one-CTA kernel); work on other
// streams runs. kWholeGpu: that stream, and, once Close() returns, every other stream of the process as
// well: the gate kernel holds every SM's shared memory, so no other kernel's CTA can start until it opens.
// The timing loop uses it so that work a candidate starts on a stream of its own while the trial is
// held runs inside the timed window, not before it (a side stream joined back by an event would
// otherwise hide its time from the events).
enum class GateScope { kStream, kWholeGpu };

class StreamGate {
 public:
  StreamGate() = default;
  ~StreamGate();
  StreamGate(StreamGate&& other) noexcept;
  StreamGate& operator=(StreamGate&& other) noexcept;
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Allocates the flags (open, no gate finished yet); for kWholeGpu also reads the SM count and
  // shared-memory limit of the current device. Errors: cudaHostAlloc's, cudaHostGetDevicePointer's or
  // the device queries', as "<what> failed: ..." (ResourceExhausted when pinned memory runs out);
  // nothing is left allocated then.
  static absl::StatusOr<StreamGate> Create(const char* what, GateScope scope = GateScope::kStream);

  // Arms the pair (open flag 0, report -1) and enqueues the gate kernel on `stream`: work enqueued on
  // `stream` after it waits until Open() or until `timeout_ns` has passed on the device clock. Work on
  // other streams is not held. Errors: the launch's, from cudaGetLastError, as "<what> failed: ..."
  // (which may also be an earlier asynchronous error of this thread; whether the kernel was enqueued
  // is then unknown, and the pair stays armed). kWholeGpu: returns once every CTA of the gate is
  // resident; Unavailable when they are not within kGateFillTimeout (the caller must still Open()).
  // REQUIRES: made by Create; the previous gate of this object has been passed by its stream.
  absl::Status Close(cudaStream_t stream, int64_t timeout_ns, const char* what);

  // Lets the gate kernel finish (a store to mapped memory; no CUDA call, cannot fail). Does not wait
  // for it. Harmless when the gate has already timed out or was never enqueued.
  // REQUIRES: made by Create.
  void Open() { __atomic_store_n(&host_[0], 1, __ATOMIC_SEQ_CST); }

  // True when the last gate enqueued by Close() has finished because Open() released it; false when
  // it timed out, has not finished yet (read it after synchronizing with its stream), or no gate has
  // been closed.
  // REQUIRES: made by Create.
  bool ReleasedByHost() const { return __atomic_load_n(&host_[1], __ATOMIC_SEQ_CST) == 1; }

 private:
  int* host_ = nullptr;    // mapped pinned: [0] open flag, [1] released by host (1) or timed out (0),
                           // [2 + i] gate CTA i is resident (shape_.ctas of them)
  int* device_ = nullptr;  // the same ints, device view
  GateShape shape_;        // {1, 0} for kStream
};

}  // namespace sparseditto
