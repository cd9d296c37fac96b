#include "evaluator/runner/candidate_evaluation.h"

#include <cmath>
#include <limits>
#include <optional>

#include "common/fitness.h"
#include "common/screen_bar.h"
#include "evaluator/runner/problem_run.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

// Applies a verdict to the result; true when the cascade must stop. A verdict that lost the context
// leaks `run` on purpose: its destructor would free device memory and destroy streams, and either
// waits for a stream that waits for ever on an event the host's dead context never records (a
// candidate's illegal address hung the runner there). The process is replaced right after its reply.
bool Stop(const Verdict& verdict, v1::EvalResult* result, bool* context_lost,
          std::unique_ptr<ProblemRun>* run = nullptr) {
  if (verdict.ok()) return false;
  result->set_failure(verdict.failure);
  result->set_failure_detail(verdict.detail);
  *context_lost = *context_lost || verdict.context_lost;
  if (verdict.context_lost && run != nullptr) (void)run->release();
  return true;
}

void RecordErrors(const v1::CorrectnessCheck& check, v1::EvalResult* result) {
  result->set_max_abs_error(std::max(result->max_abs_error(), check.max_abs_error()));
  result->set_max_rel_error(std::max(result->max_rel_error(), check.max_rel_error()));
}

}  // namespace

bool ImplausiblyFast(const std::vector<v1::TimingStats>& timings,
                     const std::map<int64_t, v1::BaselineList>& baselines, double density) {
  if (density <= 0) return false;
  for (const auto& t : timings) {
    const double dense = FastestBaselineMs(baselines, t.n(), "cublas_dense");
    if (std::isfinite(dense) && t.median_ms() > 0 && dense / t.median_ms() > 2.0 / density) return true;
  }
  return false;
}

