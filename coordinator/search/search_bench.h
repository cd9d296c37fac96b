// Does the search beat its seeds? (`sparseditto bench-search`, issue 24 item 4.) Each task is searched by
// five strategies at an equal budget, over several repetitions; repetition r uses task seed
// RepetitionSeed(task seed, r) (r = 0 keeps the task's seed), with the matrix pinned to the task's own
// seed so that every repetition searches the same matrix. The strategies (BenchStrategy):
//   seeds           each applicable seed evaluated once (RunTaskSearch with a budget of the distinct seed
//                   sources, no plan stage): the best single seed, the reference of every ratio;
//   seed_plan       the same, then the plan stage: the seeds' results through ProposePlan, the plan
//                   evaluated when it is predicted to beat the best seed (else it is the best seed);
//   random          uniform draws from the seeds' declared tunable spaces (a seed uniformly, then each
//                   tunable's allowed values uniformly, resolved against the evaluator's Device()), no
//                   selection; a draw repeating an earlier source is drawn again, not evaluated; batches
//                   of SearchLoopOptions::compile_ahead handed to Prefetch as the search would;
//   evolution       RunTaskSearch, plan_stage false, budget N;
//   evolution_plan  RunTaskSearch, plan_stage true, budget N - 1 (the plan's evaluation is the N-th).
// Equal budget: no strategy makes more than N evaluations (evaluator calls; N = budget_evaluations, or
// the task's budget.max_evaluations); random and evolution make exactly N unless the wall budget, the
// task's stagnation limit or an exhausted space stops them; seeds and seed_plan make as many as the seeds
// need (N must exceed the distinct seed count). The wall budget (budget_wall_seconds, else the task's
// budget.max_wall_seconds; 0: none) bounds each run's search; the plan stage runs after it, as in a search.
// No finalist stage. The anytime curves hold each evaluation's own fitness (correct results; 0 otherwise).
// Confirmation (confirm_rounds > 0; confirmation.h): after each run, with the run's evaluator, its best
// candidate and the repetition's best seed (the seeds run's best) are re-timed in confirm_rounds rounds
// behind fresh baselines; the run's confirmed fitness is its best's median over the rounds and its
// confirmed ratio the median per-round ratio to that seed (1 for the seeds run, whose best is that
// seed). Not counted in the budget. confirm_rounds 0: nothing is re-confirmed and the report says so.
//
// Every run has its own folder, <out_dir>/<task>/<strategy>/rep<r>/: a run of `sparseditto search`
// (store/, run id = the strategy's name) for the RunTaskSearch strategies, evaluations.jsonl (one object
// per evaluation) for random; and its own evaluator (make_evaluator, SetUp for the repetition's task).
// Errors: InvalidArgument (no out_dir, no make_evaluator, repetitions < 1, a budget not above the seed
// count, no seed applies); FailedPrecondition when a run folder exists already (nothing is resumed). A run
// that fails is recorded (ok false, its error) and the bench goes on; after a set-up error marked
// NonRetryable (common/non_retryable.h: no GPU) the task's remaining runs are recorded with it, untried.
// Thread-safety: none.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/search_loop.h"
#include "kernels/seed_library.h"
#include "task.pb.h"

namespace sparseditto {

enum class BenchStrategy { kSeeds, kSeedPlan, kRandom, kEvolution, kEvolutionPlan };
inline constexpr std::array<BenchStrategy, 5> kAllBenchStrategies = {
    BenchStrategy::kSeeds, BenchStrategy::kSeedPlan, BenchStrategy::kRandom, BenchStrategy::kEvolution,
    BenchStrategy::kEvolutionPlan};
// "seeds", "seed_plan", "random", "evolution", "evolution_plan".
std::string_view BenchStrategyName(BenchStrategy strategy);

// The task seed of repetition r: `task_seed` for r = 0, else a splitmix64 mix of both.
uint64_t RepetitionSeed(uint64_t task_seed, int repetition);

struct StrategyRun;

struct SearchBenchOptions {
  std::string out_dir;               // required
  int64_t budget_evaluations = 0;    // > 0: N for every task (else each task's budget.max_evaluations)
  double budget_wall_seconds = 0;    // > 0: each run's wall budget (else the task's)
  int repetitions = 3;
  int confirm_rounds = 0;            // > 0: each run's best and the best seed re-timed in this many rounds
  SearchLoopOptions loop;            // for the RunTaskSearch strategies; plan_stage, max_finalists and on_evaluation are set per run
  // A fresh evaluator per run (nothing shared between runs); required.
  std::function<absl::StatusOr<std::unique_ptr<CandidateEvaluator>>()> make_evaluator;
  std::function<void(const std::string& task, BenchStrategy, int repetition)> on_run_start;  // may be empty
  // Called once a run has ended (ok or not), before the next starts; may be empty. What a run cut short
  // by a kill leaves behind: the table itself is written only at the end.
  std::function<void(const StrategyRun&)> on_run_done;
};

// One evaluation of a run's anytime curve.
struct AnytimePoint {
  int64_t evaluation = 0;  // 1-based, this run's
  double seconds = 0;      // since the run's search started
  double fitness = 0;      // this evaluation's (0 when not correct)
  double best = 0;         // the best so far, this one included (monotone)
};

struct StrategyRun {
  std::string task;
  BenchStrategy strategy = BenchStrategy::kSeeds;
  int repetition = 0;
  uint64_t seed = 0;           // the repetition's task seed
  bool ok = false;
  std::string error;           // when !ok
  int64_t evaluations = 0;     // evaluator calls of this run
  double wall_seconds = 0;     // around the run (set-up excluded)
  double best_fitness = 0;     // 0: nothing correct
  std::string best_candidate_id;
  std::string stop;            // why it stopped
  std::string run_dir;
  std::vector<AnytimePoint> curve;  // one point per evaluation, in order
  // Confirmation (SearchBenchOptions::confirm_rounds > 0); confirmed false when it did not run or failed.
  bool confirmed = false;
  double confirmed_fitness = 0;  // the best's median over the rounds (low, high: its range)
  double confirmed_low = 0;
  double confirmed_high = 0;
  double confirmed_ratio = 0;    // median per-round ratio to the best seed; 0 when none could be taken
  std::string confirmation;      // DescribeConfirmation, or why there is none
};

struct TaskBench {
  std::string task;
  int64_t budget_evaluations = 0;  // N
  double budget_wall_seconds = 0;  // 0: none
  int64_t seed_count = 0;          // distinct applicable seed sources
  int confirm_rounds = 0;          // SearchBenchOptions::confirm_rounds
  std::vector<StrategyRun> runs;   // repetition-major, strategies in kAllBenchStrategies order
};

absl::StatusOr<std::vector<TaskBench>> RunSearchBench(const std::vector<v1::Task>& tasks,
                                                      const std::vector<SeedKernel>& seeds,
                                                      const SearchBenchOptions& options);

}  // namespace sparseditto
