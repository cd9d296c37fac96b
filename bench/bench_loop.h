// The loop of `sparseditto bench`: every seed of the library that applies to each task of a suite,
// evaluated through the search's evaluator seam (coordinator/search/candidate_evaluator.h), against the
// baselines its SetUp timed; the table (bench_table.h) printed as it grows and written to the output
// folder after every task; a bench cut short resumed; its events written as `search` writes them.
// cli/bench_command.cc gives it the GPU evaluator (GpuCandidateEvaluator); the tests give it the
// deterministic fake of the search's tests.
//
// The output folder (BenchLoopOptions::out_dir):
//   bench.txt, bench.json, bench.csv  the table (BenchJson, BenchCsv, FormatBenchTable + summary), each
//                                     rewritten whole (atomically) after every task, with the rows of
//                                     every task finished so far in the suite's order
//   events.jsonl                      one JSON object per line (coordinator/search/search_events.h's
//                                     writer and conventions: schema, time, unix_ms, type, task),
//                                     appended; a resumed bench's follow the earlier ones. Types:
//       start       tasks (to bench now), rows_kept, resumed, seeds (the library's size)
//       evaluation  EvaluationEvent's fields: candidate ("<seed>@<task>"), seed, outcome (CORRECT,
//                   SLOWER or the failure category), stage, fitness, times [{n, ms, min_ms, max_ms}],
//                   seconds, evaluations (this bench's, so far), best_fitness (the task's)
//       failure     FailureEvent's fields for an evaluation that failed; for a task whose set-up
//                   failed: candidate "", category TASK_ATTEMPT, stage SETUP, detail
//       skipped     seed, detail: a seed not evaluated on a task because it crashed or hung
//                   max_faults times already
//       rows        the task's table rows [{n, best_kernel, kernel_ms, speedup_over_best_baseline}]
//       stop        reason ("done" or "interrupted"), detail, evaluations (this bench's), tasks_benched,
//                   tasks_failed, rows (the table's, kept ones included)
//   bench-partial/<task>.json         the evaluations of the task in hand, kept until its rows are
//                                     written (bench_partial.h); --resume evaluates none of them again
//
// Which seeds apply: SeedAppliesTo (kernels/seed_library.h). Each (task, seed) is one candidate, id
// "<seed>@<task>", the seed's source as it is; the table names it by the seed. The candidates of the
// task in hand and of the next compile_ahead_tasks - 1 tasks are handed to the evaluator's Prefetch
// (the GPU evaluator compiles them on every core meanwhile). A seed whose evaluations crashed or timed
// out max_faults times (counted over the whole bench) is skipped for the tasks after.
//
// Resume (resume = true): the rows of <out_dir>/bench.json are kept (BenchRowsFromJson), tasks they
// finish (BenchTaskDone) are not benched again, and the evaluations bench-partial/ keeps for the task
// that was in hand are used instead of evaluated again (those of a seed whose source changed since are
// evaluated again). Without resume, bench-partial/ is cleared first and the table starts empty.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_table.h"
#include "coordinator/search/candidate_evaluator.h"
#include "kernels/seed_library.h"
#include "task.pb.h"

