#include "kernel_abi/tunables.h"

#include <string>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

constexpr char kSource[] =
    "#include \"sparseditto_kernel.h\"\n"
    "#define TILE_N 64  // sparseditto:tunable values=[32, 64, 128]\n"
    "#define PLAIN 3\n"
    "  #  define VEC 4 // sparseditto:tunable values=[1,2,4]\n"
    "__global__ void k() { int x = TILE_N * VEC; }\n";

TEST(TunablesTest, ParsesDeclarationsInOrder) {
  auto tunables = ParseTunables(kSource);
  ASSERT_TRUE(tunables.ok()) << tunables.status();
  ASSERT_EQ(tunables->size(), 2u);
  EXPECT_EQ((*tunables)[0].name(), "TILE_N");
  EXPECT_EQ((*tunables)[0].value(), "64");
  ASSERT_EQ((*tunables)[0].allowed_values_size(), 3);
  EXPECT_EQ((*tunables)[0].allowed_values(2), "128");
  EXPECT_EQ((*tunables)[1].name(), "VEC");
  EXPECT_EQ((*tunables)[1].value(), "4");
}

TEST(TunablesTest, ApplyChangesOnlyTheValueTokens) {
  auto out = ApplyTunables(kSource, {{"TILE_N", "128"}, {"VEC", "1"}});
  ASSERT_TRUE(out.ok()) << out.status();
  std::string expected = kSource;
  expected.replace(expected.find("TILE_N 64") + 7, 2, "128");
  expected.replace(expected.find("VEC 4") + 4, 1, "1");
  EXPECT_EQ(*out, expected);
  auto reparsed = ParseTunables(*out);
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ((*reparsed)[0].value(), "128");
  EXPECT_EQ((*reparsed)[1].value(), "1");
}

TEST(TunablesTest, ApplyRefusesUnknownNamesAndValues) {
  struct Case { std::string name, value, want; };
  for (const Case& c : {Case{"NOPE", "1", "no tunable named NOPE"},
                        Case{"TILE_N", "48", "value 48 is not among [32, 64, 128]"},
                        Case{"PLAIN", "4", "no tunable named PLAIN"}}) {
    auto out = ApplyTunables(kSource, {{c.name, c.value}});
    ASSERT_FALSE(out.ok()) << c.name;
    EXPECT_NE(out.status().message().find(c.want), std::string::npos) << out.status();
  }
}

TEST(TunablesTest, MalformedDeclarationsNameTheLine) {
  struct Case { std::string source, want; };
  for (const Case& c : {
           Case{"int x;\n#define A 5 // sparseditto:tunable values=[1, 2]\n", "line 2: tunable A has value 5"},
           Case{"// sparseditto:tunable values=[1]\n", "line 1: malformed"},
           Case{"#define A 1 // sparseditto:tunable values=[]\n", "line 1: tunable value list"},
           Case{"#define A 1 // sparseditto:tunable values=[1,,2]\n", "line 1: tunable value list"},
           Case{"#define A 1 // sparseditto:tunable values=[1, 2\n", "line 1: malformed"},
           Case{"#define A 1 // sparseditto:tunable values=[1]\n#define A 1 // sparseditto:tunable values=[1]\n",
                "line 2: tunable A declared twice"},
       }) {
    auto parsed = ParseTunables(c.source);
    ASSERT_FALSE(parsed.ok()) << c.source;
    EXPECT_NE(parsed.status().message().find(c.want), std::string::npos) << parsed.status();
  }
}

TEST(TunablesTest, SourceWithoutTunablesIsEmptyAndApplyIsIdentity) {
  auto parsed = ParseTunables("__global__ void k() {}\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->empty());
  auto out = ApplyTunables("abc", {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "abc");
}

}  // namespace
}  // namespace sparseditto
