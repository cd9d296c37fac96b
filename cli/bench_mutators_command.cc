// `sparseditto bench-mutators --task T.yaml --models FILE [--budget-evaluations N] [--out DIR]`: the
// same task, seed and budget searched once per model of a mutator file, each alone and in its own run
// folder, and a table per model (coordinator/search/mutator_bench.h) printed and written as
// DIR/bench-mutators.{txt,json,csv}.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "cli/llm_setup.h"
#include "common/status_format.h"
#include "coordinator/search/gpu_candidate_evaluator.h"
#include "coordinator/search/mutator_bench.h"
#include "fmt/format.h"
#include "kernels/seed_library.h"
#include "task/mutator_file.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

struct BenchMutatorsOptions {
  std::string task_file;
  std::string task_name;
  std::string models_file;
  int64_t budget_evaluations = 0;
  std::string out_dir;
  std::string model_choice = "plan";
  std::string cache_dir;
  double timing_seconds = 1.0;
  double stage_timeout = 60;
};

int Fail(const absl::Status& status) {
  std::cerr << "sparseditto bench-mutators: " << status.message() << "\n";
  return kExitFailure;
}

int RunBenchMutators(const BenchMutatorsOptions& o) {
  auto batch = LoadTaskFile(o.task_file);
  if (!batch.ok()) return Fail(batch.status());
  const v1::Task* task = nullptr;
  for (const v1::Task& t : batch->tasks()) {
    if (o.task_name.empty() || t.name() == o.task_name) {
      if (task != nullptr) {
        return Fail(absl::InvalidArgumentError(
            fmt::format("{} holds several tasks; name one with --name", o.task_file)));
      }
      task = &t;
    }
  }
  if (task == nullptr) return Fail(absl::NotFoundError(fmt::format("{} has no task named {}", o.task_file, o.task_name)));
  auto models = LoadMutatorsFile(o.models_file);
  if (!models.ok()) return Fail(models.status());
  absl::StatusOr<ModelChoice> choice = ParseModelChoice(o.model_choice);
  if (!choice.ok()) return Fail(choice.status());
  auto seeds = LoadSeedLibrary(SeedLibraryDir());
  if (!seeds.ok()) return Fail(seeds.status());
  if (absl::Status s = RequireSandboxLayers("bench-mutators"); !s.ok()) return Fail(s);
  const EvaluatorOptions evaluator_options =
      InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, 20);
  auto evaluator = Evaluator::Create(evaluator_options);
  if (!evaluator.ok()) return Fail(evaluator.status());
  GpuCandidateEvaluator gpu(evaluator->get());

  MutatorBenchOptions options;
  options.out_dir = o.out_dir.empty() ? fmt::format("runs/bench-mutators-{}", task->name()) : o.out_dir;
  options.budget_evaluations = o.budget_evaluations;
  options.make_llm = CliLlmFactory(*choice);
  options.on_model_start = [](const std::string& model) { std::cerr << fmt::format("model {}...\n", model); };
  auto rows = RunMutatorBench(*task, *models, *seeds, gpu, options);
  if (!rows.ok()) return Fail(rows.status());
  std::cout << MutatorBenchText(*rows);
  if (absl::Status s = WriteMutatorBench(*rows, options.out_dir); !s.ok()) return Fail(s);
  std::cout << fmt::format("table: {}/bench-mutators.{{txt,json,csv}}; each model's run: {}/<model>/\n",
                           options.out_dir, options.out_dir);
  for (const MutatorBenchRow& r : *rows) {
    if (!r.ok) return kExitFailure;
  }
  return kExitSuccess;
}

}  // namespace

void RegisterBenchMutatorsCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<BenchMutatorsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-mutators", "Search one task once per model of a mutator file (same seed and budget) and compare "
                        "compile, correct and improvement rates, best fitness, tokens, cost and wall time");
  cmd->add_option("--task", o->task_file, "Task file (YAML)")->required();
  cmd->add_option("--name", o->task_name, "The task of the file to use (when it holds several)");
  cmd->add_option("--models", o->models_file, "Mutator file (a YAML 'mutators:' list, configs/mutators/)")
      ->required();
  cmd->add_option("--budget-evaluations", o->budget_evaluations,
                  "Evaluations per model (default: the task's budget.max_evaluations)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--out", o->out_dir, "Output folder (default runs/bench-mutators-<task>)");
  cmd->add_option("--model-choice", o->model_choice, "As for search: plan or bandit")->capture_default_str();
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = RunBenchMutators(*o); });
}

}  // namespace sparseditto
