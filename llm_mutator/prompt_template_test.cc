#include "llm_mutator/prompt_template.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::llm {
namespace {

TEST(PromptTemplateTest, Table) {
  const TemplateVars vars = {{"a", "A"}, {"empty", ""}, {"b", "{{a}}"}};
  struct Case {
    std::string text;
    bool ok;
    std::string expected_or_why;
  };
  const Case cases[] = {
      {"x {{a}} y {{ a }}", true, "x A y A"},
      {"{{b}}", true, "{{a}}"},  // values are not rendered again
      {"{{#a}}shown {{a}}{{/a}}{{#empty}}hidden{{/empty}}", true, "shown A"},
      {"{{^empty}}none{{/empty}}{{^a}}no{{/a}}", true, "none"},
      {"{{#a}}{{#empty}}x{{/empty}}y{{/a}}", true, "y"},
      {"no tags at all } {", true, "no tags at all } {"},
      {"line\n{{nope}}", false, "t.txt:2: unknown placeholder 'nope'"},
      {"{{#a}}open", false, "t.txt:1: section 'a' is never closed"},
      {"{{/a}}", false, "closes no open section"},
      {"{{#a}}x{{/empty}}", false, "closes no open section"},
      {"{{a", false, "'{{' without '}}'"},
      {"{{a-b}}", false, "malformed tag"},
      {"{{#nope}}x{{/nope}}", false, "unknown placeholder 'nope'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> out = RenderTemplate(c.text, vars, "t.txt");
    ASSERT_EQ(out.ok(), c.ok) << c.text << ": " << out.status();
    if (c.ok) {
      EXPECT_EQ(*out, c.expected_or_why) << c.text;
    } else {
      EXPECT_THAT(std::string(out.status().message()), ::testing::HasSubstr(c.expected_or_why)) << c.text;
    }
  }
}

}  // namespace
}  // namespace sparseditto::llm
