// The live progress of a search for the person watching: one line per task on stderr. On a terminal
// the line is rewritten in place (\r) after every evaluation; elsewhere (a log file, CI) a plain line is
// written at most every `log_interval_seconds` and when the task ends, so logs stay readable.
// Thread-safety: none; the search thread calls it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "coordinator/search/search_loop.h"

namespace sparseditto {

// "spmm_90: 37/200 evaluations, best 2.314 (spmm_90.000031), 163 left, ETA 4m10s".
// ETA: the seconds per evaluation of this call times the evaluations left, or the wall budget left when
// that is nearer ("ETA 40s (wall budget)"); "ETA ?" before the first.
// Once the built-in mutator exhausted tunable spaces: ", 2 seed spaces exhausted" at the end.
std::string FormatProgressLine(const SearchProgress& progress);

// "45s", "4m10s", "2h05m"; negative is "0s". Beyond kLongestShownSeconds (about 114 years, where a
// number of seconds could overflow an integer) "unlimited"; NaN "?".
inline constexpr double kLongestShownSeconds = 3.6e9;
std::string FormatDuration(double seconds);

// How many more evaluations the wall budget left holds at this call's mean evaluation time (the search
// window is topped up no further: every child in it is evaluated even after the budget is spent).
// INT64_MAX without a budget (wall_limit <= 0), before the first evaluation, with no evaluator time
// measured, or when the quotient does not fit; 0 once the budget is spent. Pure.
int64_t EvaluationsTheWallHolds(double wall_limit, double wall_spent, double evaluator_seconds, int64_t evaluations);

class ProgressPrinter {
 public:
  // `out` is not owned (stderr); `terminal`: isatty of it.
  ProgressPrinter(std::FILE* out, bool terminal, double log_interval_seconds = 30);

  void Update(const SearchProgress& progress);
  // Ends the task's line: a newline on a terminal, the last line when the log has not shown it.
  void EndTask();

 private:
  std::FILE* out_;
  const bool terminal_;
  const double log_interval_seconds_;
  std::string pending_;  // the latest line not yet logged (not a terminal)
  std::chrono::steady_clock::time_point last_logged_{};
  bool line_open_ = false;  // a \r line is on the terminal
};

}  // namespace sparseditto
