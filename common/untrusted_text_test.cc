#include "common/untrusted_text.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CleanCase {
  std::string name;
  std::string input;
  std::string expected;
};

UntrustedTextOptions NoEnvironment() {
  UntrustedTextOptions options;
  options.secrets_from_environment = false;
  options.secret_values = {"hunter2-correct-horse"};
  return options;
}

TEST(CleanUntrustedText, Table) {
  const std::vector<CleanCase> cases = {
      {"plain text stays", "candidate.cu(3): error: expected a ';'\n\tat line 3\n",
       "candidate.cu(3): error: expected a ';'\n\tat line 3\n"},
      {"ANSI colour and cursor moves are escaped", "\x1b[31mred\x1b[0m \x1b[2J\x1b]0;title\x07",
       "\\x1b[31mred\\x1b[0m \\x1b[2J\\x1b]0;title\\x07"},
      {"carriage return cannot rewrite a line", "CORRECT\rWRONG  ", "CORRECT\\rWRONG  "},
      {"NUL, backspace and DEL", std::string("a\0b\bc\x7f", 6), "a\\x00b\\x08c\\x7f"},
      {"C1 CSI and bidi overrides", "x\xc2\x9b" "31m y\xe2\x80\xae" "cba", "x\\u009b31m y\\u202ecba"},
      {"invalid UTF-8 becomes U+FFFD", "ok \xff\xfe \xc3\x28 \xed\xa0\x80 caf\xc3\xa9",
       "ok \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD( \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD caf\xc3\xa9"},
      {"OpenAI key", "key is sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123 ok", "key is [redacted] ok"},
      {"Anthropic key", "x=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-_01", "x=[redacted]"},
      {"AWS access key id", "AKIAIOSFODNN7EXAMPLE in log", "[redacted] in log"},
      {"GitHub tokens", "ghp_0123456789abcdefghijABCDEFGHIJ0123 github_pat_11ABCDEFG0123456789_abcdefghij",
       "[redacted] [redacted]"},
      {"Slack tokens", "xoxb-1234567890-abcdefghij xoxp-99-88-77-abcdef", "[redacted] [redacted]"},
      {"Bearer token keeps the scheme", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG",
       "Authorization: Bearer [redacted]"},
      {"PEM private key block",
       "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter",
       "before\n[redacted]\nafter"},
      {"unterminated PEM block to the end", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "[redacted]"},
      {"a public certificate is not a secret", "-----BEGIN CERTIFICATE-----", "-----BEGIN CERTIFICATE-----"},
      {"high-entropy value after a secret word", "OPENAI_API_KEY=Zx81bQ0pLm4Nc7Vt2Rw9 done",
       "OPENAI_API_KEY=[redacted] done"},
      {"JSON token field", R"({"access_token": "a8f5f167f44f4964e6c998dee827110c"})",
       R"({"access_token": "[redacted]"})"},
      {"password of a lower entropy", "db password: lettersonly", "db password: [redacted]"},
      {"known secret value anywhere", "echo hunter2-correct-horse!", "echo [redacted]!"},
      {"code words after key are not secrets", "error: 'key' was not declared; token = next_token_of_row;",
       "error: 'key' was not declared; token = next_token_of_row;"},
      {"short sk- words are not keys", "task-sk-short mask-abcdefghijklmnopqrstuvwxyz",
       "task-sk-short mask-abcdefghijklmnopqrstuvwxyz"},
      {"a key hidden inside a word", "MY_sk-AbCdEfGhIjKlMnOpQrStUvWx0123", "MY_[redacted]"},
  };
  for (const CleanCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string cleaned = CleanUntrustedText(c.input, NoEnvironment());
    EXPECT_EQ(cleaned, c.expected);
    EXPECT_EQ(CleanUntrustedText(cleaned, NoEnvironment()), cleaned) << "not idempotent";
  }
}