namespace sparseditto {

struct BenchLoopOptions {
  std::string out_dir;         // required; created when missing
  bool resume = false;         // keep out_dir's rows and kept evaluations (above)
  bool finalist = false;       // every seed through the finalist checks too (EvaluateFinalist)
  int max_faults = 2;          // crashes or timeouts after which a seed is skipped; <= 0: never skipped
  int compile_ahead_tasks = 2; // tasks whose candidates are prefetched at once (the one in hand included); >= 1
  // > 0: each seed's timing is first a short screen (CandidateEvaluator::EvaluateScreened, every check as in
  // full), and only a seed within this fraction of the task's best full timing at some n, or of its best
  // fitness, is timed in full (NearScreenBar, the search's rule); the others are the rows' screened_ms, never
  // their best kernel. Most seeds of a task are several times slower than its best, so this saves most of a
  // bench's timing. 0 (default): every seed timed in full. Not with `finalist` (which times in full).
  double screen_margin = 0;
  // Evaluations again after a REJECTED verdict at the timing stage (the judge's bracket disagreed with the
  // candidate host's times), each one wholly judged again: on an H100 (2026-12-07) seven honest seeds of 1173
  // timings met a ~0.65 ms device hiccup in two batches of one timing, past the judge's own retime, and lost
  // their rows. A host that under-reports is rejected every time, so this only costs it another evaluation.
  // Every evaluation is an event; a retry is logged. 0: none.
  int timing_rejection_retries = 1;
  // Where the table goes as it grows (the kept rows first, when resuming), then the summary; null: nowhere.
  std::ostream* table = nullptr;
  // Where progress lines go (set-up failures, failed seeds, skips, what a resume keeps); null: nowhere.
  std::ostream* log = nullptr;
  // Asked before each evaluation; true stops the bench there (the task in hand unfinished, its
  // evaluations so far kept for a resume) with a stop event "interrupted". Empty: never.
  std::function<bool()> stop_requested;
};

struct BenchLoopOutcome {
  std::vector<BenchRow> rows;     // the whole table (kept rows included) in the suite's order
  std::string summary;            // BenchSummary(rows)
  int64_t rows_kept = 0;          // from the earlier bench (resume)
  int64_t tasks_due = 0;          // tasks this bench had to do (those the kept rows finish left out)
  int64_t tasks_benched = 0;      // tasks whose rows this bench wrote
  int64_t tasks_failed = 0;       // tasks whose set-up failed (no rows)
  int64_t evaluations = 0;        // evaluator calls of this bench
  int64_t evaluations_kept = 0;   // evaluations of an interrupted bench used instead
  bool interrupted = false;       // stop_requested said so
  std::string file_errors;        // writes of the table or of kept evaluations that failed ("" when none)
  std::string events_error;       // the events file's first write error ("" when none)
};

// The tasks of `suite` whose name matches the regular expression `name_filter` (ECMAScript, anywhere in
// the name; empty: every task), in order. InvalidArgument naming the expression when it does not parse.
absl::StatusOr<std::vector<v1::Task>> SelectBenchTasks(const std::vector<v1::Task>& suite,
                                                       const std::string& name_filter);

// The seeds of `seeds` that apply to `task` (SeedAppliesTo), in the library's order; pointers into `seeds`.
std::vector<const SeedKernel*> ApplicableSeeds(const v1::Task& task, const std::vector<SeedKernel>& seeds);

// The lines under the table: per dtype, the geomean speedup of the best seed over the best baseline,
// over cuSPARSE CSR and over cuBLAS dense, and the row count; "" when no row.
std::string BenchSummary(const std::vector<BenchRow>& rows);

// Benches `tasks` (a selection of `suite`, whose order the table keeps) over `seeds` with `evaluator`,
// which it sets up for each task in turn (one task's candidates evaluated after its SetUp, with its
// SetupReply's baselines in the rows). A task whose set-up fails gets no rows (a failure event and a
// log line say why) and the bench goes on; a failed evaluation is a row's typed failure ("seed:CRASH"),
// not an error. The returned outcome says how much was done; a bench that could set up no task returns
// it too (tasks_benched 0), for the caller to judge.
// Errors (nothing evaluated; bench.* are left as they were): InvalidArgument for an empty out_dir or
// compile_ahead_tasks < 1, or (resume) a bench.json that is not a bench table, naming the file, the row
// and the field; Unavailable naming the path when out_dir cannot be made, bench-partial/ cannot be
// cleared (a new bench) or the events file cannot be opened. Writes that fail later do not stop the
// bench (file_errors, events_error say which).
// Thread-safety: none; `evaluator` is used from the caller's thread only, and no other bench may write
// the same out_dir at the same time. `evaluator`, `suite`, `tasks` and `seeds` are not owned and need
// only outlive the call.
absl::StatusOr<BenchLoopOutcome> RunBenchLoop(const std::vector<v1::Task>& suite, const std::vector<v1::Task>& tasks,
                                              const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                                              const BenchLoopOptions& options);

}  // namespace sparseditto
