// `sparseditto report RUN [--out FILE]`: the run's page (report/html_report.h) from its store, opened
// read-only (so it works while the search runs), written atomically.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/provenance.h"
#include "cli/run_folder.h"
#include "coordinator/search/run_artifacts.h"
#include "coordinator/search/wall_clock.h"
#include "fmt/format.h"
#include "report/html_report.h"
#include "report/run_facts.h"

namespace sparseditto {
namespace {

struct ReportCommandOptions {
  std::string run;
  std::string runs_dir = "runs";
  std::string out;  // default <run folder>/report.html
};

int RunReport(const ReportCommandOptions& o) {
  absl::StatusOr<OpenedRun> run = OpenRun(o.run, o.runs_dir);
  if (!run.ok()) {
    std::cerr << "sparseditto report: " << run.status().message() << "\n";
    return kExitFailure;
  }
  const auto& [folder, store, record, tasks] = *run;
  const report::RunFacts facts = report::ReadRunFacts(*store, record, tasks, folder.dir);
  for (const std::string& e : facts.errors) std::cerr << "sparseditto report: " << e << " (left out of the page)\n";
  report::ReportOptions options;
  options.generator = fmt::format("sparseditto {} (revision {})", SPARSEDITTO_VERSION, ProjectRevision());
  options.generated_unix_ms = NowUnixMs();
  const std::string out = o.out.empty() ? folder.dir + "/report.html" : o.out;
  if (absl::Status s = WriteFileAtomically(out, report::RenderReport(facts, options)); !s.ok()) {
    std::cerr << "sparseditto report: " << s.message() << "\n";  // names the file
    return kExitFailure;
  }
  std::cout << out << "\n";
  return facts.errors.empty() ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterReportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReportCommandOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Write one self-contained HTML page of a search run (plots, lineage, "
                                               "per-n times, diffs, failures, provenance)");
  cmd->add_option("run", o->run, "Run name (under --runs-dir) or the run's folder")->required();
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_option("--out", o->out, "The HTML file to write, its missing folders made (default: <run folder>/report.html)");
  cmd->callback([o, exit_code] { *exit_code = RunReport(*o); });
}

}  // namespace sparseditto
