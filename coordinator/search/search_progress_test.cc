#include "coordinator/search/search_progress.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

SearchProgress Progress(int64_t evaluations, int64_t this_call, double seconds, std::string best = "t.000007") {
  SearchProgress p;
  p.task_name = "t";
  p.evaluations = evaluations;
  p.max_evaluations = 200;
  p.evaluations_this_call = this_call;
  p.seconds_this_call = seconds;
  p.best_candidate_id = best;
  p.best_fitness = best.empty() ? 0 : 2.3141;
  return p;
}

TEST(SearchProgress, FormatsALine) {
  const struct {
    SearchProgress progress;
    std::string line;
  } cases[] = {
      {Progress(37, 37, 74), "t: 37/200 evaluations, best 2.314 (t.000007), 163 left, ETA 5m26s"},
      {Progress(150, 10, 5), "t: 150/200 evaluations, best 2.314 (t.000007), 50 left, ETA 25s"},
      {Progress(3, 3, 1, ""), "t: 3/200 evaluations, best none correct yet, 197 left, ETA 1m06s"},
      {Progress(200, 0, 0), "t: 200/200 evaluations, best 2.314 (t.000007), 0 left, ETA ?"},
      {[] { SearchProgress p = Progress(150, 10, 5); p.exhausted_spaces = 1; return p; }(),
       "t: 150/200 evaluations, best 2.314 (t.000007), 50 left, ETA 25s, 1 seed space exhausted"},
      {[] { SearchProgress p = Progress(150, 10, 5); p.exhausted_spaces = 3; return p; }(),
       "t: 150/200 evaluations, best 2.314 (t.000007), 50 left, ETA 25s, 3 seed spaces exhausted"},
      // the wall budget ends the run before the evaluations do: the nearer limit is the ETA
      {[] { SearchProgress p = Progress(37, 37, 74); p.wall_seconds_left = 40; return p; }(),
       "t: 37/200 evaluations, best 2.314 (t.000007), 163 left, ETA 40s (wall budget)"},
      {[] { SearchProgress p = Progress(150, 10, 5); p.wall_seconds_left = 400; return p; }(),
       "t: 150/200 evaluations, best 2.314 (t.000007), 50 left, ETA 25s"},
  };
  for (const auto& c : cases) EXPECT_EQ(FormatProgressLine(c.progress), c.line);
}

TEST(SearchProgress, FormatsDurations) {
  const struct {
    double seconds;
    std::string text;
  } cases[] = {{0, "0s"},
               {59.4, "59s"},
               {60, "1m00s"},
               {3599, "59m59s"},
               {7500, "2h05m"},
               {-3, "0s"},
               // A huge budget (max_wall_seconds: 1e300) once printed -9223372036854775808s.
               {3.6e9, "1000000h00m"},
               {3.6e9 + 1, "unlimited"},
               {1e19, "unlimited"},
               {1e300, "unlimited"},
               {std::numeric_limits<double>::infinity(), "unlimited"},
               {-std::numeric_limits<double>::infinity(), "0s"},
               {std::numeric_limits<double>::quiet_NaN(), "?"}};
  for (const auto& c : cases) EXPECT_EQ(FormatDuration(c.seconds), c.text) << c.seconds;
}

// What a printer wrote, through a memory stream.
struct Captured {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* file = open_memstream(&data, &size);
  std::string Text() {
    std::fflush(file);
    return std::string(data, size);
  }
  ~Captured() {
    std::fclose(file);
    std::free(data);
  }
};

TEST(SearchProgress, EvaluationsTheWallHolds) {
  struct Case {
    const char* what;
    double limit, spent, evaluator_seconds;
    int64_t evaluations, held;
  };
  const Case cases[] = {
      {"no wall budget", 0, 50, 10, 5, INT64_MAX},
      {"before the first evaluation", 120, 3, 0, 0, INT64_MAX},
      {"no evaluator time measured", 120, 3, 0, 4, INT64_MAX},
      {"2 s an evaluation, 60 s left", 120, 60, 20, 10, 30},
      {"rounded down", 120, 60, 21, 10, 28},
      {"spent exactly", 120, 120, 20, 10, 0},
      {"overspent", 120, 133, 20, 10, 0},
      {"NaN spent", 120, std::nan(""), 20, 10, 0},
      {"a quotient beyond int64", 1e300, 0, 1e-6, 1, INT64_MAX},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EvaluationsTheWallHolds(c.limit, c.spent, c.evaluator_seconds, c.evaluations), c.held) << c.what;
  }
}

TEST(SearchProgress, RewritesOneLineOnATerminal) {
  Captured out;
  ProgressPrinter printer(out.file, /*terminal=*/true);
  printer.Update(Progress(1, 1, 1));
  printer.Update(Progress(2, 2, 2));
  printer.EndTask();
  const std::string text = out.Text();
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line, ended once";
  EXPECT_NE(text.find("\r\033[Kt: 2/200"), std::string::npos) << text;
}

TEST(SearchProgress, WritesPlainLinesAtAnIntervalElsewhere) {
  Captured out;
  ProgressPrinter printer(out.file, /*terminal=*/false, /*log_interval_seconds=*/3600);
  printer.Update(Progress(1, 1, 1));  // the first is logged
  printer.Update(Progress(2, 2, 2));  // within the interval: held
  printer.Update(Progress(3, 3, 3));
  printer.EndTask();                  // the last one held is logged at the end
  EXPECT_EQ(out.Text(), FormatProgressLine(Progress(1, 1, 1)) + "\n" + FormatProgressLine(Progress(3, 3, 3)) + "\n");
  EXPECT_EQ(out.Text().find('\r'), std::string::npos);
}

}  // namespace
}  // namespace sparseditto