TEST(CleanUntrustedText, KeepsHeadAndTailWithAMarker) {
  UntrustedTextOptions options = NoEnvironment();
  options.max_bytes = 1000;
  const std::string text = "FIRST ERROR\n" + std::string(5000, 'x') + "\nLAST LINE";
  const std::string cleaned = CleanUntrustedText(text, options);
  EXPECT_LE(cleaned.size(), 1000u);
  EXPECT_THAT(cleaned, ::testing::StartsWith("FIRST ERROR\n"));
  EXPECT_THAT(cleaned, ::testing::EndsWith("\nLAST LINE"));
  EXPECT_THAT(cleaned, HasSubstr(" bytes cut ...]\n"));
  EXPECT_EQ(CleanUntrustedText(cleaned, options), cleaned);

  // Cuts fall on UTF-8 boundaries, and escapes count against the cap.
  const std::string wide = std::string(3000, '\x01') + std::string(600, 'a') + "\xe2\x82\xac\xe2\x82\xac";
  const std::string capped = CleanUntrustedText(wide, options);
  EXPECT_LE(capped.size(), 1000u);
  EXPECT_EQ(CleanUntrustedText(capped, options), capped);  // valid UTF-8: nothing to replace
  EXPECT_THAT(capped, Not(HasSubstr("\xEF\xBF\xBD")));
}

TEST(CleanUntrustedText, CredentialVariablesByName) {
  for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                           "SMTP_PASSWD", "gcp_credentials", "MY_SECRET_THING", "HF_PAT"}) {
    EXPECT_TRUE(IsCredentialVariableName(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "CUDA_VISIBLE_DEVICES", "KEYBOARD_LAYOUT", "TOKENIZERS_PARALLELISM"}) {
    EXPECT_FALSE(IsCredentialVariableName(name)) << name;
  }
  std::string a = "OPENAI_API_KEY=not-a-pattern-value", b = "PATH=/usr/bin:/bin", c = "GH_TOKEN=short",
              d = "DB_PASSWORD=pa55word-x";
  char* environment[] = {a.data(), b.data(), c.data(), d.data(), nullptr};
  EXPECT_THAT(CredentialValues(environment), ::testing::ElementsAre("not-a-pattern-value", "pa55word-x"));

  UntrustedTextOptions options;
  options.secrets_from_environment = false;
  options.secret_values = CredentialValues(environment);
  EXPECT_EQ(CleanUntrustedText("env: OPENAI_API_KEY=not-a-pattern-value, pw pa55word-x; PATH=/usr/bin:/bin", options),
            "env: OPENAI_API_KEY=[redacted], pw [redacted]; PATH=/usr/bin:/bin");
}

TEST(CleanUntrustedFields, EveryTextFieldOfAResult) {
  v1::EvalResult result;
  result.set_compile_log("warning \x1b[1mbold\x1b[0m");
  result.set_run_log("AKIAIOSFODNN7EXAMPLE\r");
  result.set_failure_detail(std::string(20000, 'y'));
  result.add_checks()->set_detail("got \xff");
  v1::BaselineTime* baseline = (*result.mutable_baselines())[16].add_baselines();
  baseline->set_note("\x1b]52;c;cGF5bG9hZA==\x07");
  CleanUntrustedFields(result, NoEnvironment());
  EXPECT_EQ(result.compile_log(), "warning \\x1b[1mbold\\x1b[0m");
  EXPECT_EQ(result.run_log(), "[redacted]\\r");
  EXPECT_LE(result.failure_detail().size(), 8u * 1024);
  EXPECT_EQ(result.checks(0).detail(), "got \xEF\xBF\xBD");
  EXPECT_EQ(result.baselines().at(16).baselines(0).note(), "\\x1b]52;c;cGF5bG9hZA==\\x07");
}

TEST(CleanUntrustedText, NeverFailsOnJunk) {
  std::string junk;
  for (int i = 0; i < 20000; ++i) junk += static_cast<char>((i * 2654435761u) >> 13);
  const std::string cleaned = CleanUntrustedText(junk, NoEnvironment());
  EXPECT_EQ(CleanUntrustedText(cleaned, NoEnvironment()), cleaned);
  for (size_t n = 0; n < 64; ++n) CleanUntrustedText(junk.substr(0, n), NoEnvironment());
}

}  // namespace
}  // namespace sparseditto
