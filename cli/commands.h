// The subcommands of the sparseditto binary. Each Register* adds its subcommand to `app` and arranges
// for *exit_code to be set when it runs. Messages go to stderr, results to stdout.
#pragma once

#include "CLI/CLI.hpp"

namespace sparseditto {

// `sparseditto analyze FILE`: structural features of a matrix file as JSON on stdout, a one-line
// summary on stderr. Exit 1 when the file cannot be read (the message names the file and the fault).
void RegisterAnalyzeCommand(CLI::App& app, int* exit_code);

// `sparseditto validate FILE...`: loads and validates task files. Exit 1 naming file, line and field
// of the first error in each bad file.
void RegisterValidateCommand(CLI::App& app, int* exit_code);

// `sparseditto eval --task T.yaml --kernel K.cu [...]`: the evaluator's report for each kernel. Exit 1
// when a kernel fails a check (or is rejected, does not compile, crashes or times out).
void RegisterEvalCommand(CLI::App& app, int* exit_code);

// `sparseditto bench --suite FILE`: the seeds of each task's family against the baselines, as a table
// and bench.{txt,json,csv}. Exit 1 when the suite or the seed library cannot be read, or when no task
// could be set up (no GPU).
void RegisterBenchCommand(CLI::App& app, int* exit_code);

// `sparseditto search TASKS.yaml`: the embedded search of each task of the file, a batch
// (coordinator/search/batch_search.h), its store under runs/<run>/store and its artifacts in runs/<run>/;
// the same command on an existing run resumes it. A failed task is retried (--retries, default each
// task's budget.max_retries) and reported; the others go on. Exit 1 when the task file, the seed library
// or the store cannot be opened, or a task failed after its retries.
void RegisterSearchCommand(CLI::App& app, int* exit_code);

// `sparseditto coordinator [TASKS.yaml] --listen HOST:PORT --tokens FILE [--serve]`: the search of
// `search` with its evaluations done by evaluator workers and its model requests by mutator services
// over gRPC (coordinator/server/), of the task file and of the runs clients submit. Exit codes as
// search's (1 when any run failed).
void RegisterCoordinatorCommand(CLI::App& app, int* exit_code);

// `sparseditto client submit|status|watch|export --coordinator HOST:PORT`: a coordinator's runs over
// gRPC. Exit 0 on success (watch: the run ended done), 1 otherwise (the coordinator's reason on stderr).
void RegisterClientCommand(CLI::App& app, int* exit_code);

// `sparseditto mutator --coordinator HOST:PORT --models FILE`: a mutator service holding the models'
// keys (llm_mutator/service/). Exit 0 when drained by the coordinator, 143 / 130 after SIGTERM /
// SIGINT, 1 when it cannot start or is refused.
void RegisterMutatorCommand(CLI::App& app, int* exit_code);

// `sparseditto evaluator --coordinator HOST:PORT`: an evaluator worker on one local GPU
// (evaluator/node/). Exit 0 when drained by the coordinator, 143 / 130 after SIGTERM / SIGINT, 1 when
// it cannot start or its token is refused.
void RegisterEvaluatorCommand(CLI::App& app, int* exit_code);

// `sparseditto bench-mutators --task T.yaml --models FILE [--budget-evaluations N] [--out DIR]`: the
// task searched once per model of the mutator file (coordinator/search/mutator_bench.h), each in
// DIR/<model>/, and the comparison table printed and written as DIR/bench-mutators.{txt,json,csv}.
// Exit 1 when a file cannot be read, the evaluator cannot start, or a model's run failed.
void RegisterBenchMutatorsCommand(CLI::App& app, int* exit_code);

// `sparseditto bench-search TASKFILE|SUITE [--budget-evaluations N] [--repetitions R] [--out DIR]`: each
// task searched by five strategies at an equal budget (coordinator/search/search_bench.h), the table
// printed and written with anytime curves (CSV, SVG) under DIR. Exit 1 when a file cannot be read, the
// evaluator cannot start, or a strategy's run failed.
void RegisterBenchSearchCommand(CLI::App& app, int* exit_code);

// `sparseditto status RUN [--json]`: per task of a run, from its store (read-only, alongside a running
// search): state, attempts, evaluations against the budget, outcomes by category, spent, best; with
// --json one document (report/status_json.h). Exit 1 when the run or a task cannot be found or read.
void RegisterStatusCommand(CLI::App& app, int* exit_code);

// `sparseditto report RUN [--out FILE]`: one self-contained HTML page of the run (report/html_report.h),
// default <run folder>/report.html. Exit 1 when the run cannot be read, the file cannot be written, or a
// task cannot be read (the page is still written, naming it).
void RegisterReportCommand(CLI::App& app, int* exit_code);

// `sparseditto export RUN [--out DIR] [--torch]`: the best kernel of each task as DIR/<task>.cu and
// <task>.h (default runs/<run>/export) with the ABI and weight check headers and build.sh beside them
// (coordinator/search/export_wrapper.h); with --torch also the run's PyTorch package of the exported tasks,
// DIR/torch/sparseditto_<run>/ (torch_package/torch_package.h). Exit 1 when the run cannot be read, a task
// has no correct candidate (the others are still written) or the package cannot be written.
void RegisterExportCommand(CLI::App& app, int* exit_code);

// `sparseditto doctor [--json]`: every OS sandbox layer on or off on this machine, with the reason
// (evaluator/sandbox/sandbox_probe.h). Exit 0 when every needed layer is on, 1 otherwise.
void RegisterDoctorCommand(CLI::App& app, int* exit_code);

}  // namespace sparseditto
