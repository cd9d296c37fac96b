// `sparseditto status RUN [--json]`: a run summarised from its store (opened read-only, so it works while
// the search runs): per task its state, attempts, evaluations against the budget, outcomes by category,
// budget spent, the best candidate with its fitness, and its arch and the GPUs its evaluations ran on.
// A task with several archs is one population per arch ("<task>@<arch>", task/arch_populations.h),
// each shown as a task of its own: its arch, GPU model, evaluations and best. The facts are read once
// (report/run_facts.h) and shown as text or, with --json, as the document report/status_json.h defines.
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/run_folder.h"
#include "coordinator/search/search_progress.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "report/run_facts.h"
#include "report/status_json.h"

namespace sparseditto {
namespace {

struct StatusOptions {
  std::string run;
  std::string runs_dir = "runs";
  bool json = false;
};

std::string StateText(const std::string& word) {
  if (word == "running") return "running (or interrupted: the same search command resumes it)";
  if (word == "budget_exhausted") return "done (budget spent)";
  return word;
}

// "evaluated on NVIDIA H200 (sm_90)", or each GPU with its evaluations and a warning when several.
std::string DescribeGpus(const std::vector<GpuEvaluations>& gpus) {
  if (gpus.empty()) return "no evaluation on a GPU yet";
  if (gpus.size() == 1) return fmt::format("evaluated on {}", gpus[0].gpu);
  std::string each;
  for (const GpuEvaluations& g : gpus) each += fmt::format("{}{} ({} evaluations)", each.empty() ? "" : ", ", g.gpu, g.evaluations);
  return fmt::format("evaluated on {}: WARNING: times from different GPUs are compared in this task", each);
}

void PrintTask(const report::TaskFacts& t) {
  const v1::Budget& budget = t.task.budget();
  const coordinator::Spent& spent = t.spent;
  const std::string population =
      t.population_arch.empty() ? "" : fmt::format(" (the {} population of {})", t.population_arch, t.population_of);
  std::cout << fmt::format("task {}{}: {}", t.task.name(), population, StateText(t.state));
  if (!t.state_detail.empty()) std::cout << " — " << t.state_detail;
  std::cout << fmt::format("\n  attempts {}, candidates {}, in flight: {}\n", t.attempts, t.candidates.size(),
                           t.in_flight.empty() ? std::string("none") : t.in_flight);
  std::cout << fmt::format("  evaluations {}/{}, wall {}{}, duplicates {}", spent.evaluations(),
                           budget.max_evaluations(), FormatDuration(spent.wall_seconds()),
                           budget.max_wall_seconds() > 0 ? "/" + FormatDuration(budget.max_wall_seconds()) : "",
                           spent.duplicates());
  if (spent.tokens() > 0 || budget.max_tokens() > 0) std::cout << fmt::format(", tokens {}", spent.tokens());
  if (spent.money_usd() > 0 || budget.max_money_usd() > 0) std::cout << fmt::format(", ${:.2f}", spent.money_usd());
  std::cout << fmt::format("\n  arch {}, {}", t.task.arch().empty() ? "any" : fmt::format("{}", fmt::join(t.task.arch(), ", ")),
                           DescribeGpus(t.gpus));
  std::cout << "\n  outcomes:";
  if (t.outcomes.empty()) std::cout << " none yet";
  for (const auto& [name, count] : t.outcomes) std::cout << fmt::format(" {} {}", name, count);
  std::cout << "\n";
  if (t.best_id.empty()) {
    std::cout << "  best: none correct yet\n";
  } else {
    std::cout << fmt::format("  best: {} fitness {:.3f}\n", t.best_id, t.best_fitness);
  }
  std::cout << "  finalist checks: " << (t.finalists_text.empty() ? "not run yet" : t.finalists_text) << "\n";
  if (!t.confirmation_text.empty()) std::cout << "  " << t.confirmation_text << "\n";
}

int RunStatus(const StatusOptions& o) {
  absl::StatusOr<OpenedRun> run = OpenRun(o.run, o.runs_dir);
  if (!run.ok()) {
    std::cerr << "sparseditto status: " << run.status().message() << "\n";
    return kExitFailure;
  }
  const auto& [folder, store, record, tasks] = *run;
  const report::RunFacts facts = report::ReadRunFacts(*store, record, tasks, folder.dir);
  for (const std::string& e : facts.errors) std::cerr << "sparseditto status: " << e << "\n";
  if (o.json) {
    std::cout << report::DumpJson(report::StatusJson(facts)) << "\n";
  } else {
    std::cout << fmt::format("run {} ({}), revision {}, {} task(s)\n", facts.run_id, folder.dir, facts.revision,
                             tasks.size());
    for (const report::TaskFacts& t : facts.tasks) PrintTask(t);
  }
  return facts.errors.empty() ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterStatusCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Summarise a search run from its store (works while it runs)");
  cmd->add_option("run", o->run, "Run name (under --runs-dir) or the run's folder")->required();
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON document (schema sparseditto.status/1, report/status_json.h) instead of text");
  cmd->callback([o, exit_code] { *exit_code = RunStatus(*o); });
}

}  // namespace sparseditto
