#include "cli/search_common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "absl/strings/strip.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "cli/llm_setup.h"
#include "cli/logging.h"
#include "cli/provenance.h"
#include "common/status_format.h"
#include "common/shared_gpu.h"
#include "coordinator/search/batch_search.h"
#include "coordinator/search/confirmation.h"
#include "coordinator/search/run_artifacts.h"
#include "coordinator/search/search_events.h"
#include "coordinator/search/search_progress.h"
#include "fmt/format.h"
#include "kernels/seed_library.h"
#include "population_store/population_store.h"
#include "task/arch_populations.h"
#include "task/run_paths.h"
#include "task/task_loader.h"
#include "spdlog/spdlog.h"

namespace sparseditto {
namespace {

// "throughput: 120 evaluations in 300 s (0.40/s); GPU stages 250 s (83% of the wall: START 40, ...);
// waiting for compiles 20 s; 100 children screened, 12 timed in full". With several evaluators the GPU
// stages are summed over them (they overlap) and the loop's wait says nothing about compiles, so that
// figure is left out.
std::string DescribeThroughput(const SearchSummary& s, size_t evaluators) {
  const SearchThroughput& t = s.throughput;
  std::string stages;
  for (const auto& [stage, seconds] : t.stage_seconds) {
    stages += fmt::format("{}{} {:.0f}", stages.empty() ? "" : ", ", absl::StripPrefix(stage, "EVAL_STAGE_"), seconds);
  }
  const double wall = std::max(t.wall_seconds, 1e-9);
  if (evaluators > 1) {
    return fmt::format("throughput: {} evaluations in {:.0f} s ({:.2f}/s) on {} evaluators; GPU stages {:.0f} s summed "
                       "over them{}{}; {} children screened, {} timed in full",
                       s.evaluations_this_call, t.wall_seconds, s.evaluations_this_call / wall, evaluators,
                       t.gpu_seconds, stages.empty() ? "" : ": ", stages, t.screened, t.timed_in_full);
  }
  return fmt::format("throughput: {} evaluations in {:.0f} s ({:.2f}/s); GPU stages {:.0f} s ({:.0f}% of the wall{}{}); "
                     "waiting for compiles and CPU stages {:.0f} s; {} children screened, {} timed in full",
                     s.evaluations_this_call, t.wall_seconds, s.evaluations_this_call / wall, t.gpu_seconds,
                     100 * t.gpu_seconds / wall, stages.empty() ? "" : ": ", stages,
                     std::max(0.0, t.evaluator_seconds - t.gpu_seconds), t.screened, t.timed_in_full);
}


// The confirmation stage of one finished task (coordinator/search/confirmation.h): its best and its
// best seed re-timed in rounds behind fresh baselines; printed and kept as <run>/<task>.confirmation.txt.
void ConfirmTask(const PopulationStore& store, const std::string& run, const std::string& run_dir,
                 const std::vector<v1::Task>& tasks, const std::string& task_name, CandidateEvaluator& evaluator,
                 int rounds, const std::function<void(const std::string&)>& say) {
  const auto task = std::find_if(tasks.begin(), tasks.end(), [&](const v1::Task& x) { return x.name() == task_name; });
  if (task == tasks.end()) return;
  spdlog::info("{}: confirming over {} rounds (the result, the best seed and the baselines re-timed)", task_name,
               rounds);
  auto subjects = ConfirmationSubjects(store, run, task_name);
  absl::StatusOr<Confirmation> confirmed =
      subjects.ok() ? ConfirmSubjects(evaluator, *task, *subjects, {.rounds = rounds}, task->seed() + 1000)
                    : absl::StatusOr<Confirmation>(subjects.status());
  if (!confirmed.ok()) {
    say(fmt::format("{}: not confirmed: {}", task_name, confirmed.status().message()));
    return;
  }
  const std::string text = DescribeConfirmation(*confirmed);
  say(fmt::format("{}: {}", task_name, text));
  std::ofstream(std::filesystem::path(run_dir) / (task_name + ".confirmation.txt")) << text << "\n";
  // The same as numbers, for `status --json` and the report (report/run_facts.h).
  const std::string numbers = (std::filesystem::path(run_dir) / (task_name + ".confirmation.json")).string();
  if (absl::Status s = WriteFileAtomically(numbers, ConfirmationToJson(*confirmed) + "\n"); !s.ok()) {
    spdlog::warn("{}: the confirmation's numbers not kept: {}", task_name, std::string(s.message()));
  }
}

}  // namespace

int FailWith(const char* command, const absl::Status& status) {
  spdlog::error("sparseditto {}: {}", command, std::string(status.message()));
  return kExitFailure;
}

void AddBudgetOptions(CLI::App* cmd, SearchOptions* o) {
  cmd->add_option("--max-evaluations", o->max_evaluations,
                  "Every task's budget.max_evaluations (overrides the task file; kept with the run's tasks, so "
                  "resuming takes the same)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--max-wall", o->max_wall_seconds,
                  "Every task's budget.max_wall_seconds: seconds of search per task (0: no limit)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--target-fitness", o->target_fitness,
                  "Every task's budget.target_fitness: stop a task once its best reaches this fitness (0: never)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--stagnation", o->stagnation_evaluations,
                  "Every task's budget.stagnation_evaluations: stop after this many evaluations without "
                  "improvement (0: never)")
      ->check(CLI::Range(0, 1 << 30));
}

void AddSearchOptions(CLI::App* cmd, SearchOptions* o, bool task_file_required) {
  CLI::Option* tasks = cmd->add_option("tasks", o->task_file, "Task file (YAML); several tasks form a batch");
  if (task_file_required) tasks->required();
  cmd->add_option("--run", o->run, "Run name (default: the task file's name)");
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_option("--name", o->task_name, "Only this task of the file");
  cmd->add_option("--mutators", o->mutators_file,
                  "Mutator file (a YAML 'mutators:' list, configs/mutators/) replacing every task's mutators");
  cmd->add_option("--model-choice", o->model_choice,
                  "Which LLM model serves an LLM plan: 'plan' (the mutator the plan drew by weight) or 'bandit' "
                  "(a cost-aware UCB bandit over the LLM models)")
      ->capture_default_str();
  cmd->add_option("--retries", o->retries,
                  "Retries of a failed task in this command (default: each task's budget.max_retries, 1 "
                  "unless the task file says otherwise)")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->add_option("--compile-ahead", o->compile_ahead,
                  "Children planned and compiled together per step (1: one at a time)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--proposals-in-flight", o->proposals_in_flight,
                  "LLM calls in flight at once, beside the compiles and GPU evaluations (0: --compile-ahead)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_option("--finalists", o->finalists,
                  "When a task's search stops, its best candidates get the finalist checks (sanitizers, about a "
                  "minute or two each on a GPU) until one passes or this many were tried; 0: none")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--screen-margin", o->screen_margin,
                  "Time a child in full only when its short timing screen is within this share of an elite "
                  "(its fitness of the best's, or its time at some n of the fastest there); 0: every child in full")
      ->capture_default_str();
  cmd->add_option("--confirm-rounds", o->confirm_rounds,
                  "When a task's search stops, its best candidate and its best seed are timed again this many "
                  "rounds, each behind freshly timed baselines; the confirmed fitness (median and range) is what "
                  "to read; 0: none")
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  AddBudgetOptions(cmd, o);
  AddLogOptions(cmd, &o->log_level, &o->log_file);
  cmd->add_option("--log-interval", o->log_interval_seconds,
                  "Seconds between progress lines when stderr is not a terminal")
      ->capture_default_str();
}

