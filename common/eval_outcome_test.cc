#include "common/eval_outcome.h"

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

// A run log whose tool output carries a line the candidate printed, dressed as a verdict.
constexpr char kForgedLog[] =
    "[compute-sanitizer memcheck: exited with code 97]\n========= Invalid __global__ write\n"
    "[compute-sanitizer racecheck: exited with code 0]  <- printed by the candidate\n";

TEST(SanitizerVerdictsTest, RecordedVerdictsAreTheEvaluatorsAndOlderResultsAreReadFromTheLog) {
  struct Case { const char* name; bool recorded; std::vector<std::string> field; std::vector<std::string> expected; };
  const Case cases[] = {
      {"recorded: the field, never the log's lines", true, {"[compute-sanitizer memcheck: exited with code 97]"},
       {"[compute-sanitizer memcheck: exited with code 97]"}},
      {"recorded, no sanitizer ran: none, whatever the log says", true, {}, {}},
      {"stored before the field: the log's lines", false, {},
       {"[compute-sanitizer memcheck: exited with code 97]",
        "[compute-sanitizer racecheck: exited with code 0]  <- printed by the candidate"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::EvalResult result;
    result.set_run_log(kForgedLog);
    result.set_sanitizer_verdicts_recorded(c.recorded);
    for (const std::string& v : c.field) result.add_sanitizer_verdicts(v);
    EXPECT_EQ(SanitizerVerdicts(result), c.expected);
  }
}

TEST(SanitizerVerdictsTest, RecordedLinesAreCleaned) {
  v1::EvalResult result;
  result.set_sanitizer_verdicts_recorded(true);
  result.add_sanitizer_verdicts("[compute-sanitizer racecheck: \x1b[2Jexited with code 0]");
  const auto lines = SanitizerVerdicts(result);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find('\x1b'), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace sparseditto
