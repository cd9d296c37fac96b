// `sparseditto bench-search TASKFILE|SUITE [--name T] [--budget-evaluations N] [--budget-wall S]
// [--repetitions R] [--confirm-rounds K] [--out DIR]`: each task of the file searched by five strategies at an equal budget
// over R repetitions (coordinator/search/search_bench.h: seeds only, a plan of seeds, random search over
// the seeds' tunables, the evolutionary search without and with plans), the table printed and written
// with the anytime CSV and one SVG per task (search_bench_report.h) under DIR. Built-in mutator only.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/logging.h"
#include "cli/install_paths.h"
#include "coordinator/search/gpu_candidate_evaluator.h"
#include "coordinator/search/search_bench.h"
#include "coordinator/search/search_bench_report.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"
#include "kernels/seed_library.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

struct BenchSearchOptions {
  std::string task_file;
  std::string task_name;
  int64_t budget_evaluations = 0;
  double budget_wall_seconds = 0;
  int repetitions = 3;
  int confirm_rounds = 3;
  int compile_ahead = 1;
  std::string out_dir;
  std::string cache_dir;
  double timing_seconds = 1.0;
  double stage_timeout = 60;
  double screen_margin = SearchLoopOptions().screen_margin;
  std::string log_level = "info";
  std::string log_file;
};

int Fail(const absl::Status& status) {
  spdlog::error("sparseditto bench-search: {}", std::string(status.message()));
  return kExitFailure;
}

int RunBenchSearch(const BenchSearchOptions& o) {
  if (absl::Status s = SetUpLogging(o.log_level, o.log_file); !s.ok()) return Fail(s);
  auto batch = LoadTaskFile(o.task_file);
  if (!batch.ok()) return Fail(batch.status());
  std::vector<v1::Task> tasks;
  for (const v1::Task& t : batch->tasks()) {
    if (o.task_name.empty() || t.name() == o.task_name) tasks.push_back(t);
  }
  if (tasks.empty()) return Fail(absl::NotFoundError(fmt::format("{} has no task named {}", o.task_file, o.task_name)));
  auto seeds = LoadSeedLibrary(SeedLibraryDir());
  if (!seeds.ok()) return Fail(seeds.status());
  if (absl::Status s = RequireSandboxLayers("bench-search"); !s.ok()) return Fail(s);
  const EvaluatorOptions evaluator_options =
      InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, 20);
  auto evaluator = Evaluator::Create(evaluator_options);
  if (!evaluator.ok()) return Fail(evaluator.status());
  Evaluator* shared = evaluator->get();

  SearchBenchOptions options;
  options.out_dir = o.out_dir.empty()
                        ? fmt::format("runs/bench-search-{}", tasks.size() == 1 ? tasks[0].name() : "suite")
                        : o.out_dir;
  options.budget_evaluations = o.budget_evaluations;
  options.budget_wall_seconds = o.budget_wall_seconds;
  options.repetitions = o.repetitions;
  options.confirm_rounds = o.confirm_rounds;
  options.loop.compile_ahead = o.compile_ahead;
  options.loop.screen_margin = o.screen_margin;
  // A fresh seam per run (its compile pool and prefetched compiles, kept by candidate id, are the run's).
  options.make_evaluator = [shared]() -> absl::StatusOr<std::unique_ptr<CandidateEvaluator>> {
    return std::make_unique<GpuCandidateEvaluator>(shared);
  };
  options.on_run_start = [](const std::string& task, BenchStrategy strategy, int repetition) {
    spdlog::info("task {} rep{} {}...", task, repetition, BenchStrategyName(strategy));
  };
  options.on_run_done = [](const StrategyRun& run) {
    if (!run.ok) {
      spdlog::warn("task {} rep{} {}: failed: {}", run.task, run.repetition, BenchStrategyName(run.strategy), run.error);
      return;
    }
    spdlog::info("task {} rep{} {}: {} evaluations in {:.0f} s ({}), best {:.4f}; {}", run.task, run.repetition,
                 BenchStrategyName(run.strategy), run.evaluations, run.wall_seconds, run.stop, run.best_fitness,
                 run.confirmed ? fmt::format("confirmed {:.4f} [{:.4f}, {:.4f}], ratio to the best seed {:.3f}",
                                             run.confirmed_fitness, run.confirmed_low, run.confirmed_high,
                                             run.confirmed_ratio)
                               : "not confirmed: " + run.confirmation);
  };
  auto benches = RunSearchBench(tasks, *seeds, options);
  if (!benches.ok()) return Fail(benches.status());
  std::cout << SearchBenchText(*benches);
  if (absl::Status s = WriteSearchBench(*benches, options.out_dir); !s.ok()) return Fail(s);
  std::cout << fmt::format(
      "\ntable: {0}/bench-search.txt; anytime curves: {0}/bench-search-anytime.csv and {0}/<task>/anytime.svg; "
      "each run: {0}/<task>/<strategy>/rep<r>/\n",
      options.out_dir);
  for (const TaskBench& bench : *benches) {
    for (const StrategyRun& run : bench.runs) {
      if (!run.ok) return kExitFailure;
    }
  }
  return kExitSuccess;
}

}  // namespace

void RegisterBenchSearchCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<BenchSearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-search", "Compare seeds only, a plan of seeds, random search and the evolutionary search without and "
                      "with plans at an equal budget over several repetitions, with anytime curves");
  cmd->add_option("tasks", o->task_file, "Task file or suite (YAML)")->required();
  cmd->add_option("--name", o->task_name, "Only the task of this name");
  cmd->add_option("--budget-evaluations", o->budget_evaluations,
                  "Evaluations per strategy run (default: each task's budget.max_evaluations)")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 40));
  cmd->add_option("--budget-wall", o->budget_wall_seconds,
                  "Wall seconds per strategy run (default: each task's budget.max_wall_seconds; 0: none)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--repetitions", o->repetitions, "Repetitions, each with its own search seed")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--confirm-rounds", o->confirm_rounds,
                  "After each run, its best and the best seed re-timed in this many rounds behind fresh baselines; "
                  "the table shows those (0: fitness as evaluated, not re-confirmed)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--compile-ahead", o->compile_ahead, "As for search: children compiled together per step")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Output folder (default runs/bench-search-<task>, or -suite)");
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--screen-margin", o->screen_margin,
                  "As for search: the timing screen's margin (random search and the search alike); 0: no screen")
      ->capture_default_str();
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  AddLogOptions(cmd, &o->log_level, &o->log_file);
  cmd->callback([o, exit_code] { *exit_code = RunBenchSearch(*o); });
}

}  // namespace sparseditto
