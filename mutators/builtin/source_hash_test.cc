#include "mutators/builtin/source_hash.h"

#include <string>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

TEST(NormaliseSourceTest, Table) {
  struct Case { const char* name; std::string in, want; };
  const Case cases[] = {
      {"empty", "", ""},
      {"only_space", " \n\t \n", ""},
      {"space_runs", "int   a\t=  1;", "int a = 1;"},
      {"newline_runs", "#define A 1   \n\n\n  int x;\n", "#define A 1\nint x;"},
      {"line_comment", "int a; // note\nint b;", "int a;\nint b;"},
      {"comment_only_lines", "// header\n// more\nint a;", "int a;"},
      {"block_comment_is_space", "int/* x */a;", "int a;"},
      {"block_comment_multiline", "a /* one\ntwo */ b", "a b"},
      {"unterminated_block", "a /* never ends", "a"},
      {"string_keeps_markers", "s = \"// not  a comment\";", "s = \"// not  a comment\";"},
      {"string_escapes", "s = \"a\\\"//b\"; // c", "s = \"a\\\"//b\";"},
      {"char_literal", "c = '/' ; d = '\\''; // e", "c = '/' ; d = '\\'';"},
      {"tunable_value_kept",
       "#define T 64  // sparseditto:tunable values=[32, 64]\n", "#define T 64"},
  };
  for (const Case& c : cases) EXPECT_EQ(NormaliseSource(c.in), c.want) << c.name;
}

TEST(SourceHashTest, SameKernelSameHash) {
  const std::string a = "#define T 64 // sparseditto:tunable values=[32, 64]\n__global__ void k() { int x = T; }\n";
  const std::string b = "// a comment\n#define T 64   // other comment\n\n  __global__  void k()  {  int x = T; } /* c */\n";
  EXPECT_EQ(SourceHash(a), SourceHash(b));
  EXPECT_EQ(SourceHash(a).size(), 64u);
}

TEST(SourceHashTest, DifferentKernelsDiffer) {
  EXPECT_NE(SourceHash("#define T 64\nint x;"), SourceHash("#define T 32\nint x;"));
  EXPECT_NE(SourceHash("#define T 64\nint x;"), SourceHash("#define T 64 int x;")) << "line breaks end directives";
  EXPECT_NE(SourceHash("s = \"a  b\";"), SourceHash("s = \"a b\";")) << "literals are verbatim";
}

TEST(SourceHashTest, StableAcrossRunsAndMachines) {
  // SHA-256 of "int a;": a fixed vector, so a change to the normalisation or the hash shows up here.
  EXPECT_EQ(SourceHash("  int   a; // x\n"), "68ee7ca0e099b2c45f613f363e4911edbf3f696a3569f0ca666d433db8503c90");
}

}  // namespace
}  // namespace sparseditto
