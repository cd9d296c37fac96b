#include "evaluator/compile/source_lexer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using Kind = SourceToken::Kind;

// "kind:text@line" (with "#d" appended for directive tokens) for compact expectations.
std::vector<std::string> Describe(std::string_view source) {
  std::vector<std::string> out;
  for (const SourceToken& t : LexSource(source)) {
    const char* kind = "";
    switch (t.kind) {
      case Kind::kIdentifier: kind = "id"; break;
      case Kind::kNumber: kind = "num"; break;
      case Kind::kString: kind = "str"; break;
      case Kind::kChar: kind = "chr"; break;
      case Kind::kPunct: kind = "p"; break;
      case Kind::kHeaderName: kind = "hdr"; break;
    }
    std::string entry = kind;
    entry.append(":").append(t.text).append("@").append(std::to_string(t.line));
    if (t.directive >= 0) entry.append("#").append(std::to_string(t.directive));
    out.push_back(entry);
  }
  return out;
}

struct LexCase {
  std::string name;
  std::string source;
  std::vector<std::string> tokens;
};
void PrintTo(const LexCase& c, std::ostream* os) { *os << c.name; }

class LexTest : public ::testing::TestWithParam<LexCase> {};

TEST_P(LexTest, Tokens) { EXPECT_THAT(Describe(GetParam().source), ::testing::ElementsAreArray(GetParam().tokens)); }

INSTANTIATE_TEST_SUITE_P(
    SourceLexer, LexTest,
    ::testing::Values(
        LexCase{"comments_vanish_lines_kept", "a // fork()\n/* x\n y */ b", {"id:a@1", "id:b@3"}},
        LexCase{"string_is_one_token", "f(\"fork() \\\" x\")", {"id:f@1", "p:(@1", "str:fork() \\\" x@1", "p:)@1"}},
        LexCase{"prefixed_and_raw_strings", "u8\"a\" L'b' R\"d(x)\" y)d\"",
                {"str:a@1", "chr:b@1", "str:x)\" y@1"}},
        LexCase{"digit_separators", "1'000'000 0x1p-3 'c'", {"num:1'000'000@1", "num:0x1p-3@1", "chr:c@1"}},
        LexCase{"splice_joins_identifier", "fo\\\nrk\nx", {"id:fork@1", "id:x@3"}},
        LexCase{"directives_marked", "#include <sys/mman.h>\n  # define A 1\nA",
                {"p:#@1#0", "id:include@1#0", "hdr:sys/mman.h@1#0", "p:#@2#1", "id:define@2#1", "id:A@2#1",
                 "num:1@2#1", "id:A@3"}},
        LexCase{"spliced_directive_continues", "#define A \\\n  fork\nB", {"p:#@1#0", "id:define@1#0", "id:A@1#0",
                                                                          "id:fork@2#0", "id:B@3"}},
        LexCase{"hash_not_first_is_punct", "a # b", {"id:a@1", "p:#@1", "id:b@1"}},
        LexCase{"digraphs", "<% %> <: :> %:%:", {"p:{@1", "p:}@1", "p:[@1", "p:]@1", "p:##@1"}},
        LexCase{"multi_char_punct", "a->b::c != d", {"id:a@1", "p:->@1", "id:b@1", "p:::@1", "id:c@1", "p:!=@1",
                                                      "id:d@1"}},
        LexCase{"unterminated_string_ends_at_line", "\"abc\nx", {"str:abc@1", "id:x@2"}}),
    [](const auto& info) { return info.param.name; });

TEST(SourceLexer, CallArgumentRanges) {
  const std::vector<SourceToken> tokens = LexSource("f(a, g(b, c), {d, e})");
  const auto args = CallArgumentRanges(tokens, 1);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(tokens[args[1].first].text, "g");
  EXPECT_EQ(args[2].second - args[2].first, 5u);
  EXPECT_TRUE(CallArgumentRanges(LexSource("f()"), 1).empty());
  EXPECT_EQ(MatchingClose(LexSource("f((x)"), 1, "(", ")"), std::string::npos);
}

}  // namespace
}  // namespace sparseditto
