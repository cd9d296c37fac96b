#include "coordinator/search/search_bench.h"
#include "coordinator/search/search_events.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "common/eval_outcome.h"
#include "common/screen_bar.h"
#include "common/non_retryable.h"
#include "common/rng.h"
#include "coordinator/search/confirmation.h"
#include "coordinator/search/run_artifacts.h"
#include "fmt/format.h"
#include "kernel_abi/tunables.h"
#include "mutators/builtin/builtin_mutator.h"
#include "mutators/builtin/source_hash.h"
#include "nlohmann/json.hpp"
#include "population_store/population_store.h"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kDefaultMaxEvaluations = 200;  // the loader's default (coordinator/budget.h)
constexpr int kMaxMissesInARow = 1000;           // random draws repeating known sources before giving up

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Adds one evaluation to the run's curve.
void Record(const std::string& id, const v1::EvalResult& result, double seconds, StrategyRun& run) {
  AnytimePoint point;
  point.evaluation = static_cast<int64_t>(run.curve.size()) + 1;
  point.seconds = seconds;
  point.fitness = IsCorrect(result) ? result.fitness() : 0;
  const double before = run.curve.empty() ? 0.0 : run.curve.back().best;
  point.best = std::max(point.fitness, before);
  if (point.fitness > before) {
    run.best_fitness = point.fitness;
    run.best_candidate_id = id;
  }
  run.curve.push_back(point);
}

absl::StatusOr<std::vector<v1::Candidate>> Seeds(const v1::Task& task, const std::vector<SeedKernel>& seeds,
                                                 const DeviceFacts& device) {
  BuiltinMutatorOptions options;
  options.device = device;
  return SeedCandidates(task, seeds, options);
}

absl::StatusOr<int64_t> DistinctSeedSources(const v1::Task& task, const std::vector<SeedKernel>& seeds) {
  absl::StatusOr<std::vector<v1::Candidate>> candidates = Seeds(task, seeds, {});
  if (!candidates.ok()) return candidates.status();
  std::set<std::string> hashes;
  for (const v1::Candidate& c : *candidates) hashes.insert(c.source_hash());
  return static_cast<int64_t>(hashes.size());
}

// A RunTaskSearch strategy: the loop over the run's own store, its curve read back from the store.
absl::Status RunLoop(const v1::Task& task, const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                     SearchLoopOptions loop, StrategyRun& run, v1::Candidate* best) {
  PopulationStoreOptions store_options;
  store_options.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<PopulationStore>> store = OpenRunStore(run.run_dir, store_options);
  if (!store.ok()) return store.status();
  const std::string run_id(BenchStrategyName(run.strategy));
  // The run's events (search_events.h), appended, as `search` writes them.
  absl::StatusOr<std::unique_ptr<JsonlEventFile>> events =
      JsonlEventFile::Open((std::filesystem::path(run.run_dir) / "events.jsonl").string());
  if (!events.ok()) return events.status();
  loop.events = events->get();
  absl::Status read_error;
  loop.on_evaluation = [&](const SearchProgress& progress) {
    absl::StatusOr<v1::EvalResult> result = (*store)->GetEvaluation(run_id, progress.candidate_id);
    if (!result.ok() && read_error.ok()) read_error = result.status();
    Record(progress.candidate_id, result.ok() ? *result : v1::EvalResult(), progress.seconds_this_call, run);
  };
  const Clock::time_point started = Clock::now();
  absl::StatusOr<SearchSummary> summary = RunTaskSearch(**store, run_id, task, seeds, evaluator, loop);
  run.wall_seconds = Since(started);
  if (!summary.ok()) return summary.status();
  if (!read_error.ok()) return read_error;
  run.evaluations = summary->evaluations_this_call;
  run.stop = summary->stop_detail.empty() ? summary->stop_reason : summary->stop_detail;
  if (!summary->plan.empty()) run.stop += "; " + summary->plan;
  absl::StatusOr<std::vector<ConfirmationSubject>> subjects = ConfirmationSubjects(**store, run_id, task.name());
  if (!subjects.ok()) return subjects.status();
  if (!subjects->empty()) *best = subjects->front().candidate;
  return absl::OkStatus();
}

