// The screen over a preprocessed translation unit, on hand-written `nvcc -E` output (no nvcc needed;
// host_preprocess_test runs the real preprocessor).
#include "evaluator/compile/preprocessed_source.h"

#include <string>
#include <vector>

#include "evaluator/compile/static_screen.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

// What gcc -E writes around a candidate: built-ins, a system header that calls and declares what a
// candidate may not, and the candidate's lines from line 5 on.
std::string Unit(const std::string& candidate_lines) {
  return "# 0 \"candidate.cu\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n"
         "# 1 \"/usr/include/unistd.h\" 1 3 4\n"
         "extern \"C\" long syscall(long, ...);\nstatic int H() { asm(\"syscall\"); return fork(); }\n"
         "# 5 \"candidate.cu\" 2\n" +
         candidate_lines;
}

TEST(LexPreprocessedMainFile, KeepsOnlyTheCandidatesLinesWithTheirNumbers) {
  const std::vector<SourceToken> tokens = LexPreprocessedMainFile(
      Unit("int a;\n\nint b;\n# 1 \"/abi/sparseditto_kernel.h\" 1\nint header;\n# 8 \"candidate.cu\" 2\nint c;\n"),
      "candidate.cu");
  std::vector<std::pair<std::string, int>> seen;
  for (const SourceToken& t : tokens) seen.emplace_back(t.text, t.line);
  EXPECT_THAT(seen, ::testing::ElementsAre(std::pair<std::string, int>{"int", 5}, std::pair<std::string, int>{"a", 5},
                                           std::pair<std::string, int>{";", 5}, std::pair<std::string, int>{"int", 7},
                                           std::pair<std::string, int>{"b", 7}, std::pair<std::string, int>{";", 7},
                                           std::pair<std::string, int>{"int", 8}, std::pair<std::string, int>{"c", 8},
                                           std::pair<std::string, int>{";", 8}));
}

struct UnitCase {
  std::string name;
  std::string candidate_lines;  // from line 5
  int line;                     // of the first finding; 0: none
  std::string words;
};

TEST(FindPreprocessedViolations, Table) {
  const std::vector<UnitCase> cases = {
      {"the headers' own calls and asm are not the candidate's", "int x = 1;\n", 0, ""},
      {"a call expanded from a macro", "int F() { return\n system(\"id\"); }\n", 6, "call to system()"},
      {"device and global functions keep their asm",
       "__attribute__((global)) void K() { asm volatile(\"bar.sync 0;\"); }\n"
       "static __attribute__((device)) __inline__ __attribute__((always_inline)) int D() { int x; asm(\"mov.u32 %0, 1;\" : \"=r\"(x)); return x; }\n",
       0, ""},
      {"asm left in a host device function is host asm",
       "__attribute__((host)) __attribute__((device)) int Both() {\n  asm(\"syscall\");\n  return 0;\n}\n", 6,
       "inline asm in a __host__ __device__ function"},
      {"asm in a host function", "static int Host() { asm(\"syscall\"); return 0; }\n", 5, "inline asm outside"},
      {"a stringized path joined with a literal", "const char* p = \"/proc/self/envir\" \"on\";\n", 5, "reads of /proc"},
      {"a namespace alias of std", "namespace s = std;\nint F() { return s::system(\"id\"); }\n", 6, "call to system()"},
      {"an expansion of a system macro on the candidate's line", "int F() { return (*__errno_location ()); }\n", 0, ""},
  };
  for (const UnitCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<ScreenFinding> findings = FindPreprocessedViolations(Unit(c.candidate_lines));
    if (c.line == 0) {
      EXPECT_TRUE(findings.empty()) << findings[0].line << ": " << findings[0].message;
      continue;
    }
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(findings[0].line, c.line);
    EXPECT_THAT(findings[0].message, HasSubstr(c.words));
    const absl::Status status = ScreenPreprocessedSource(Unit(c.candidate_lines));
    EXPECT_TRUE(absl::IsPermissionDenied(status));
    EXPECT_THAT(std::string(status.message()), HasSubstr("(after preprocessing)"));
  }
}

TEST(FindPreprocessedViolations, SurvivesJunkMarkers) {
  for (const std::string text : {"# \n", "# 99999999999999 \"candidate.cu\"\nint x;\n", "#line 3 \"candidate.cu\nint y;",
                                 "# 2 \"a\\\"b\" 1\nfork();\n", "", "\n\n\n"}) {
    FindPreprocessedViolations(text);
  }
}

}  // namespace
}  // namespace sparseditto
