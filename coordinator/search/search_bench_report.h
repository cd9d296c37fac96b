// What `sparseditto bench-search` prints and writes from its runs (search_bench.h).
//
// Per task and strategy: the best fitness of each repetition, the ratio to the best seed (the seeds
// strategy's best of the same repetition) as a geometric mean over repetitions with a 95% Student t
// interval on the mean log-ratio (exponentiated; needs two repetitions), and wins: the repetitions in
// which the strategy's best is the highest of all strategies' (within a relative 1e-9; a tie is a win
// for each tied strategy). Runs that failed, or found nothing correct, have no ratio and are counted
// apart. With TaskBench::confirm_rounds > 0 the best and the ratio are the confirmed ones (a run not
// confirmed has neither); otherwise they are as evaluated, and the header says they are not re-confirmed.
//
// Files (WriteSearchBench): <out>/bench-search.txt (the tables), <out>/bench-search-anytime.csv (one row
// per task, strategy, repetition and evaluation: seconds, fitness, best so far), <out>/bench-search-runs.csv
// (one row per run: evaluations, wall seconds, best, the confirmed figures, stop, error), and per task
// <out>/<task>/anytime.svg: a self-contained SVG of best fitness so far against evaluations (left) and
// against wall seconds (right), one line per run, coloured by strategy.
// Pure functions but WriteSearchBench; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/search/search_bench.h"

namespace sparseditto {

struct RatioInterval {
  int samples = 0;        // positive ratios used
  int excluded = 0;       // ratios that were not positive (nothing correct), left out
  double geomean = 0;     // exp(mean log ratio); 0 without samples
  bool has_interval = false;  // samples >= 2
  double low = 0;         // exp(mean -/+ t(0.975, samples-1) * sd / sqrt(samples))
  double high = 0;
};

// The two-sided 97.5% quantile of Student's t with `df` >= 1 degrees of freedom (a table to 30, then a
// Cornish-Fisher expansion; within 1e-3 of the exact value).
double StudentT975(int df);

// The geometric mean of `ratios` with its 95% t interval on the log scale.
RatioInterval LogRatioInterval(const std::vector<double>& ratios);

struct StrategySummary {
  BenchStrategy strategy = BenchStrategy::kSeeds;
  std::vector<double> best;        // per repetition (confirmed when confirm_rounds > 0); -1: failed or unconfirmed
  int64_t max_evaluations = 0;     // the most any of its runs made
  RatioInterval ratio;             // best / the seeds' best, over repetitions
  std::vector<double> ratios;      // per repetition, what `ratio` summarises; 0: none (failed, unconfirmed)
  int wins = 0;
  int failed = 0;
};

// One summary per strategy, in kAllBenchStrategies order.
std::vector<StrategySummary> SummariseTask(const TaskBench& bench);

// The two comparisons for `strategy` over every task and repetition of `benches`, pooled: its
// ratio to the best seed, and its paired ratio to random search (per task and repetition, its ratio over
// random's: both are to the same best seed, so the quotient is strategy / random). Pairs where either
// has no ratio are left out (counted in `excluded`).
struct PooledComparison {
  RatioInterval to_best_seed;
  RatioInterval to_random;
};
PooledComparison ComparePooled(const std::vector<TaskBench>& benches, BenchStrategy strategy);

std::string SearchBenchText(const std::vector<TaskBench>& benches);
std::string AnytimeCsv(const std::vector<TaskBench>& benches);
std::string RunsCsv(const std::vector<TaskBench>& benches);
std::string AnytimeSvg(const TaskBench& bench);

// The files above, each written atomically; Unavailable naming the file.
absl::Status WriteSearchBench(const std::vector<TaskBench>& benches, const std::string& out_dir);

}  // namespace sparseditto