// One uniform point of a seed's declared space (a seed drawn uniformly), as an unstored candidate.
absl::StatusOr<v1::Candidate> Draw(const std::vector<v1::Candidate>& origins, const DeviceFacts& device, Rng& rng) {
  const v1::Candidate& origin = origins[rng.Below(origins.size())];
  std::map<std::string, std::string> values;
  for (const v1::Tunable& t : origin.tunables()) {
    if (t.allowed_values_size() > 0) values[t.name()] = t.allowed_values(static_cast<int>(rng.Below(t.allowed_values_size())));
  }
  absl::StatusOr<std::string> source = ApplyTunables(origin.source(), values, device);
  if (!source.ok()) return source.status();
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(*source, device);
  if (!tunables.ok()) return tunables.status();
  v1::Candidate c = origin;
  c.set_source(*source);
  c.set_source_hash(SourceHash(*source));
  c.clear_tunables();
  for (const v1::Tunable& t : *tunables) *c.add_tunables() = t;
  c.set_operator_(v1::MUTATION_OPERATOR_TUNE);
  c.set_mutator("random");
  return c;
}

nlohmann::ordered_json EvaluationJson(const v1::Candidate& c, const v1::EvalResult& r, const AnytimePoint& p) {
  nlohmann::ordered_json tunables = nlohmann::ordered_json::object();
  for (const v1::Tunable& t : c.tunables()) tunables[t.name()] = t.value();
  return {{"evaluation", p.evaluation}, {"id", c.id()},          {"seed", c.seed_name()},
          {"tunables", tunables},       {"seconds", p.seconds},  {"fitness", p.fitness},
          {"failure", v1::FailureCategory_Name(r.failure())}};
}

// The random strategy: draws until the budget (evaluations or wall) is spent or no unseen point turns up.
// The same pipeline as the search's: a window of `compile_ahead` draws compiled ahead (topped up before
// each evaluation), the timing screen with the search's rule (a draw is timed in full when its screen
// comes within `screen_margin` of the best fitness so far or of the fastest full time at some n,
// common/screen_bar.h; 0: every draw in full).
absl::Status RunRandom(const v1::Task& task, const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                       int compile_ahead, double screen_margin, StrategyRun& run, v1::Candidate* best) {
  const DeviceFacts device = evaluator.Device();
  absl::StatusOr<std::vector<v1::Candidate>> origins = Seeds(task, seeds, device);
  if (!origins.ok()) return origins.status();
  if (origins->empty()) return absl::FailedPreconditionError(fmt::format("no seed applies to task {}", task.name()));
  Rng rng(SplitMix(task.seed() ^ 0x72616E646F6Dull));  // "random"
  const int64_t budget = task.budget().max_evaluations();
  const double wall = task.budget().max_wall_seconds();
  const int64_t window = std::max(compile_ahead, 1);
  std::set<std::string> known;
  std::string lines;
  int drawn = 0;
  bool unseen_left = true;
  std::deque<v1::Candidate> queue;
  v1::ScreenBar bar;  // the search's rule (common/screen_bar.h): the best fitness and per-n times so far
  bar.set_margin(screen_margin);
  const Clock::time_point started = Clock::now();
  run.stop = fmt::format("max_evaluations {} reached", budget);
  while (run.evaluations < budget) {
    std::vector<v1::Candidate> fresh;
    const int64_t want = std::min<int64_t>(window, budget - run.evaluations);
    for (int misses = 0; unseen_left && static_cast<int64_t>(queue.size() + fresh.size()) < want;) {
      absl::StatusOr<v1::Candidate> c = Draw(*origins, device, rng);
      if (!c.ok()) return c.status();
      if (!known.insert(c->source_hash()).second) {
        if (++misses >= kMaxMissesInARow) unseen_left = false;
        continue;
      }
      misses = 0;
      c->set_id(fmt::format("random.{:06d}", ++drawn));
      fresh.push_back(*std::move(c));
    }
    if (window > 1 && !fresh.empty()) evaluator.Prefetch(task, fresh);
    queue.insert(queue.end(), fresh.begin(), fresh.end());
    if (queue.empty()) {
      run.stop = fmt::format("no unseen point in {} draws in a row", kMaxMissesInARow);
      break;
    }
    if (wall > 0 && Since(started) >= wall) {
      run.stop = fmt::format("max_wall_seconds {} reached", wall);
      break;
    }
    const v1::Candidate c = queue.front();
    queue.pop_front();
    bar.set_elite_fitness(run.best_fitness);
    v1::EvalResult result = screen_margin > 0 ? evaluator.EvaluateScreened(task, c, task.seed(), bar)
                                              : evaluator.Evaluate(task, c, task.seed());
    if (result.timing_screen() &&
        NearScreenBar(result.fitness(), {result.timings().begin(), result.timings().end()}, bar)) {
      result = evaluator.Evaluate(task, c, task.seed());
    }
    NoteFullTiming(result, &bar);  // full timings set the per-n bar (the fitness is set from the run before each)
    ++run.evaluations;
    Record(c.id(), result, Since(started), run);
    if (run.best_candidate_id == c.id()) *best = c;
    lines += EvaluationJson(c, result, run.curve.back()).dump() + "\n";
  }
  run.wall_seconds = Since(started);
  return WriteFileAtomically((std::filesystem::path(run.run_dir) / "evaluations.jsonl").string(), lines);
}

