// The command mutator against tiny shell scripts.
#include "llm_mutator/command_client.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::llm {
namespace {

using ::testing::HasSubstr;

TEST(CommandClientTest, Table) {
  struct Case {
    std::string label;
    std::string script;
    double timeout;
    ChatOutcome outcome;
    std::string text_or_words;
  };
  const Case cases[] = {
      // Echoes what it read after the separator line, so the test sees the prompt arrived whole.
      {"answers", "sed -n '/^=====$/,$p' | tail -n +2; echo; echo '```cuda'; echo 'int x;'; echo '```'", 10, ChatOutcome::kOk,
       "the user part\nline two\n```cuda\nint x;\n```\n"},
      {"fails", "cat >/dev/null; echo 'no model loaded' >&2; exit 3", 10, ChatOutcome::kCommandFailed,
       "exited with code 3: no model loaded"},
      {"silent", "cat >/dev/null", 10, ChatOutcome::kEmptyAnswer, "wrote nothing"},
      {"hangs", "sleep 30", 0.5, ChatOutcome::kTimeout, "did not answer within 0.5 s"},
      {"floods", "cat >/dev/null; yes abcdefgh | head -c 100000", 10, ChatOutcome::kTruncated, "more than 4096 bytes"},
      {"crashes", "kill -SEGV $$", 10, ChatOutcome::kCommandFailed, "SIGSEGV"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    const std::string path = ::sparseditto::testing_support::ProcessTempDir() + "/sd_command_" + c.label + ".sh";
    std::ofstream(path) << "#!/bin/sh\n" << c.script << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    ModelOptions model;
    model.name = "script";
    model.provider = Provider::kCommand;
    model.command = {"/bin/sh", path};
    model.timeout_seconds = c.timeout;
    CommandClient client(model, /*max_output_bytes=*/4096);
    const ChatResult r = client.Complete({.system = "the system part", .user = "the user part\nline two"});
    EXPECT_EQ(r.outcome, c.outcome) << ChatOutcomeName(r.outcome) << ": " << r.message;
    if (c.outcome == ChatOutcome::kOk) {
      EXPECT_EQ(r.text, c.text_or_words);
      EXPECT_GT(r.prompt_tokens, 0);
    } else {
      EXPECT_THAT(r.message, HasSubstr(c.text_or_words));
    }
  }
  ModelOptions missing;
  missing.name = "missing";
  missing.provider = Provider::kCommand;
  missing.command = {"sd-no-such-program-anywhere"};
  const ChatResult r = CommandClient(missing).Complete({.user = "x"});
  EXPECT_EQ(r.outcome, ChatOutcome::kCommandFailed);
  EXPECT_THAT(r.message, HasSubstr("could not run sd-no-such-program-anywhere"));
}

}  // namespace
}  // namespace sparseditto::llm
