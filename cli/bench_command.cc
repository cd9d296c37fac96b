// `sparseditto bench --suite FILE`: the command line of the bench loop (bench/bench_loop.h): every seed
// that applies to each task of a suite, through the full evaluator on the local GPU, against the
// baselines; a table printed as it goes and written as bench.txt, bench.json and bench.csv after every
// task, events in events.jsonl; --resume keeps what a bench cut short left and benches the rest.
// SIGINT/SIGTERM stop it before the next evaluation (exit 130/143); --resume then goes on.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bench/bench_loop.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/fake_search_backend.h"
#include "cli/install_paths.h"
#include "cli/stop_signals.h"
#include "coordinator/search/gpu_candidate_evaluator.h"
#include "evaluator/evaluator.h"
#include "fmt/format.h"
#include "kernels/seed_library.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

struct BenchOptions {
  std::string suite;
  std::string name_filter;
  std::string seeds_dir;
  std::string out_dir;
  std::string cache_dir;
  double timing_seconds = 1.0;
  int min_trials = 20;
  int correctness_trials = 2;
  bool finalist = false;
  double stage_timeout = 60;
  int max_faults = 2;  // a seed that crashes or hangs this often is skipped for the rest of the suite
  double screen_margin = 0;  // BenchLoopOptions::screen_margin
  bool list = false;   // print which seeds apply to which task and stop (no GPU, nothing compiled)
  bool resume = false;  // keep OUT/bench.json's rows (and the task in hand's evaluations); bench the rest
};

int Fail(const std::string& what, const absl::Status& s) {
  std::cerr << "sparseditto " << what << ": " << s.message() << "\n";
  return kExitFailure;
}

