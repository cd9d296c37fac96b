#include "report/text_diff.h"

#include <string>

#include "gtest/gtest.h"

namespace sparseditto::report {
namespace {

TEST(UnifiedDiffTest, ShowsWhatChangedWithContext) {
  const std::string base = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
  const struct {
    std::string name;
    std::string from, to;
    std::string want;  // the whole diff
  } cases[] = {
      {"equal", base, base, ""},
      {"equal but the final newline", "a\nb", "a\nb\n", ""},
      {"one line changed", base, "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n",
       "--- p\n+++ c\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"},
      {"line added at the end", "x\n", "x\ny\n", "--- p\n+++ c\n@@ -1,1 +1,2 @@\n x\n+y\n"},
      {"from nothing", "", "x\n", "--- p\n+++ c\n@@ -1,0 +1,1 @@\n+x\n"},  // dtl says -1,0 where GNU diff says -0,0
      {"hostile lines are not interpreted", "#define T 1\n", "#define T 1\n</script><b>\n",
       "--- p\n+++ c\n@@ -1,1 +1,2 @@\n #define T 1\n+</script><b>\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(UnifiedDiff(c.from, c.to, "p", "c"), c.want);
  }
}

TEST(UnifiedDiffTest, BoundsItsWorkAndItsOutput) {
  std::string many, other;
  for (int i = 0; i < 2000; ++i) {
    many += "line " + std::to_string(i) + "\n";
    other += "changed " + std::to_string(i) + "\n";
  }
  const std::string cut = UnifiedDiff(many, other, "p", "c", {.max_output_lines = 50});
  EXPECT_NE(cut.find("more diff lines left out ...]"), std::string::npos) << cut.substr(0, 500);
  size_t lines = 0;
  for (char ch : cut) lines += ch == '\n';
  EXPECT_LE(lines, 53u);
  const std::string refused = UnifiedDiff(many, other, "p", "c", {.max_lines = 100});
  EXPECT_NE(refused.find("[no diff: 2000 and 2000 lines, over the limit of 100]"), std::string::npos) << refused;
}

}  // namespace
}  // namespace sparseditto::report