// Re-times the run's best beside the repetition's best seed (none: the run's best is that seed, or there is
// none); the outcome goes into the run, a failure into run.confirmation only.
void Confirm(CandidateEvaluator& evaluator, const v1::Task& task, const v1::Candidate& best,
             const std::optional<v1::Candidate>& best_seed, int rounds, StrategyRun& run) {
  if (best.id().empty()) {
    run.confirmation = "nothing correct to confirm";
    return;
  }
  std::vector<ConfirmationSubject> subjects = {{"result", best}};
  if (best_seed.has_value() && best_seed->source_hash() != best.source_hash()) {
    subjects.push_back({"best seed", *best_seed});
  }
  absl::StatusOr<Confirmation> c = ConfirmSubjects(evaluator, task, subjects, {.rounds = rounds}, task.seed());
  if (!c.ok()) {
    run.confirmation = "confirmation failed: " + std::string(c.status().message());
    return;
  }
  run.confirmation = DescribeConfirmation(*c);
  const ConfirmedCandidate& result = c->subjects.front();
  if (result.rounds_correct == 0) return;
  run.confirmed = true;
  run.confirmed_fitness = result.fitness_median;
  run.confirmed_low = result.fitness_low;
  run.confirmed_high = result.fitness_high;
  if (subjects.size() == 1) {
    run.confirmed_ratio = best_seed.has_value() ? 1.0 : 0.0;
  } else {
    run.confirmed_ratio = c->ratio_rounds > 0 ? c->ratio_median : 0.0;
  }
}

// The repetition's task with the strategy's budget: its search seed varied, its matrix kept.
v1::Task RunTask(const v1::Task& task, int repetition, int64_t evaluations, double wall) {
  v1::Task t = task;
  if (t.has_matrix() && t.matrix().seed() == 0) t.mutable_matrix()->set_seed(task.seed());
  t.set_seed(RepetitionSeed(task.seed(), repetition));
  t.mutable_budget()->set_max_evaluations(evaluations);
  t.mutable_budget()->set_max_wall_seconds(wall);
  return t;
}

absl::StatusOr<std::string> RunDir(const std::string& out_dir, const std::string& task, BenchStrategy s, int r) {
  absl::StatusOr<std::filesystem::path> path =
      PathInside(out_dir, {task, std::string(BenchStrategyName(s)), fmt::format("rep{}", r)});
  if (!path.ok()) return path.status();
  return path->string();
}