int RunBench(const BenchOptions& o, const std::function<bool()>& stop_requested) {
  auto suite = LoadTaskFile(o.suite);
  if (!suite.ok()) return Fail("bench", suite.status());
  auto seeds = LoadSeedLibrary(o.seeds_dir.empty() ? SeedLibraryDir() : o.seeds_dir);
  if (!seeds.ok()) return Fail("bench", seeds.status());
  const std::vector<v1::Task> suite_order(suite->tasks().begin(), suite->tasks().end());
  absl::StatusOr<std::vector<v1::Task>> tasks = SelectBenchTasks(suite_order, o.name_filter);
  if (!tasks.ok()) return Fail("bench --name", tasks.status());
  if (o.list) {  // task, seed, seed file: one line a pair (scripts/seed_finalists.sh reads it)
    for (const v1::Task& task : *tasks) {
      const std::vector<const SeedKernel*> applicable = ApplicableSeeds(task, *seeds);
      for (const SeedKernel* seed : applicable) {
        std::cout << task.name() << "\t" << seed->name << "\t" << seed->path << "\n";
      }
      if (applicable.empty()) std::cerr << fmt::format("{}: no seed applies\n", task.name());
    }
    return kExitSuccess;
  }
  absl::StatusOr<std::optional<int>> fake_ms = FakeEvaluatorDelayMs();
  if (!fake_ms.ok()) return Fail("bench", fake_ms.status());
  std::unique_ptr<Evaluator> evaluator;        // the GPU's cascade, unless the fake stands in
  std::unique_ptr<CandidateEvaluator> scorer;  // the seam the loop evaluates through
  if (fake_ms->has_value()) {
    std::cerr << "sparseditto bench: SPARSEDITTO_FAKE_EVALUATOR_MS is set: the fake evaluator of the tests scores "
                 "the seeds, nothing runs on a GPU\n";
    absl::StatusOr<std::unique_ptr<CandidateEvaluator>> fake = MakeFakeBenchEvaluator(suite_order, **fake_ms);
    if (!fake.ok()) return Fail("bench", fake.status());
    scorer = *std::move(fake);
  } else {
    if (absl::Status s = RequireSandboxLayers("bench"); !s.ok()) return Fail("bench", s);
    EvaluatorOptions options = InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, o.min_trials);
    options.runner_options.set_correctness_trials(o.correctness_trials);
    options.runner_options.set_measure_device_limits(true);
    absl::StatusOr<std::unique_ptr<Evaluator>> created = Evaluator::Create(options);
    if (!created.ok()) return Fail("bench", created.status());
    evaluator = *std::move(created);
    scorer = std::make_unique<GpuCandidateEvaluator>(evaluator.get());
  }

  BenchLoopOptions loop;
  loop.out_dir = o.out_dir.empty() ? "bench-" + std::filesystem::path(o.suite).stem().string() : o.out_dir;
  loop.resume = o.resume;
  loop.finalist = o.finalist;
  loop.max_faults = o.max_faults;
  loop.screen_margin = o.screen_margin;
  loop.table = &std::cout;
  loop.log = &std::cerr;
  loop.stop_requested = stop_requested;
  absl::StatusOr<BenchLoopOutcome> outcome = RunBenchLoop(suite_order, *tasks, *seeds, *scorer, loop);
  if (!outcome.ok()) return Fail(o.resume ? "bench --resume" : "bench", outcome.status());
  for (const std::string& error : {outcome->file_errors, outcome->events_error}) {
    if (!error.empty()) std::cerr << "sparseditto bench: " << error << "\n";
  }
  std::cout << "wrote " << loop.out_dir << "/bench.{txt,json,csv} and events.jsonl\n";
  if (outcome->interrupted) {
    std::cerr << fmt::format("sparseditto bench: stopped; {} evaluations this time; `--resume` goes on\n",
                             outcome->evaluations);
    return kExitFailure;
  }
  if (outcome->tasks_benched == 0 && outcome->tasks_due > 0) {
    std::cerr << "sparseditto bench: no task could be set up (no GPU?); nothing was measured\n";
    return kExitFailure;
  }
  return kExitSuccess;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Evaluate the seed kernels of each suite task against the baselines");
  cmd->add_option("--suite", o->suite, "Suite file: a task batch (configs/suites/*.yaml)")->required();
  cmd->add_option("--name", o->name_filter, "Only tasks whose name matches this regular expression");
  cmd->add_option("--seeds", o->seeds_dir, "Seed library folder (default: the installed kernels/seeds)");
  cmd->add_option("--out", o->out_dir,
                  "Folder for bench.txt, bench.json, bench.csv and events.jsonl (default bench-<suite>)");
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--min-trials", o->min_trials, "Timed trials at least")->capture_default_str();
  cmd->add_option("--correctness-trials", o->correctness_trials, "Fresh-B checks per n")->capture_default_str();
  cmd->add_flag("--finalist", o->finalist, "Run every seed through the finalist checks (sanitizers) too");
  cmd->add_flag("--resume", o->resume,
                "Keep the rows of OUT/bench.json and the evaluations of the task that was in hand, and bench only "
                "what they do not finish (a bench cut short, e.g. by a time limit, goes on where it stopped)");
  cmd->add_flag("--list", o->list, "Print the seeds that apply to each task (task, seed, file) and stop");
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->add_option("--screen-margin", o->screen_margin,
                  "Time each seed first with a short screen and in full only when within this fraction of the task's "
                  "best full timing at some n (0: every seed in full; the others are listed as screened)")
      ->check(CLI::Range(0.0, 10.0))
      ->excludes("--finalist")
      ->capture_default_str();
  cmd->add_option("--max-faults", o->max_faults, "Skip a seed after this many crashes or timeouts (0: never)")
      ->capture_default_str();
  cmd->callback([o, exit_code] {
    // First, before any thread starts (the compile pool): nvcc and the runner then have SIGINT and
    // SIGTERM blocked, so Ctrl-C reaches the bench alone, which stops before its next evaluation.
    StopSignals stop_signals;
    std::atomic<int> stop_signal{0};
    stop_signals.Watch([&stop_signal](int signal_number) {
      stop_signal = signal_number;
      std::cerr << fmt::format("sparseditto bench: {}: stopping after the evaluation in hand; --resume goes on\n",
                               StopSignals::Name(signal_number));
    });
    const int code = RunBench(*o, [&stop_signal] { return stop_signal.load() != 0; });
    const int signal_number = stop_signals.Finish();
    *exit_code = signal_number != 0 ? 128 + signal_number : code;  // 130 for SIGINT, 143 for SIGTERM
  });
}

}  // namespace sparseditto