absl::StatusOr<std::vector<v1::Task>> LoadSearchTasks(const SearchOptions& o) {
  auto batch = LoadTaskFile(o.task_file);
  if (!batch.ok()) return batch.status();
  // --name picks a task (every population of it) or one population of a task with several archs.
  std::vector<v1::Task> tasks;
  for (const v1::Task& task : SplitByArch({batch->tasks().begin(), batch->tasks().end()})) {
    const bool of_task = task.name().starts_with(o.task_name + kPopulationSeparator);
    if (o.task_name.empty() || task.name() == o.task_name || of_task) tasks.push_back(task);
  }
  if (tasks.empty()) return absl::NotFoundError(fmt::format("{} has no task named {}", o.task_file, o.task_name));
  if (absl::Status s = ReplaceMutators(o.mutators_file, &tasks); !s.ok()) return s;
  for (v1::Task& task : tasks) {
    v1::Budget* budget = task.mutable_budget();
    if (o.max_evaluations >= 0) budget->set_max_evaluations(o.max_evaluations);
    if (o.max_wall_seconds >= 0) budget->set_max_wall_seconds(o.max_wall_seconds);
    if (o.target_fitness >= 0) budget->set_target_fitness(o.target_fitness);
    if (o.stagnation_evaluations >= 0) budget->set_stagnation_evaluations(o.stagnation_evaluations);
  }
  return tasks;
}

