// `sparseditto status RUN`: a run summarised from its store (opened read-only, so it works while the
// search runs): per task its state, attempts, evaluations against the budget, outcomes by category,
// budget spent, the best candidate with its fitness, and its arch and the GPUs its evaluations ran on.
// A task with several archs is one population per arch ("<task>@<arch>", task/arch_populations.h),
// each shown as a task of its own: its arch, GPU model, evaluations and best.
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/run_folder.h"
#include "common/status_format.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/search_progress.h"
#include "coordinator/search/stored_search.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "population_store/population_store.h"
#include "task/arch_populations.h"

namespace sparseditto {
namespace {

struct StatusOptions {
  std::string run;
  std::string runs_dir = "runs";
};

std::string StateName(const StoredSearch& s) {
  if (!s.state) return "pending";
  switch (s.state->status()) {
    case store::TASK_RUN_STATUS_RUNNING: return "running (or interrupted: the same search command resumes it)";
    case store::TASK_RUN_STATUS_DONE: return "done";
    case store::TASK_RUN_STATUS_FAILED: return "failed";
    case store::TASK_RUN_STATUS_BUDGET_EXHAUSTED: return "done (budget spent)";
    default: return "pending";
  }
}

// "none" -> "correct"; FAILURE_CATEGORY_COMPILE -> "compile".
std::string OutcomeName(v1::FailureCategory failure) {
  if (failure == v1::FAILURE_CATEGORY_NONE) return "correct";
  std::string name = v1::FailureCategory_Name(failure).substr(std::string("FAILURE_CATEGORY_").size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// "evaluated on NVIDIA H200 (sm_90)", or each GPU with its evaluations and a warning when several.
std::string DescribeGpus(const std::vector<GpuEvaluations>& gpus) {
  if (gpus.empty()) return "no evaluation on a GPU yet";
  if (gpus.size() == 1) return fmt::format("evaluated on {}", gpus[0].gpu);
  std::string each;
  for (const GpuEvaluations& g : gpus) each += fmt::format("{}{} ({} evaluations)", each.empty() ? "" : ", ", g.gpu, g.evaluations);
  return fmt::format("evaluated on {}: WARNING: times from different GPUs are compared in this task", each);
}

absl::Status PrintTask(const PopulationStore& store, const std::string& run_id, const std::string& task_name) {
  absl::StatusOr<StoredSearch> s = ReadStoredSearch(store, run_id, task_name);
  if (!s.ok()) return s.status();
  std::map<std::string, int64_t> outcomes;
  absl::StatusOr<std::vector<v1::Candidate>> candidates = store.ListCandidates(run_id, task_name);
  if (!candidates.ok()) return candidates.status();
  for (const v1::Candidate& c : *candidates) {
    absl::StatusOr<v1::EvalResult> result = store.GetEvaluation(run_id, c.id());
    if (absl::IsNotFound(result.status())) {
      ++outcomes["not evaluated"];
    } else if (!result.ok()) {
      return result.status();
    } else {
      ++outcomes[OutcomeName(result->failure())];
    }
  }
  const v1::Budget& budget = s->task.budget();
  const coordinator::Spent& spent = s->search.spent();
  const size_t at = task_name.rfind(kPopulationSeparator);
  const std::string population =
      at == std::string::npos ? "" : fmt::format(" (the {} population of {})", task_name.substr(at + 1), task_name.substr(0, at));
  std::cout << fmt::format("task {}{}: {}", task_name, population, StateName(*s));
  if (s->state && !s->state->status_detail().empty()) std::cout << " — " << s->state->status_detail();
  std::cout << fmt::format("\n  attempts {}, candidates {}, in flight: {}\n", s->state ? s->state->attempts() : 0,
                           candidates->size(),
                           s->state && !s->state->in_flight_candidate_id().empty()
                               ? s->state->in_flight_candidate_id()
                               : std::string("none"));
  std::cout << fmt::format("  evaluations {}/{}, wall {}{}, duplicates {}", spent.evaluations(),
                           budget.max_evaluations(),
                           FormatDuration(spent.wall_seconds()),
                           budget.max_wall_seconds() > 0 ? "/" + FormatDuration(budget.max_wall_seconds()) : "",
                           spent.duplicates());
  if (spent.tokens() > 0 || budget.max_tokens() > 0) std::cout << fmt::format(", tokens {}", spent.tokens());
  if (spent.money_usd() > 0 || budget.max_money_usd() > 0) std::cout << fmt::format(", ${:.2f}", spent.money_usd());
  absl::StatusOr<std::vector<GpuEvaluations>> gpus = EvaluatedOn(store, run_id, task_name);
  if (!gpus.ok()) return gpus.status();
  std::cout << fmt::format("\n  arch {}, {}", s->task.arch().empty() ? "any" : fmt::format("{}", fmt::join(s->task.arch(), ", ")),
                           DescribeGpus(*gpus));
  std::cout << "\n  outcomes:";
  if (outcomes.empty()) std::cout << " none yet";
  for (const auto& [name, count] : outcomes) std::cout << fmt::format(" {} {}", name, count);
  std::cout << "\n";
  if (s->search.best_candidate_id().empty()) {
    std::cout << "  best: none correct yet\n";
  } else {
    std::cout << fmt::format("  best: {} fitness {:.3f}\n", s->search.best_candidate_id(), s->search.best_fitness());
  }
  const std::string finalists = s->state ? DescribeFinalists(s->state->finalist_attempts()) : "";
  std::cout << "  finalist checks: " << (finalists.empty() ? "not run yet" : finalists) << "\n";
  return absl::OkStatus();
}

int RunStatus(const StatusOptions& o) {
  absl::StatusOr<OpenedRun> run = OpenRun(o.run, o.runs_dir);
  if (!run.ok()) {
    std::cerr << "sparseditto status: " << run.status().message() << "\n";
    return kExitFailure;
  }
  const auto& [folder, store, record, tasks] = *run;
  std::cout << fmt::format("run {} ({}), revision {}, {} task(s)\n", record.run_id(), folder.dir,
                           record.project_revision().empty() ? "unknown" : record.project_revision(), tasks.size());
  int failures = 0;
  for (const v1::Task& task : tasks) {
    if (absl::Status s = PrintTask(*store, record.run_id(), task.name()); !s.ok()) {
      std::cerr << fmt::format("sparseditto status: task {}: {}\n", task.name(), s.message());
      ++failures;
    }
  }
  return failures == 0 ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterStatusCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Summarise a search run from its store (works while it runs)");
  cmd->add_option("run", o->run, "Run name (under --runs-dir) or the run's folder")->required();
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = RunStatus(*o); });
}

}  // namespace sparseditto
