#include "report/html_text.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sparseditto::report {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(EscapeHtmlTest, LeavesNoMarkupAndNoInvalidUtf8) {
  const struct {
    std::string in;
    std::string want;
  } cases[] = {
      {"", ""},
      {"plain text, tabs\tand\nlines\r\n", "plain text, tabs\tand\nlines\r\n"},
      {"</script><script>alert(1)</script>", "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"},
      {"<img src=x onerror=\"alert('x')\">", "&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;"},
      {"a && b <!-- c -->", "a &amp;&amp; b &lt;!-- c --&gt;"},
      {"&lt; stays text", "&amp;lt; stays text"},
      {std::string("nul\0byte", 8), "nul" + kFffd + "byte"},
      {"bell\x07 esc\x1b[31m del\x7f", "bell" + kFffd + " esc" + kFffd + "[31m del" + kFffd},
      {"\xC3\xA9t\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x99\x82", "\xC3\xA9t\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x99\x82"},  // valid UTF-8 kept
      {"bad \xFF byte", "bad " + kFffd + " byte"},
      {"cut \xE2\x86", "cut " + kFffd + kFffd},                         // a sequence cut short
      {"overlong \xC0\xBC", "overlong " + kFffd + kFffd},               // '<' as an overlong form stays out
      {"surrogate \xED\xA0\x80", "surrogate " + kFffd + kFffd + kFffd},
      {"too high \xF4\x90\x80\x80", "too high " + kFffd + kFffd + kFffd + kFffd},
      {"C1 \xC2\x85", "C1 " + kFffd},
      {"nonchar \xEF\xBF\xBF", "nonchar " + kFffd},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    const std::string out = EscapeHtml(c.in);
    EXPECT_EQ(out, c.want);
    EXPECT_EQ(out.find('<'), std::string::npos);
    EXPECT_EQ(out.find('"'), std::string::npos);
  }
}

TEST(TrimMiddleTest, KeepsHeadAndTailAndSaysHowMuchWasLeftOut) {
  std::string log;
  for (int i = 0; i < 10000; ++i) log += "line " + std::to_string(i) + "\n";
  const struct {
    std::string in;
    size_t max;
    bool trimmed;
  } cases[] = {{"", 10, false}, {"short", 5, false}, {"longer", 5, true}, {log, 4096, true}, {log, log.size(), false},
               {std::string(1 << 20, 'x'), 1000, true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in.substr(0, 20));
    const std::string out = TrimMiddle(c.in, c.max);
    if (!c.trimmed) {
      EXPECT_EQ(out, c.in);
      continue;
    }
    EXPECT_LT(out.size(), c.max + 80);
    EXPECT_NE(out.find(" bytes left out ...]"), std::string::npos);
    EXPECT_EQ(out.substr(0, 2), c.in.substr(0, 2)) << "the head is kept";
    EXPECT_EQ(out.substr(out.size() - 2), c.in.substr(c.in.size() - 2)) << "the tail is kept";
  }
  const std::string out = TrimMiddle(log, 4096);
  EXPECT_NE(out.find("line 0\n"), std::string::npos);
  EXPECT_NE(out.find("line 9999\n"), std::string::npos);
  EXPECT_NE(out.find("\n[... "), std::string::npos) << "cut at a line break";
}

TEST(JsonForScriptTest, NothingEndsTheScriptElementAndTheJsonReadsBackTheSame) {
  for (const std::string hostile : {"</script><script>alert(1)</script>", "<!--<script>", "a & b > c", "</SCRIPT >",
                                    "plain"}) {
    SCOPED_TRACE(hostile);
    const nlohmann::json doc = {{"log", hostile}, {"list", {hostile, 1.5}}};
    const std::string safe = JsonForScript(doc.dump());
    EXPECT_EQ(safe.find('<'), std::string::npos);
    EXPECT_EQ(safe.find('>'), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(safe), doc);
  }
}

}  // namespace
}  // namespace sparseditto::report
