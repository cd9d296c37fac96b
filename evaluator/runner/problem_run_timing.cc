// ProblemRun::Time: stage 5 of the cascade for a candidate that runs in its own host process
// (DESIGN.md §3.4, §3.6). Trials run in batches on fresh B and poisoned C, several pairs per batch so
// that no output can be reused from another trial; each batch is bracketed by the judge (bracket.h);
// the host's per-trial event times count only when their sum, the flushes and the calibrated switch
// cost explain the bracket, and then only as the batch's mean (what the bracket verifies); outputs of
// every batch, picked by the judge after the batch, are checked against the reference, so a candidate
// that skips work in some timed trials is caught with a probability that grows with every batch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/runner/bracket.h"
#include "evaluator/runner/harness_kernels.h"
#include "evaluator/runner/problem_run.h"
#include "evaluator/runner/step_trace.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr size_t kBatchBytesCap = size_t{1} << 30;  // B and C of all the trials in one batch
constexpr size_t kSliceAlignment = size_t{2} << 20;  // a timed B or C in its allocation (ensure_pairs)
// A batch holds about kBatchWorkMs of claimed work, at most kMaxBatchTrials trials: the bracket's
// fixed tolerance (bracket.h, about 50 us) is then shared by many trials of a short kernel. Not more:
// the calibration's per-trial cost (a null host's flush and events) was 4% off a real batch's on the
// H200 (32.7 against 31.4 us), an error that grows with the batch (98 trials of dense cuBLAS were
// wrongly REJECTED at a cap of 200).
constexpr int kMaxBatchTrials = 50;
// SPARSEDITTO_MAX_BATCH_TRIALS (2..200) sets another cap, to compare batch sizes on a GPU.
int MaxBatchTrials() {
  static const int cap = [] {
    const char* asked = std::getenv("SPARSEDITTO_MAX_BATCH_TRIALS");
    const int value = asked != nullptr ? std::atoi(asked) : 0;
    return value >= 2 && value <= 200 ? value : kMaxBatchTrials;
  }();
  return cap;
}
constexpr double kBatchWorkMs = 2.0;
// The judge's checks of the previous batch's outputs run while the next batch waits behind the gate for
// the outside-stream look, until about this long after the gate closed (a quarter of its own time limit).
constexpr std::chrono::milliseconds kHeldChecksBudget{50};
// The reported time is the median over batches of each batch's mean claimed trial time: the bracket
// verifies a batch's sum, not how the host spreads it over its trials (a median of per-trial claims
// could be lowered by piling the time on a few trials). At least kMinBatches of them, fewer only when
// the time budget runs out (never fewer than kFewestBatches).
constexpr int kMinBatches = 8;
constexpr int kFewestBatches = 3;
// Claims higher than the bracket allows only slow the candidate down (its time is its batches'
// means), so that side is judged loosely: beyond the tolerance plus this share of the batch's
// calibrated flush cost (the calibration's own error, above), they are not believed either.
constexpr double kOverClaimShareOfFlushes = 0.10;
// A batch whose bracket disagrees with the host's times is timed again (its times dropped) up to
// BracketRetimesAllowed(batches so far) times in a timing before the disagreement is the verdict (bracket.h:
// honest kernels meet such batches now and then, a clock or a neighbour's hiccup), while a host that
// under-reports does so in the re-timed batch too. The dropped batch's outputs are still checked.
// Outputs checked per batch: one in ten, at least 2 and at most 20 (a candidate skipping work in a
// fraction f of its timed trials escapes a batch with probability (1 - f)^checks).
int CheckedPerBatch(int trials) { return std::clamp(trials / 10, 2, 20); }

}  // namespace

