// Mutator files: the example files in configs/mutators/ load, and bad files name the line and field.
#include "task/mutator_file.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

TEST(MutatorFileTest, EveryExampleFileLoads) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SPARSEDITTO_SOURCE_DIR "/configs/mutators")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    absl::StatusOr<std::vector<v1::MutatorSpec>> specs = LoadMutatorsFile(entry.path().string());
    ASSERT_TRUE(specs.ok()) << specs.status();
    EXPECT_FALSE(specs->empty()) << entry.path();
  }
  EXPECT_GE(files, 3);
}

TEST(MutatorFileTest, FieldsAndDefaults) {
  absl::StatusOr<std::vector<v1::MutatorSpec>> specs = ParseMutatorsYaml(
      "mutators:\n"
      "  - {name: a, kind: anthropic, model: m, api_key_env: ANTHROPIC_API_KEY, max_retries: 2, privacy: true}\n"
      "  - {kind: openai, model: q, endpoint: http://localhost:8000/v1}\n",
      "m.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name(), "a");
  EXPECT_TRUE((*specs)[0].has_max_retries());
  EXPECT_EQ((*specs)[0].max_retries(), 2);
  EXPECT_TRUE((*specs)[0].privacy());
  EXPECT_EQ((*specs)[1].name(), "openai");
  EXPECT_FALSE((*specs)[1].has_max_retries());
  EXPECT_FALSE((*specs)[1].privacy());
  EXPECT_EQ((*specs)[1].concurrency(), 1);
  EXPECT_DOUBLE_EQ((*specs)[1].timeout_seconds(), 120);
}

TEST(MutatorFileTest, BadFilesNameTheLineAndField) {
  struct Case {
    std::string yaml;
    std::string words;
  };
  const Case cases[] = {
      {"", "empty mutator file"},
      {"- {kind: builtin}\n", "expected a mapping with `mutators:`"},
      {"mutator: []\n", "m.yaml:1:1: mutator: unknown field (did you mean 'mutators'?)"},
      {"mutators: []\n", "mutators: needs at least one mutator"},
      {"mutators:\n  - {kind: openai}\n", "m.yaml:2:5: mutators[0].model: required field missing"},
      {"mutators:\n  - {kind: openai, model: m, api_key_env: sk-abcdefghijklmnopqrstuvwxyz123456}\n",
       "mutators[0].api_key_env: looks like an API key"},
      {"mutators: [{kind: openai, model: m, endpoint: [1}\n", "YAML syntax error"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<v1::MutatorSpec>> specs = ParseMutatorsYaml(c.yaml, "m.yaml");
    ASSERT_FALSE(specs.ok()) << c.yaml;
    EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(std::string(specs.status().message()), HasSubstr(c.words)) << c.yaml;
    EXPECT_THAT(std::string(specs.status().message()), ::testing::Not(HasSubstr("abcdefghijklmnop")));
  }
  EXPECT_EQ(LoadMutatorsFile("/no/such/mutators.yaml").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace sparseditto
