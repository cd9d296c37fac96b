// The judge's own measurement of work a candidate host does (DESIGN.md §3.6): a batch of trials is
// enqueued by the host behind the judge's closed gate, and the judge stamps the device's global timer
// on its own stream right before it records the start event and right after the host's done event:
// the bracket. The host's events give each trial's time (as precise as in-process events); the
// bracket says how much device time the whole batch took, which the host cannot write. Calibrated
// once per judge with a host that loads nothing (CandidateHost with an empty library): the fixed cost
// of a bracket (two context switches, the events) and the per-trial cost (flush, events).
// Not thread-safe; the current CUDA device is used.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "evaluator/gpu/device_buffer.h"
#include "evaluator/runner/candidate_host.h"
#include "evaluator/runner/stream_gate.h"

namespace sparseditto {

// One bracketed batch as measured.
struct BatchMeasurement {
  int return_code = 0;             // the candidate's (nonzero: the batch stopped early)
  double bracket_ms = 0;           // the judge's stamps: start recorded .. done seen
  std::vector<double> trial_ms;    // the host's claims, one per trial
  bool written_before_start = false;  // some C changed while the gate held the start event back
};

// How long the gate stays closed after the host enqueued a watched batch before `watch` is looked at:
// work the host did not hold behind the start event (another stream, its own context's time slices)
// has had several time slices by then.
inline constexpr std::chrono::milliseconds kOutsideStreamLookDelay{5};

// Runs one batch: closes `gate` on `judge_stream`, stamps, records the host's start event, has the
// host enqueue the batch, checks `watch` (device buffers and their sizes, 4-byte aligned, that must
// still hold 0xff: every C of the batch, whole; the host enqueues every trial's run while the gate is
// closed, so side work of any trial could land before it opens) did not change while the gate was
// closed (a scan on the device, LaunchAnyByteDiffers), opens the gate, waits for done, stamps.
// With `watch`, the gate stays closed kOutsideStreamLookDelay after the host's enqueue returned, and
// `while_held` (when given) runs in that time, before the look, told when the gate was closed (it must
// keep the gate's whole closed time well under kStreamGateTimeoutNs): the judge's own work, which must
// leave nothing running on the device when it returns (the batch starts when the gate opens, and
// the bracket must hold the batch alone); the delay counts from the enqueue, whatever while_held
// took. while_held reports its own outcome (it is not run when the enqueue failed).
// Errors: the host's (Unavailable, DeadlineExceeded: the host must be replaced, and so must this
// process, whose stream may wait for ever), CUDA errors.
absl::StatusOr<BatchMeasurement> RunBracketedBatch(CandidateHost& host, StreamGate& gate, cudaStream_t judge_stream,
                                                   cudaStream_t read_stream, int64_t n,
                                                   const std::vector<v1::IpcBuffer>& b,
                                                   const std::vector<v1::IpcBuffer>& c,
                                                   const std::vector<std::pair<const void*, size_t>>& watch,
                                                   double timeout_seconds,
                                                   const std::function<void(std::chrono::steady_clock::time_point)>&
                                                       while_held = nullptr);

// Waits for `stream` (which waits for the host's done event) at most `seconds`, giving up early when
// the host has died or says its stream failed (CandidateHost::QueryStream; either way it will never
// record done). Errors: DeadlineExceeded, Unavailable (the host died), Aborted (its work faulted on
// the device): the stream then waits for ever and this process must be replaced; CUDA errors.
absl::Status WaitWhileHostAlive(cudaStream_t stream, CandidateHost& host, double seconds);

// What a bracket costs beyond the trials, from the null host.
struct BracketCalibration {
  double fixed_ms = 0;       // per batch: switches into the host's context and back, events
  double per_trial_ms = 0;   // per trial: the flush and the two events
  double noise_ms = 0;       // the calibration's own spread (p90 - p10 of its brackets, the larger)
  // How far a bracket of `trials` trials may exceed fixed + trials x per_trial + Σ claims before the
  // claims are not believed: 4 x noise + 30 us + 0.5% of the flushes + 2% of the claims. What it lets
  // through is the stated limit of the check (with 8 us of noise; candidate_host_test has the table):
  // about 9% of a 50 us kernel's time and 2.3% of a 1 ms one's at 20 trials a batch, about 30% of a
  // 5 us one's at 50 (the most trials a batch holds, problem_run_timing.cc), on top of the
  // calibration's own per-trial error (4% of the flush cost, 1.3 us, seen on the H200), which a
  // forger also gains. Honest times are the host's events, as precise as in-process events.
  double Tolerance(int trials, double claimed_ms) const;
  double Explained(int trials, double claimed_ms) const { return fixed_ms + trials * per_trial_ms + claimed_ms; }
};

// How many batches of one timing may be timed again after their bracket disagreed with the host's claims, once
// `batches` batches (the current one included) have run: one, and one more for every 20. A timing of many short
// batches meets more device hiccups (on an H100, 2026-12-07, about 0.65 ms of device time no trial reports,
// twice in one DLMC fp32 timing of ~50 batches an n, rejected seven honest seeds of 1173 timings when one
// retime was allowed). A re-timed batch's claims are dropped, so a forged claim is never counted, and a host that
// under-reports in every batch is still rejected at its second. What a host can gain: by forging on purpose in
// its slowest batches it drops them, at most 1 in 20 (the timing is the median of batch means, so this moves it
// by less than the spread between batches, which the report shows).
inline int BracketRetimesAllowed(int batches) { return 1 + (batches > 0 ? batches : 0) / 20; }

// Calibrates with a null host: `rounds` batches of 1 trial and of `wide` trials, interleaved.
absl::StatusOr<BracketCalibration> CalibrateBracket(CandidateHost& null_host, const v1::IpcBuffer& any_buffer,
                                                    int rounds = 15, int wide = 16);

}  // namespace sparseditto
