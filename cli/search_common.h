// What `sparseditto search` (embedded: evaluators on this machine's GPUs) and `sparseditto coordinator`
// (distributed: evaluator workers over gRPC) share: the options of a search, and the run of a task
// file's batch over a SearchBackend (its evaluator and its pipeline of evaluation jobs), with its
// printed results, confirmation and throughput line, and the run's events (runs/<run>/events.jsonl,
// coordinator/search/search_events.h). The search code is the same in both.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "CLI/CLI.hpp"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/confirmation.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/search/evaluation_pipeline.h"
#include "evaluator/evaluator.h"
#include "llm_mutator/llm_mutator.h"

namespace sparseditto {

struct SearchOptions {
  // Shared by search and coordinator:
  std::string task_file;
  std::string run;
  std::string runs_dir = "runs";
  std::string task_name;
  std::string mutators_file;
  std::string model_choice = "plan";
  std::string cache_dir;
  double timing_seconds = 1.0;
  double stage_timeout = 60;
  int retries = -1;
  double log_interval_seconds = 30;
  int compile_ahead = 1;
  int proposals_in_flight = 0;  // SearchLoopOptions::proposals_in_flight (0: compile_ahead)
  int finalists = SearchLoopOptions().max_finalists;
  int confirm_rounds = ConfirmationOptions().rounds;
  double screen_margin = SearchLoopOptions().screen_margin;
  // Budget overrides for every task of the file (< 0: the task file's); stored with the run's tasks.
  int64_t max_evaluations = -1;
  double max_wall_seconds = -1;
  double target_fitness = -1;
  int stagnation_evaluations = -1;
  // Logging (cli/logging.h): the level and an optional file that gets every message too.
  std::string log_level = "info";
  std::string log_file;
  // search only:
  std::string gpus;  // --gpus: CUDA device ids, one evaluator each; empty: one, on the device we see first
  int per_gpu = 1;   // --per-gpu: evaluators on each of those GPUs, timing one at a time
};

// What evaluates a search's candidates.
class SearchBackend {
 public:
  virtual ~SearchBackend() = default;
  // For the machine-wide calls: set-up, device facts, the confirmation stage.
  virtual CandidateEvaluator& evaluator() = 0;
  // For the search's evaluation jobs.
  virtual EvaluationPipeline& pipeline() = 0;
  // How many evaluate at once (for the throughput line).
  virtual size_t evaluators() = 0;
  // Empty for a real evaluator. Otherwise why no fitness of this run was measured on a GPU, kept in the
  // run's provenance as "fake_evaluator" (status, report and exports show it), so a run made by a test
  // seam can never pass for a measured one.
  virtual std::string fake_evaluator_note() const { return ""; }
};

// Made once the run, its tasks and its store are ready (so a bad task file fails before any GPU or
// port is touched), from the evaluator options the installation gives and the run's folder.
using MakeSearchBackend = std::function<absl::StatusOr<std::unique_ptr<SearchBackend>>(
    const EvaluatorOptions& evaluator_options, const std::string& run_dir)>;

// The options both commands take (the task file, run, budgets and their overrides, timing, finalists,
// confirmation, logging...).
// The task file is a positional argument, required unless `task_file_required` is false.
void AddSearchOptions(CLI::App* cmd, SearchOptions* o, bool task_file_required = true);

// What the coordinator adds to a search: who else hears of it besides stdout and stderr (its
// watchers; called on the search's thread) and where its model requests go. Each may be null.
struct SearchHooks {
  std::function<void(const SearchProgress&)> on_progress;  // after each committed evaluation
  // Each result line printed, without its newline; a search that could not run says "error: <why>".
  std::function<void(const std::string&)> on_line;
  // The LLM mutators' model clients (the coordinator's: through its mutator services); null: the
  // real ones, calling each model's endpoint from this process.
  llm::ClientFactory model_clients;
  // Asked at the search's safe points: "" to go on, else what stops it ("SIGTERM"): the search stops
  // there (search_loop.h stop_requested), writes a stop event and skips the confirmation.
  std::function<std::string()> stop_requested;
};

// Prints "sparseditto <command>: <message>" on stderr; kExitFailure.
int FailWith(const char* command, const absl::Status& status);

// Registers --max-evaluations, --max-wall, --target-fitness and --stagnation on `cmd` (search, coordinator's
// runs, client submit), stored in `o`; `o` must outlive the command's parsing.
void AddBudgetOptions(CLI::App* cmd, SearchOptions* o);

// The run's name: --run, else the task file's stem; InvalidArgument naming where it came from.
absl::StatusOr<std::string> SearchRunName(const SearchOptions& o);
// The tasks of o.task_file (their budgets overridden by --max-evaluations and the like), a task with several archs as one task per arch ("<task>@<arch>",
// task/arch_populations.h), only --name's when given (a task's name: all its populations; a population's:
// that one), their mutators replaced by --mutators' when given. Errors: the loader's; NotFound for a
// --name the file lacks.
absl::StatusOr<std::vector<v1::Task>> LoadSearchTasks(const SearchOptions& o);

// Runs the batch of o.task_file over the backend `make` gives and prints each task's result; messages
// name `command`. The exit code: 0 when every task ended well, 1 otherwise (the reason on stderr).
int RunSearch(const SearchOptions& o, const char* command, const MakeSearchBackend& make,
              const SearchHooks& hooks = {});
// The same over tasks given (a run submitted to the coordinator), as run `run` under o.runs_dir; a task
// with several archs is searched (and reported, and confirmed) as one population per arch.
int RunSearchOfTasks(const SearchOptions& o, const std::string& run, const std::vector<v1::Task>& tasks,
                     const char* command, const MakeSearchBackend& make, const SearchHooks& hooks);

}  // namespace sparseditto
