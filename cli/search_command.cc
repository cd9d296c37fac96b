// `sparseditto search TASKS.yaml`: the embedded search, task by task, with the built-in mutator and the
// evaluator on the local GPU; the store under runs/<run>/store makes the same command resume a run.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "common/status_format.h"
#include "coordinator/search/gpu_candidate_evaluator.h"
#include "coordinator/search/search_loop.h"
#include "fmt/format.h"
#include "kernels/seed_library.h"
#include "population_store/population_store.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

struct SearchOptions {
  std::string task_file;
  std::string run;
  std::string runs_dir = "runs";
  std::string task_name;
  std::string cache_dir;
  double timing_seconds = 1.0;
  double stage_timeout = 60;
};

int RunSearch(const SearchOptions& o) {
  auto batch = LoadTaskFile(o.task_file);
  if (!batch.ok()) {
    std::cerr << "sparseditto search: " << batch.status().message() << "\n";
    return kExitFailure;
  }
  auto seeds = LoadSeedLibrary(SeedLibraryDir());
  if (!seeds.ok()) {
    std::cerr << "sparseditto search: " << seeds.status().message() << "\n";
    return kExitFailure;
  }
  const std::string run = o.run.empty() ? std::filesystem::path(o.task_file).stem().string() : o.run;
  PopulationStoreOptions store_options;
  store_options.create_if_missing = true;
  auto store = PopulationStore::Open(o.runs_dir + "/" + run + "/store", store_options);
  if (!store.ok()) {
    std::cerr << "sparseditto search: " << store.status().message() << "\n";
    return kExitFailure;
  }
  auto evaluator = Evaluator::Create(InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, 20));
  if (!evaluator.ok()) {
    std::cerr << "sparseditto search: " << evaluator.status().message() << "\n";
    return kExitFailure;
  }
  GpuCandidateEvaluator gpu(evaluator->get());
  int failures = 0;
  for (const v1::Task& task : batch->tasks()) {
    if (!o.task_name.empty() && task.name() != o.task_name) continue;
    if (auto setup = (*evaluator)->SetupTask(task); !setup.ok()) {
      std::cerr << fmt::format("{}: set-up: {}\n", task.name(), setup.status().message());
    }
    auto summary = RunTaskSearch(**store, run, task, *seeds, gpu, SearchLoopOptions());
    if (!summary.ok()) {
      std::cerr << fmt::format("{}: {}\n", task.name(), summary.status().message());
      ++failures;
      continue;
    }
    std::cout << fmt::format("{}: {} evaluations ({} now{}), best {} fitness {:.3f}, stopped: {}\n", task.name(),
                             summary->evaluations, summary->evaluations_this_call,
                             summary->resumed ? ", resumed" : "",
                             summary->best_candidate_id.empty() ? "(none correct)" : summary->best_candidate_id,
                             summary->best_fitness, summary->stop_reason);
  }
  return failures == 0 ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterSearchCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand("search", "Evolve kernels for each task of a file from the seed library "
                                               "(embedded: built-in mutator, local GPU); resumes an existing run");
  cmd->add_option("tasks", o->task_file, "Task file (YAML)")->required();
  cmd->add_option("--run", o->run, "Run name (default: the task file's name)");
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_option("--name", o->task_name, "Only this task of the file");
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = RunSearch(*o); });
}

}  // namespace sparseditto
