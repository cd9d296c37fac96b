// `sparseditto report RUN`: one self-contained HTML page of a run (no network fetch: inline CSS, inline
// SVG, inline data, one inline script allowed by its hash in the page's Content-Security-Policy, which
// forbids every other source). Per task: the summary (state, evaluations against the budget, outcomes
// by category, best, finalist checks, confirmation), fitness over evaluations and over search wall time
// (best so far as a line, each evaluation a point), the lineage of the best candidate or plan back to
// the seeds, the best's time at every n against every baseline (table and bars), each candidate's diff
// against its first parent, and the failures by category with their trimmed logs; then the provenance.
//
// Everything from the store is escaped (html_text.h); logs, details and diffs are trimmed. Numbers a
// program may check carry data-* attributes (the contract of tests/report_browser_test.cc):
//   <main data-run-id data-revision data-tasks>
//   <section class="task" data-task data-state data-evaluations data-max-evaluations data-candidates
//            data-best-id data-best-fitness (both "" when none)>
//   <td data-outcome="compile">3</td> per outcome category
//   <tr data-n="16" data-candidate-ms="..." data-baseline-NAME-ms="..."> per n of the best (NAME: the
//            baseline's name in lower case, characters other than letters, digits and '_' as '_')
// The page also carries the status document (status_json.h) as <script type="application/json"
// id="status-json">; its script checks the attributes above against it and sets <body
// data-self-check="ok"> (or "mismatch: ..."), so a browser that ran it shows the page is consistent.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "report/run_facts.h"

namespace sparseditto::report {

struct ReportOptions {
  size_t max_log_bytes = 6 * 1024;         // each log or detail shown: head and tail kept
  size_t max_failures_per_category = 25;   // per task; the rest are counted
  size_t max_diffs = 400;                  // candidates whose diff is shown per task; the rest are counted
  size_t max_diff_lines = 300;             // lines of one diff
  size_t max_lineage = 200;                // entries of the best's lineage
  std::string generator;                   // "sparseditto 0.1.0 (revision ...)", in the footer
  int64_t generated_unix_ms = 0;           // when the page was made (footer)
};

std::string RenderReport(const RunFacts& run, const ReportOptions& options);

}  // namespace sparseditto::report