absl::Status CheckOptions(const std::vector<v1::Task>& tasks, const SearchBenchOptions& options) {
  if (options.out_dir.empty()) return absl::InvalidArgumentError("no output folder");
  if (!options.make_evaluator) return absl::InvalidArgumentError("no evaluator");
  if (options.repetitions < 1) return absl::InvalidArgumentError("repetitions must be at least 1");
  if (tasks.empty()) return absl::InvalidArgumentError("no task");
  for (const v1::Task& task : tasks) {
    for (int r = 0; r < options.repetitions; ++r) {
      for (BenchStrategy s : kAllBenchStrategies) {
        absl::StatusOr<std::string> dir = RunDir(options.out_dir, task.name(), s, r);
        if (!dir.ok()) return dir.status();
        if (std::filesystem::exists(*dir)) {
          return absl::FailedPreconditionError(
              fmt::format("{} exists already (bench-search resumes nothing): remove it or choose another output folder", *dir));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view BenchStrategyName(BenchStrategy strategy) {
  switch (strategy) {
    case BenchStrategy::kSeeds: return "seeds";
    case BenchStrategy::kSeedPlan: return "seed_plan";
    case BenchStrategy::kRandom: return "random";
    case BenchStrategy::kEvolution: return "evolution";
    case BenchStrategy::kEvolutionPlan: return "evolution_plan";
  }
  return "unknown";
}

uint64_t RepetitionSeed(uint64_t task_seed, int repetition) {
  return repetition == 0 ? task_seed : SplitMix(task_seed ^ SplitMix(static_cast<uint64_t>(repetition)));
}

absl::StatusOr<std::vector<TaskBench>> RunSearchBench(const std::vector<v1::Task>& tasks,
                                                      const std::vector<SeedKernel>& seeds,
                                                      const SearchBenchOptions& options) {
  if (absl::Status s = CheckOptions(tasks, options); !s.ok()) return s;
  std::vector<TaskBench> benches;
  for (const v1::Task& task : tasks) {
    TaskBench& bench = benches.emplace_back();
    bench.task = task.name();
    bench.budget_evaluations = options.budget_evaluations > 0          ? options.budget_evaluations
                               : task.budget().max_evaluations() > 0 ? task.budget().max_evaluations()
                                                                       : kDefaultMaxEvaluations;
    bench.confirm_rounds = options.confirm_rounds;
    bench.budget_wall_seconds =
        options.budget_wall_seconds > 0 ? options.budget_wall_seconds : task.budget().max_wall_seconds();
    absl::StatusOr<int64_t> seed_count = DistinctSeedSources(task, seeds);
    if (!seed_count.ok()) return seed_count.status();
    bench.seed_count = *seed_count;
    if (bench.seed_count == 0) return absl::InvalidArgumentError(fmt::format("no seed applies to task {}", task.name()));
    if (bench.budget_evaluations <= bench.seed_count) {
      return absl::InvalidArgumentError(fmt::format("task {}: a budget of {} evaluations does not exceed its {} seeds",
                                                    task.name(), bench.budget_evaluations, bench.seed_count));
    }
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    TaskBench& bench = benches[i];
    absl::Status fatal;  // a set-up no retry can help (no GPU, a task the runner refuses): the task's other runs are not tried
    for (int r = 0; r < options.repetitions; ++r) {
      std::optional<v1::Candidate> best_seed;  // the seeds run's best, for the confirmations of this repetition
      for (BenchStrategy strategy : kAllBenchStrategies) {
        StrategyRun& run = bench.runs.emplace_back();
        run.task = bench.task;
        run.strategy = strategy;
        run.repetition = r;
        run.seed = RepetitionSeed(tasks[i].seed(), r);
        if (options.on_run_start) options.on_run_start(bench.task, strategy, r);
        const bool seeds_only = strategy == BenchStrategy::kSeeds || strategy == BenchStrategy::kSeedPlan;
        const int64_t budget = seeds_only ? bench.seed_count
                               : strategy == BenchStrategy::kEvolutionPlan ? bench.budget_evaluations - 1
                                                                           : bench.budget_evaluations;
        const v1::Task task = RunTask(tasks[i], r, budget, bench.budget_wall_seconds);
        absl::Status status = !fatal.ok() ? fatal : [&]() -> absl::Status {
          absl::StatusOr<std::string> dir = RunDir(options.out_dir, bench.task, strategy, r);
          if (!dir.ok()) return dir.status();
          run.run_dir = *dir;
          std::error_code error;
          std::filesystem::create_directories(run.run_dir, error);
          if (error) return absl::UnavailableError(fmt::format("{}: {}", run.run_dir, error.message()));
          absl::StatusOr<std::unique_ptr<CandidateEvaluator>> evaluator = options.make_evaluator();
          if (!evaluator.ok()) return evaluator.status();
          if (absl::Status s = (*evaluator)->SetUp(task); !s.ok()) {
            if (IsNonRetryable(s)) fatal = s;
            return s;
          }
          v1::Candidate best;
          absl::Status ran;
          if (strategy == BenchStrategy::kRandom) {
            ran = RunRandom(task, seeds, **evaluator, options.loop.compile_ahead, options.loop.screen_margin, run, &best);
          } else {
            SearchLoopOptions loop = options.loop;
            loop.max_finalists = 0;  // what is compared is the search
            loop.plan_stage = strategy == BenchStrategy::kSeedPlan || strategy == BenchStrategy::kEvolutionPlan;
            ran = RunLoop(task, seeds, **evaluator, loop, run, &best);
          }
          if (!ran.ok()) return ran;
          if (strategy == BenchStrategy::kSeeds && !best.id().empty()) {
            best_seed = best;
            best_seed->set_id("bestseed." + best.id());  // not confused with a candidate of another run's store
          }
          if (options.confirm_rounds > 0) Confirm(**evaluator, task, best, best_seed, options.confirm_rounds, run);
          return absl::OkStatus();
        }();
        run.ok = status.ok();
        if (!status.ok()) run.error = std::string(status.message());
        if (options.on_run_done) options.on_run_done(run);
      }
    }
  }
  return benches;
}

}  // namespace sparseditto