Verdict ProblemRun::Time(int64_t n, uint64_t seed, const v1::RunnerOptions& options,
                         v1::TimingStats* stats) {
  if (calibration_ == nullptr) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, "timing without a calibration");
  if (Verdict v = WarmUp(n); !v.ok()) return v;  // no module load inside a gated batch
  const int warmups = options.warmup_runs() > 0 ? options.warmup_runs() : 3;
  const int min_trials = options.min_trials() > 0 ? options.min_trials() : 20;
  const int max_trials = std::max(min_trials, options.max_trials() > 0 ? options.max_trials() : 200);
  const double budget_s = options.max_timing_seconds() > 0 ? options.max_timing_seconds() : 2.0;
  const double stable = options.stable_spread() > 0 ? options.stable_spread() : 0.02;
  const size_t elem = DtypeBytes(dtype_);
  const size_t b_bytes = elem * matrix_->cols * n, c_bytes = elem * matrix_->rows * n;
  // As many pairs as memory allows (kBatchBytesCap), at most kMaxBatchTrials: a short kernel gets more
  // trials a batch (below), so that the bracket's fixed noise is small beside the batch's work.
  const int most = static_cast<int>(std::clamp<size_t>(kBatchBytesCap / (b_bytes + c_bytes), 2, MaxBatchTrials()));
  // Kept until this ProblemRun ends (after the host's release has unmapped them).
  TimedBuffers& timed = timed_[n];
  // The pairs added at once are slices of one B and one C allocation, each exported once: the host opens
  // two IPC handles for them, not two a pair (a full batch holds up to kMaxBatchTrials pairs). Slices are
  // kSliceAlignment apart, so that each starts aligned as a fresh allocation would.
  auto ensure_pairs = [&](int count) -> absl::Status {
    const int have = static_cast<int>(timed.b.size());
    if (count <= have) return absl::OkStatus();
    const size_t b_slice = (b_bytes + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
    const size_t c_slice = (c_bytes + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
    SD_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, gpu::DeviceBuffer::Allocate(b_slice * (count - have), "timed B"));
    SD_ASSIGN_OR_RETURN(gpu::DeviceBuffer c, gpu::DeviceBuffer::Allocate(c_slice * (count - have), "timed C"));
    SD_ASSIGN_OR_RETURN(const v1::IpcBuffer b_whole, MakeIpcBuffer(b.get(), 0, b_bytes));
    SD_ASSIGN_OR_RETURN(const v1::IpcBuffer c_whole, MakeIpcBuffer(c.get(), 0, c_bytes));
    for (int i = 0; i < count - have; ++i) {
      timed.b.push_back(b.as<char>() + i * b_slice);
      timed.c.push_back(c.as<char>() + i * c_slice);
      timed.b_ipc.push_back(b_whole);
      timed.b_ipc.back().set_offset(i * b_slice);
      timed.c_ipc.push_back(c_whole);
      timed.c_ipc.back().set_offset(i * c_slice);
    }
    timed.slabs.push_back(std::move(b));
    timed.slabs.push_back(std::move(c));
    return absl::OkStatus();
  };
  int per_batch = std::min(most, std::max(warmups, 2));
  if (absl::Status s = ensure_pairs(per_batch); !s.ok()) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(s.message()));
  if (timed.fresh.size() == 0) {
    // Scratch for the checks: B drawn again from its seed (the judge's copy, not the one the host had)
    // and |B|.
    auto fresh = gpu::DeviceBuffer::Allocate(b_bytes, "B as drawn");
    auto abs_b = fresh.ok() ? gpu::DeviceBuffer::Allocate(b_bytes, "|B| as drawn") : fresh.status();
    if (!abs_b.ok()) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(abs_b.status().message()));
    timed.fresh = *std::move(fresh);
    timed.abs_b = *std::move(abs_b);
  }
  const std::vector<void*>& cs = timed.c;
  const std::vector<v1::IpcBuffer>& b_ipc = timed.b_ipc;
  const std::vector<v1::IpcBuffer>& c_ipc = timed.c_ipc;
  gpu::DeviceBuffer* fresh = &timed.fresh;
  gpu::DeviceBuffer* abs_b = &timed.abs_b;
  std::mt19937_64 pick(seed ^ 0x5bd1e995u);  // which outputs are checked: the host cannot know
  std::vector<double> event_ms, judged_ms;
  double worst_excess = -1e9, worst_tolerance = 0;
  int batches = 0, total_trials = 0, retimed = 0;
  const auto begin = std::chrono::steady_clock::now();
  const std::string what = fmt::format("{}: timing n={}", name_, n);
  // The picked outputs of a batch are copied aside and checked while the next batch waits behind the
  // gate for the outside-stream look (RunBracketedBatch's while_held): the look's delay is paid once for
  // both. The last batch's are checked after the loop, and a batch whose bracket fails has its own
  // checked first, so a wrong output is still reported before a bracket the times disagree with.
  struct Picked {
    uint64_t drawn;  // the seed of the B the trial read
    std::string label;
  };
  std::vector<Picked> pending;  // its outputs in timed.picked[0 ..]; [0, checked) are done
  size_t checked = 0;
  Verdict pending_verdict;
  absl::Status pending_error;  // the judge's own CUDA failure in a check
  std::chrono::duration<double> one_check{kHeldChecksBudget};  // the last check's time; none yet: too long
  // Checks the pending outputs; with `held_since` (in the window: when the gate closed), only as many as
  // fit kHeldChecksBudget from then by the last check's time, so that the gate, which holds for at most
  // kStreamGateTimeoutNs, never opens by itself while the judge works (the rest are checked after the
  // batch; none in the window when the host's enqueue took the budget already).
  auto check_pending = [&](std::optional<std::chrono::steady_clock::time_point> held_since) {
    if (checked == pending.size()) return;
    ScopedStep checked_step("timing: check picked outputs");
    for (; checked < pending.size() && pending_verdict.ok() && pending_error.ok(); ++checked) {
      const auto now = std::chrono::steady_clock::now();
      if (held_since && now + one_check > *held_since + kHeldChecksBudget) return;
      const size_t k = checked;
      // The reference from the very B the trial read (a B the run modified fails here too).
      absl::Status s = gpu::CudaStatus(FillUniform(abs_b->get(), matrix_->cols * n, dtype_, pending[k].drawn, true,
                                                   harness_stream_), "fill |B|");
      if (s.ok()) {
        s = gpu::CudaStatus(FillUniform(fresh->get(), matrix_->cols * n, dtype_, pending[k].drawn, false, harness_stream_),
                            "fill B");
      }
      if (s.ok()) s = oracle_->Compute(fresh->get(), abs_b->get(), n, ref_.as<float>(), abs_sum_.as<float>(), harness_stream_);
      if (s.ok()) s = ReadOutputAsFloat(timed.picked[k].get(), matrix_->rows * n, nullptr);  // synchronises
      if (!s.ok()) {  // made a verdict once the gate is open (CrashVerdict synchronises the device)
        pending_error = s;
        break;
      }
      v1::CorrectnessCheck check;
      pending_verdict = CheckAgainstReference(n, pending[k].label, &check);  // synchronises
      if (!pending_verdict.ok()) {
        pending_verdict.detail = fmt::format("a timed trial's output is wrong (work skipped while timed?): {}",
                                             pending_verdict.detail);
      }
      one_check = std::chrono::steady_clock::now() - now;
    }
    if (checked == pending.size()) pending.clear(), checked = 0;
  };
  for (bool again_warm = true;;) {
    const bool warm = again_warm;
    again_warm = false;
    const int batch = batches++;
    // Fresh B in every pair, C poisoned: no trial can reuse another's output.
    ScopedStep fill_step("timing: fill the batch's B and C");
    for (int i = 0; i < per_batch; ++i) {
      absl::Status s = gpu::CudaStatus(FillUniform(timed.b[i], matrix_->cols * n, dtype_, seed + 1000003 * i + batch,
                                                   false, harness_stream_), "fill B");
      if (s.ok()) s = gpu::CudaStatus(cudaMemsetAsync(timed.c[i], 0xff, c_bytes, harness_stream_), "poison C");
      if (!s.ok()) return CrashVerdict(s, what);
    }
    if (absl::Status s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "fill"); !s.ok()) return CrashVerdict(s, what);
    fill_step.Stop();
    const int trials = warm ? std::min(per_batch, std::max(warmups, 1)) : per_batch;
    std::vector<v1::IpcBuffer> b_used(b_ipc.begin(), b_ipc.begin() + trials), c_used(c_ipc.begin(), c_ipc.begin() + trials);
    ScopedStep batch_step("timing: bracketed batch (gate, host run, events)");
    std::vector<std::pair<const void*, size_t>> watch;  // every C of the batch, whole
    for (int i = 0; i < trials; ++i) watch.emplace_back(cs[i], c_bytes);
    auto m = RunBracketedBatch(*host_, gate_, judge_stream_, harness_stream_, n, b_used, c_used, watch, 60,
                               [&](std::chrono::steady_clock::time_point closed_at) { check_pending(closed_at); });
    batch_step.Stop();
    check_pending(std::nullopt);  // what the window left (all of it when the enqueue failed)
    if (!pending_error.ok()) return CrashVerdict(pending_error, what);
    if (!pending_verdict.ok()) {
      // The previous batch's wrong output came first; this batch's failure may still have lost the host.
      if (!m.ok()) pending_verdict.context_lost = pending_verdict.context_lost || !absl::IsInternal(m.status());
      return pending_verdict;
    }
    if (!m.ok()) {
      Verdict v = Verdict::Fail(absl::IsDeadlineExceeded(m.status()) ? v1::FAILURE_CATEGORY_TIMEOUT
                                                                     : v1::FAILURE_CATEGORY_CRASH,
                                fmt::format("{}: {}", what, m.status().message()));
      v.context_lost = !absl::IsInternal(m.status());
      return v;
    }
    if (m->return_code != 0) return Verdict::Fail(v1::FAILURE_CATEGORY_CRASH, fmt::format("{}: run returned {}", what, m->return_code));
    if (m->written_before_start) {
      return Verdict::Fail(v1::FAILURE_CATEGORY_WRONG,
                           fmt::format("{}: work escaped the given stream: a timed output was written while the "
                                       "stream was held closed", what));
    }
    if (static_cast<int>(m->trial_ms.size()) != trials ||
        std::any_of(m->trial_ms.begin(), m->trial_ms.end(), [](double t) { return !std::isfinite(t) || t < 0; })) {
      return Verdict::Fail(v1::FAILURE_CATEGORY_REJECTED,
                           fmt::format("{}: the candidate host reported {} trial times for {} trials, or times that "
                                       "are not finite", what, m->trial_ms.size(), trials));
    }
    // The judge's pick of outputs to check, made now that the batch has run; copied aside before the
    // next batch's fill poisons them.
    std::vector<int> order(trials);
    for (int i = 0; i < trials; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), pick);
    {
      ScopedStep copy_step("timing: copy picked outputs aside");
      const int picks = std::min(trials, CheckedPerBatch(trials));
      for (int k = static_cast<int>(timed.picked.size()); k < picks; ++k) {
        auto copy = gpu::DeviceBuffer::Allocate(c_bytes, "picked C");
        if (!copy.ok()) return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(copy.status().message()));
        timed.picked.push_back(*std::move(copy));
      }
      absl::Status s;
      for (int k = 0; k < picks && s.ok(); ++k) {
        const int i = order[k];
        s = gpu::CudaStatus(cudaMemcpyAsync(timed.picked[k].get(), cs[i], c_bytes, cudaMemcpyDeviceToDevice,
                                            harness_stream_), "copy a picked C");
        pending.push_back({seed + 1000003 * i + batch, fmt::format("timed/n={}/batch={}/trial={}", n, batch, i)});
      }
      if (s.ok()) s = gpu::CudaStatus(cudaStreamSynchronize(harness_stream_), "copy picked C");
      if (!s.ok()) return CrashVerdict(s, what);
    }
    double claimed = 0;
    for (double t : m->trial_ms) claimed += t;
    const double excess = m->bracket_ms - calibration_->Explained(trials, claimed);
    const double tolerance = calibration_->Tolerance(trials, claimed);
    const double over_claim_tolerance = tolerance + kOverClaimShareOfFlushes * trials * calibration_->per_trial_ms;
    if (excess > tolerance || excess < -over_claim_tolerance) {
      check_pending(std::nullopt);  // a wrong output of this batch is the verdict before its bracket
      if (!pending_error.ok()) return CrashVerdict(pending_error, what);
      if (!pending_verdict.ok()) return pending_verdict;
      if (retimed < BracketRetimesAllowed(batches)) {  // its times are dropped; the same batch again
        ++retimed;
        again_warm = warm;
        continue;
      }
      return Verdict::Fail(
          v1::FAILURE_CATEGORY_REJECTED,
          fmt::format("{}: the candidate host's trial times disagree with the judge's bracket: {} trials reported "
                      "{:.4f} ms in all; with the flushes and the switch cost that explains {:.4f} ms, the bracket held "
                      "{:.4f} ms (tolerance {:.4f} ms): {}",
                      what, trials, claimed, calibration_->Explained(trials, claimed), m->bracket_ms,
                      excess > 0 ? tolerance : over_claim_tolerance,
                      excess > 0 ? "the reported times are lower than the device's" : "the reported times are higher "
                                                                                      "than the bracket allows"));
    }
    if (warm) {
      // Enough trials a batch for about kBatchWorkMs of claimed work (the warm-up's median says how
      // long a trial is), at least min_trials' worth.
      std::vector<double> sorted = m->trial_ms;
      std::sort(sorted.begin(), sorted.end());
      const double trial = std::max(sorted[sorted.size() / 2], 1e-4);
      per_batch = std::clamp(static_cast<int>(std::ceil(kBatchWorkMs / trial)), std::min(min_trials, most), most);
      ScopedStep pairs_step("timing: buffers for the batch (alloc, IPC export)");
      if (absl::Status s = ensure_pairs(per_batch); !s.ok()) {
        return Verdict::Fail(v1::FAILURE_CATEGORY_INTERNAL, std::string(s.message()));
      }
      continue;
    }
    worst_excess = std::max(worst_excess, excess);
    worst_tolerance = std::max(worst_tolerance, tolerance);
    const double judged = std::max(0.0, (m->bracket_ms - calibration_->fixed_ms) / trials - calibration_->per_trial_ms);
    event_ms.push_back(claimed / trials);  // one entry per batch: its mean claimed trial
    judged_ms.push_back(judged);
    total_trials += trials;
    const int measured = static_cast<int>(event_ms.size());
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (measured >= kFewestBatches && elapsed > budget_s) break;
    if (measured < kMinBatches || total_trials < min_trials) continue;
    if (total_trials >= max_trials) break;
    v1::TimingStats partial;
    Summarise(event_ms, judged_ms, {}, &partial);
    if ((partial.p90_ms() - partial.p10_ms()) / std::max(partial.median_ms(), 1e-9) < stable) break;
  }
  check_pending(std::nullopt);  // the last batch's outputs
  if (!pending_error.ok()) return CrashVerdict(pending_error, what);
  if (!pending_verdict.ok()) return pending_verdict;
  stats->set_n(n);
  Summarise(event_ms, judged_ms, {}, stats);
  stats->set_trials(total_trials);
  stats->set_verified_batches(batches - 1 - retimed);
  stats->set_bracket_excess_ms(worst_excess);
  stats->set_bracket_tolerance_ms(worst_tolerance);
  stats->set_bracket_retimed_batches(retimed);
  return Verdict();
}

}  // namespace sparseditto