v1::EvalResult EvaluateCandidate(const v1::EvaluateRequest& request, CandidateHost& host,
                                 const BracketCalibration* calibration, TaskContext& context,
                                 const std::map<int64_t, v1::BaselineList>& baselines,
                                 const StageListener& on_stage, bool* context_lost, GpuShare* share) {
  v1::EvalResult result;
  result.set_candidate_id(request.candidate_id());
  result.set_task_name(context.task().name());
  *context_lost = false;
  const v1::RunnerOptions& options = request.options();
  const v1::Dtype dtype = context.task().dtype();
  uint64_t seed = request.check_seed();
  auto enter = [&](v1::EvalStage stage) {
    result.set_stage_reached(stage);
    on_stage(stage);
  };

  result.set_smoke_skipped(options.skip_smoke());
  if (!options.skip_smoke()) {
    enter(v1::EVAL_STAGE_SMOKE);
    for (const SmokeCase& smoke : context.smoke_cases()) {
      auto oracle = context.Oracle(smoke.name, smoke.matrix);
      if (!oracle.ok()) return Stop(HarnessVerdict(oracle.status(), smoke.name), &result, context_lost), result;
      auto run = ProblemRun::Create(host, smoke.name, smoke.matrix, smoke.pattern, dtype, smoke.n_values, *oracle);
      if (!run.ok()) return Stop(HarnessVerdict(run.status(), smoke.name), &result, context_lost), result;
      if (Stop((*run)->Prepare(), &result, context_lost, &*run)) return result;
      for (int64_t n : smoke.n_values) {
        v1::CorrectnessCheck* check = result.add_checks();
        if (Stop((*run)->CheckRun(n, ++seed, fmt::format("{}/n={}", smoke.name, n), check), &result, context_lost, &*run)) {
          return result;
        }
        RecordErrors(*check, &result);
      }
    }
  }
  if (request.small_only()) {
    enter(v1::EVAL_STAGE_DONE);
    return result;
  }

  enter(v1::EVAL_STAGE_FULL_CORRECTNESS);
  const std::vector<int64_t> n_values(context.task().n().begin(), context.task().n().end());
  absl::StatusOr<ReferenceOracle*> oracle = context.Oracle("task", context.matrix());
  absl::StatusOr<std::unique_ptr<ProblemRun>> run =
      oracle.ok() ? ProblemRun::Create(host, "task", context.matrix(), context.task().pattern(), dtype, n_values, *oracle)
                  : absl::StatusOr<std::unique_ptr<ProblemRun>>(oracle.status());
  if (!run.ok()) return Stop(HarnessVerdict(run.status(), "task"), &result, context_lost), result;
  if (Stop((*run)->Prepare(), &result, context_lost, &*run)) return result;
  result.set_prepare_ms((*run)->prepare_ms());
  const int trials = options.correctness_trials() > 0 ? options.correctness_trials() : 2;
  for (int64_t n : n_values) {
    for (int t = 0; t < trials; ++t) {
      v1::CorrectnessCheck* check = result.add_checks();
      if (Stop((*run)->CheckRun(n, ++seed, fmt::format("task/n={}/trial={}", n, t), check), &result, context_lost, &*run)) {
        return result;
      }
      RecordErrors(*check, &result);
    }
  }

  if (options.correctness_only()) {
    enter(v1::EVAL_STAGE_DONE);
    return result;
  }

  enter(v1::EVAL_STAGE_TIMING);
  std::vector<v1::TimingStats> timings;
  // The GPU to itself while it times (other runners' shared stages wait); shared again after.
  std::optional<GpuShare::Scoped> alone(std::in_place, share, GpuShare::Mode::kExclusive);
  if (!alone->status().ok()) {
    result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    result.set_failure_detail(fmt::format("the GPU's timing lock: {}", alone->status().message()));
    return result;
  }
  (*run)->set_calibration(calibration);
  // Times every n under `timing`; true when the cascade must stop (the verdict is in the result).
  auto time_each_n = [&](const v1::RunnerOptions& timing) {
    timings.clear();
    result.clear_timings();
    for (int64_t n : n_values) {
      v1::TimingStats stats;
      if (Stop((*run)->Time(n, ++seed, timing, &stats), &result, context_lost, &*run)) return true;
      *result.add_timings() = stats;
      timings.push_back(stats);
      if (WorkEscapedStream(stats)) {
        result.set_failure(v1::FAILURE_CATEGORY_WRONG);
        result.set_failure_detail(fmt::format(
            "n={}: work escaped the given stream in {} of {} trials: the judge's bracket gives {:.4f} ms a trial "
            "against {:.4f} ms on the host's events (medians)",
            n, stats.escaped_trials(), stats.trials(), stats.host_median_ms(), stats.median_ms()));
        return true;
      }
    }
    return false;
  };
  if (request.has_screen()) {
    // The screen, and in the same host the full timing when the screen comes near the bar: no second
    // host, smoke stage or correctness pass for the children worth it.
    v1::RunnerOptions screen = options;
    screen.set_max_timing_seconds(request.screen().screen_timing_seconds());
    if (time_each_n(screen)) return result;
    if (NearScreenBar(SpeedupFitness(timings, baselines), timings, request.screen())) {
      if (time_each_n(options)) return result;
      result.set_timed_in_full_after_screen(true);
    } else {
      result.set_timing_screen(true);
    }
  } else if (time_each_n(options)) {
    return result;
  }

  alone.reset();
  enter(v1::EVAL_STAGE_RECHECK);
  for (int64_t n : n_values) {  // fresh B in the very buffers the timing used
    v1::CorrectnessCheck* check = result.add_checks();
    if (Stop((*run)->CheckRun(n, ++seed, fmt::format("recheck/n={}", n), check), &result, context_lost, &*run)) return result;
    RecordErrors(*check, &result);
  }

  if (request.finalist()) {
    enter(v1::EVAL_STAGE_FINALIST);
    for (int64_t n : n_values) {
      if (Stop((*run)->CheckDeterminism(n, ++seed, result.add_checks()), &result, context_lost, &*run)) return result;
    }
  }

  for (const auto& [n, list] : baselines) (*result.mutable_baselines())[n] = list;
  result.set_fitness(SpeedupFitness(timings, baselines));  // common/fitness.h: the one formula
  result.set_flagged_implausible(ImplausiblyFast(timings, baselines, context.matrix().Density()));
  if (result.fitness() > 0 && result.fitness() < 1.0) {
    result.set_failure(v1::FAILURE_CATEGORY_SLOWER);
    result.set_failure_detail(fmt::format("correct, but {:.2f}x the speed of the best baseline", result.fitness()));
  }
  enter(v1::EVAL_STAGE_DONE);
  return result;
}

}  // namespace sparseditto