absl::StatusOr<std::string> SearchRunName(const SearchOptions& o) {
  const std::string run = o.run.empty() ? std::filesystem::path(o.task_file).stem().string() : o.run;
  const std::string run_name_from =
      o.run.empty() ? fmt::format("the task file's name {} (give --run NAME for another)", o.task_file) : "--run";
  if (absl::Status s = CheckRunName(run, run_name_from); !s.ok()) return s;
  return run;
}

int RunSearch(const SearchOptions& o, const char* command, const MakeSearchBackend& make, const SearchHooks& hooks) {
  // The run's name names its folder: checked before anything is read or written (task/run_paths.h).
  absl::StatusOr<std::string> run = SearchRunName(o);
  if (!run.ok()) return FailWith(command, run.status());
  absl::StatusOr<std::vector<v1::Task>> tasks = LoadSearchTasks(o);
  if (!tasks.ok()) return FailWith(command, tasks.status());
  return RunSearchOfTasks(o, *run, *tasks, command, make, hooks);
}

int RunSearchOfTasks(const SearchOptions& o, const std::string& run, const std::vector<v1::Task>& tasks_given,
                     const char* command, const MakeSearchBackend& make, const SearchHooks& hooks) {
  const std::vector<v1::Task> tasks = SplitByArch(tasks_given);  // as the batch searches them
  auto Fail = [command, &hooks](const absl::Status& status) {
    if (hooks.on_line) hooks.on_line(fmt::format("error: {}", status.message()));
    return FailWith(command, status);
  };
  // Each result line goes to stdout and to the watchers.
  auto say = [&hooks](const std::string& line) {
    std::cout << line << "\n" << std::flush;
    if (hooks.on_line) hooks.on_line(line);
  };
  absl::StatusOr<std::filesystem::path> run_path = PathInside(o.runs_dir, {run});
  if (!run_path.ok()) return Fail(run_path.status());
  const std::string run_dir = run_path->string();
  absl::StatusOr<ModelChoice> choice = ParseModelChoice(o.model_choice);
  if (!choice.ok()) return Fail(choice.status());
  auto seeds = LoadSeedLibrary(SeedLibraryDir());
  if (!seeds.ok()) return Fail(seeds.status());
  PopulationStoreOptions store_options;
  store_options.create_if_missing = true;
  auto store = OpenRunStore(run_dir, store_options);
  if (!store.ok()) return Fail(store.status());
  const EvaluatorOptions evaluator_options =
      InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, 20);
  absl::StatusOr<std::unique_ptr<SearchBackend>> backend = make(evaluator_options, run_dir);
  if (!backend.ok()) return Fail(backend.status());
  CandidateEvaluator& gpu = (*backend)->evaluator();
  // The run's events (search_events.h), appended: a resumed run's follow its earlier ones.
  absl::StatusOr<std::unique_ptr<JsonlEventFile>> events = JsonlEventFile::Open((*run_path / "events.jsonl").string());
  if (!events.ok()) return Fail(events.status());
  if ((*events)->dropped_bytes() > 0) {
    spdlog::warn("{}: dropped a partial last line of {} bytes (cut by a crash) before appending",
                 (*run_path / "events.jsonl").string(), (*events)->dropped_bytes());
  }

  ProgressPrinter progress(stderr, isatty(STDERR_FILENO) != 0, o.log_interval_seconds);
  BatchSearchOptions options;
  options.max_retries = o.retries;
  options.loop.compile_ahead = o.compile_ahead;
  options.loop.proposals_in_flight = o.proposals_in_flight;
  options.loop.max_finalists = o.finalists;
  options.loop.screen_margin = o.screen_margin;
  options.loop.pipeline = &(*backend)->pipeline();
  options.loop.events = events->get();
  if (hooks.stop_requested) options.loop.stop_requested = [&hooks] { return !hooks.stop_requested().empty(); };
  options.run_dir = run_dir;
  options.project_revision = ProjectRevision();
  options.provenance_json = CollectProvenance(tasks, evaluator_options.compiler.nvcc, (*backend)->fake_evaluator_note());
  options.make_llm = CliLlmFactory(*choice, hooks.model_clients);
  std::string current_task;
  options.on_progress = [&](const SearchProgress& p) {
    if (!current_task.empty() && current_task != p.task_name) progress.EndTask();
    current_task = p.task_name;
    progress.Update(p);
    if (hooks.on_progress) hooks.on_progress(p);
  };
  options.loop.on_finalist = [&](const FinalistProgress& f) {
    progress.EndTask();
    current_task.clear();
    const std::string line = fmt::format("{}: finalist checks {} of at most {}: {} (determinism rerun, "
                                         "compute-sanitizer memcheck, racecheck, initcheck; a minute or two on a GPU)",
                                         f.task_name, f.attempt, f.max_finalists, f.candidate_id);
    spdlog::info("{}", line);
    if (hooks.on_line) hooks.on_line(line);
  };
  auto outcome = RunBatchSearch(**store, run, tasks, *seeds, gpu, options);
  progress.EndTask();
  if (!outcome.ok()) return Fail(outcome.status());
  const std::string stopped_by = hooks.stop_requested ? hooks.stop_requested() : "";
  if (!stopped_by.empty()) {
    (*events)->Emit({{"type", "stop"},
                     {"run", run},
                     {"reason", "signal"},
                     {"signal", stopped_by},
                     {"detail", "stopped at a safe point; the same command resumes the run"}});
  }
  for (const TaskOutcome& t : outcome->tasks) {
    for (size_t i = 0; i < t.errors.size(); ++i) {
      spdlog::warn("{}: attempt {} failed: {}", t.task_name, i + 1, t.errors[i]);
    }
    if (!t.artifact_error.empty()) spdlog::warn("{}: artifacts: {}", t.task_name, t.artifact_error);
    if (!t.ok) {
      say(fmt::format("{}: FAILED after {} attempts", t.task_name, t.attempts));
      continue;
    }
    const SearchSummary& s = t.summary;
    say(fmt::format("{}: {} evaluations ({} now{}), best {} fitness {:.3f}, stopped: {}", t.task_name,
                             s.evaluations, s.evaluations_this_call, s.resumed ? ", resumed" : "",
                             s.best_candidate_id.empty() ? "(none correct)" : s.best_candidate_id, s.best_fitness,
                             s.stop_detail.empty() ? s.stop_reason : s.stop_detail));
    if (!s.plan.empty()) {
      // "no plan: ..." or "plan <id>: <variants> (predicted fitness ...)"
      say(fmt::format("{}: {}{}", t.task_name, s.plan_candidate_id.empty() ? "" : "plan " + s.plan_candidate_id + ": ",
                      s.plan));
    }
    // "seed X: all N points of its tunable space proposed; no more built-in children of it"
    for (const std::string& line : s.exhausted_spaces) say(fmt::format("{}: {}", t.task_name, line));
    if (!s.finalists.empty()) say(fmt::format("{}: {}", t.task_name, s.finalists));
    if (s.evaluations_this_call > 0) say(fmt::format("{}: {}", t.task_name, DescribeThroughput(s, (*backend)->evaluators())));
    // Not after a stop asked for, before or during the confirmation of an earlier task (minutes on a GPU).
    const bool stopping = hooks.stop_requested && !hooks.stop_requested().empty();
    if (o.confirm_rounds > 0 && !s.best_candidate_id.empty() && !stopping) {
      ConfirmTask(**store, run, run_dir, tasks, t.task_name, gpu, o.confirm_rounds, say);
    }
    if (s.shared_gpu_evaluations_this_call > 0) {
      say(fmt::format("{}: warning: {} of the {} evaluations now were timed while other work shared the GPU "
                      "(median idle trial {}): their fitness is not comparable with a quiet GPU's",
                      t.task_name, s.shared_gpu_evaluations_this_call, s.evaluations_this_call, kSharedGpuRule));
    }
  }
  if (!stopped_by.empty()) {
    say(fmt::format("run {}: stopped by {} at a safe point; run the same command to resume it", run, stopped_by));
    return kExitFailure;  // the command's exit code says which signal (128 + its number)
  }
  if (const std::string error = (*events)->first_error(); !error.empty()) spdlog::warn("{}", error);
  say(fmt::format("run {0}: {1} (status: sparseditto status {1}, page: sparseditto report {1}, best kernels: "
                  "sparseditto export {1})",
                  run, run_dir));
  return outcome->failed() == 0 ? kExitSuccess : kExitFailure;
}


}  // namespace sparseditto
