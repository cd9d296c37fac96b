// `sparseditto bench --suite FILE`: every seed that applies to each task of a suite, through the full
// evaluator, against the baselines; a table (task, n, best kernel, time, baselines, speedups, fraction
// of the physical limit) printed as it goes and written as bench.txt, bench.json and bench.csv after every
// task; --resume keeps the rows already written and benches only the tasks they do not finish.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>

#include "bench/bench_resume.h"
#include "bench/bench_table.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "common/eval_outcome.h"
#include "common/status_format.h"
#include "coordinator/search/run_artifacts.h"
#include "evaluator/compile/compile_pool.h"
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
  bool list = false;   // print which seeds apply to which task and stop (no GPU, nothing compiled)
  bool resume = false;  // keep OUT/bench.json's rows; bench only the tasks they do not finish
};

// Writes the table so far (after every task, so an interrupted run still leaves its rows), each file
// whole or not at all (a kill mid-write leaves the previous one, which --resume reads).
void WriteBenchFiles(const std::string& dir, const std::vector<BenchRow>& rows, const std::string& summary) {
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"bench.txt", FormatBenchTable(rows) + "\n" + summary},
                                   {"bench.csv", BenchCsv(rows)},
                                   {"bench.json", BenchJson(rows).dump(2) + "\n"}}) {
    if (absl::Status s = WriteFileAtomically(dir + "/" + name, text); !s.ok()) {
      std::cerr << "sparseditto bench: " << s.message() << "\n";
    }
  }
}

int RunBench(const BenchOptions& o) {
  auto suite = LoadTaskFile(o.suite);
  if (!suite.ok()) {
    std::cerr << "sparseditto bench: " << suite.status().message() << "\n";
    return kExitFailure;
  }
  auto seeds = LoadSeedLibrary(o.seeds_dir.empty() ? SeedLibraryDir() : o.seeds_dir);
  if (!seeds.ok()) {
    std::cerr << "sparseditto bench: " << seeds.status().message() << "\n";
    return kExitFailure;
  }
  const std::regex filter(o.name_filter.empty() ? ".*" : o.name_filter);
  std::vector<v1::Task> tasks;
  for (const auto& task : suite->tasks()) {
    if (std::regex_search(task.name(), filter)) tasks.push_back(task);
  }
  if (o.list) {  // task, seed, seed file: one line a pair (scripts/seed_finalists.sh reads it)
    for (const v1::Task& task : tasks) {
      int applies = 0;
      for (const SeedKernel& seed : *seeds) {
        if (!SeedAppliesTo(seed, task)) continue;
        std::cout << task.name() << "\t" << seed.name << "\t" << seed.path << "\n";
        ++applies;
      }
      if (applies == 0) std::cerr << fmt::format("{}: no seed applies\n", task.name());
    }
    return kExitSuccess;
  }
  const std::string out_dir = o.out_dir.empty() ? "bench-" + std::filesystem::path(o.suite).stem().string() : o.out_dir;
  const std::vector<v1::Task> suite_order(suite->tasks().begin(), suite->tasks().end());  // rows are kept in it
  std::vector<BenchRow> all_rows;  // rows kept from an earlier bench (--resume), then this one's
  if (o.resume) {
    auto kept = ReadBenchRows(out_dir + "/bench.json");
    if (!kept.ok() && !absl::IsNotFound(kept.status())) {
      std::cerr << "sparseditto bench --resume: " << kept.status().message() << " (left as it is)\n";
      return kExitFailure;
    }
    if (kept.ok()) all_rows = OrderLikeSuite(*kept, suite_order);
    const size_t due_before = tasks.size();
    std::erase_if(tasks, [&all_rows](const v1::Task& task) { return BenchTaskDone(task, all_rows); });
    std::cerr << fmt::format("resuming {}: {} rows kept; {} of {} tasks done, {} to bench\n", out_dir, all_rows.size(),
                             due_before - tasks.size(), due_before, tasks.size());
    if (!all_rows.empty()) std::cout << FormatBenchTable(all_rows) << std::flush;
  }
  if (absl::Status s = RequireSandboxLayers("bench"); !s.ok()) {
    std::cerr << "sparseditto bench: " << s.message() << "\n";
    return kExitFailure;
  }
  EvaluatorOptions options = InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, o.min_trials);
  options.runner_options.set_correctness_trials(o.correctness_trials);
  options.runner_options.set_measure_device_limits(true);
  auto evaluator = Evaluator::Create(options);
  if (!evaluator.ok()) {
    std::cerr << "sparseditto bench: " << evaluator.status().message() << "\n";
    return kExitFailure;
  }
  // Every (task, seed) compile up front, on every core; the cache folds identical ones.
  CompilePool pool(&(*evaluator)->compiler());
  std::vector<std::vector<std::pair<const SeedKernel*, std::future<absl::StatusOr<CompileResult>>>>> compiles(tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    for (const SeedKernel& seed : *seeds) {
      if (SeedAppliesTo(seed, tasks[t])) {
        compiles[t].emplace_back(&seed, pool.Submit(seed.source, (*evaluator)->CompileOptionsFor(tasks[t])));
      }
    }
  }
  std::filesystem::create_directories(out_dir);
  size_t new_rows = 0;
  std::map<std::string, int> faults;  // by seed
  uint64_t check_seed = 1;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const v1::Task& task = tasks[t];
    auto setup = (*evaluator)->SetupTask(task);
    if (!setup.ok()) {
      std::cerr << fmt::format("{}: set-up failed: {}\n", task.name(), setup.status().message());
      continue;
    }
    std::vector<v1::EvalResult> results;
    for (auto& [seed, future] : compiles[t]) {
      auto compiled = future.get();
      v1::Candidate candidate;
      candidate.set_id(seed->name);
      candidate.set_task_name(task.name());
      candidate.set_source(seed->source);
      candidate.set_seed_name(seed->name);
      if (faults[seed->name] >= o.max_faults) {
        std::cerr << fmt::format("  {} on {}: skipped after {} crashes or timeouts\n", seed->name, task.name(),
                                 faults[seed->name]);
        continue;
      }
      if (!compiled.ok()) {
        std::cerr << fmt::format("{}: {}: compiler: {}\n", task.name(), seed->name, compiled.status().message());
        continue;
      }
      results.push_back((*evaluator)->Evaluate(task, candidate, o.finalist, check_seed++, &*compiled));
      const auto& r = results.back();
      if (r.failure() == v1::FAILURE_CATEGORY_CRASH || r.failure() == v1::FAILURE_CATEGORY_TIMEOUT) ++faults[seed->name];
      if (!IsCorrect(r)) {
        std::cerr << fmt::format("  {} on {}: {}: {}\n", seed->name, task.name(), v1::FailureCategory_Name(r.failure()),
                                 r.failure_detail().substr(0, 300));
      }
    }
    const auto rows = MakeBenchRows(task, *setup, results, setup->matrix_rows(), setup->matrix_cols());
    std::cout << FormatBenchTable(rows) << std::flush;
    all_rows.insert(all_rows.end(), rows.begin(), rows.end());
    all_rows = OrderLikeSuite(all_rows, suite_order);
    new_rows += rows.size();
    WriteBenchFiles(out_dir, all_rows, "");
  }
  std::string summary;
  for (const char* dtype : {"fp32", "fp16", "bf16"}) {
    std::vector<BenchRow> of_dtype;
    for (const auto& r : all_rows) {
      if (r.dtype == dtype) of_dtype.push_back(r);
    }
    if (of_dtype.empty()) continue;
    summary += fmt::format("{}: geomean speedup of the best seed over the best baseline {:.2f}x, over cuSPARSE CSR "
                           "{:.2f}x, over cuBLAS dense {:.2f}x ({} rows)\n",
                           dtype, GeomeanSpeedup(of_dtype), GeomeanSpeedup(of_dtype, "cusparse_csr"),
                           GeomeanSpeedup(of_dtype, "cublas_dense"), of_dtype.size());
  }
  std::cout << "\n" << summary;
  WriteBenchFiles(out_dir, all_rows, summary);
  std::cout << "wrote " << out_dir << "/bench.{txt,json,csv}\n";
  if (new_rows == 0 && !tasks.empty()) {
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
  cmd->add_option("--out", o->out_dir, "Folder for bench.txt, bench.json, bench.csv (default bench-<suite>)");
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--min-trials", o->min_trials, "Timed trials at least")->capture_default_str();
  cmd->add_option("--correctness-trials", o->correctness_trials, "Fresh-B checks per n")->capture_default_str();
  cmd->add_flag("--finalist", o->finalist, "Run every seed through the finalist checks (sanitizers) too");
  cmd->add_flag("--resume", o->resume,
                "Keep the rows of OUT/bench.json and bench only the tasks they do not finish (a bench cut short, "
                "e.g. by a time limit, goes on where it stopped)");
  cmd->add_flag("--list", o->list, "Print the seeds that apply to each task (task, seed, file) and stop");
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->add_option("--max-faults", o->max_faults, "Skip a seed after this many crashes or timeouts")
      ->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = RunBench(*o); });
}

}  // namespace sparseditto
