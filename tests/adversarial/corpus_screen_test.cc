// The static screen against the corpus (CPU; real nvcc -E, no GPU): every entry the screen is meant
// to catch is refused by the layer corpus.json names (`screen_layer`: "spelling" for the candidate's
// own text, "preprocessed" for what only its preprocessed host unit shows), and every entry meant to
// reach a later stage (not REJECTED, not "screen": false) passes the screen, so the corpus run on the
// GPU exercises the layers behind it.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "evaluator/compile/host_preprocess.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "evaluator/compile/static_screen.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
const fs::path kCorpus = SPARSEDITTO_SOURCE_DIR "/tests/adversarial";

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CorpusScreenTest, EachEntryIsCaughtByTheLayerItNamesAndTheRestPass) {
  std::string cache = (fs::temp_directory_path() / "sd-corpus-screen-XXXXXX").string();
  ASSERT_NE(mkdtemp(cache.data()), nullptr);
  absl::StatusOr<std::unique_ptr<NvccCompiler>> compiler =
      NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = cache});
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  CompileOptions options;
  options.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.archs = {"sm_90"};

  const auto corpus = nlohmann::json::parse(Slurp(kCorpus / "corpus.json"));
  int by_spelling = 0, by_preprocessing = 0, passed = 0;
  for (const auto& entry : corpus.at("entries")) {
    const std::string file = entry.at("file").get<std::string>();
    SCOPED_TRACE(file);
    if (entry.value("compile_timeout", false)) continue;  // the compile bomb: its preprocessing is quick, its compile is not
    const std::string source = Slurp(kCorpus / file);
    const absl::Status spelling = ScreenCandidateSource(source);
    const absl::Status whole = ScreenCandidate(**compiler, source, options);
    const std::string layer = entry.value("screen_layer", std::string());
    if (layer == "spelling") {
      EXPECT_TRUE(absl::IsPermissionDenied(spelling)) << spelling;
      EXPECT_TRUE(absl::IsPermissionDenied(whole)) << whole;
      ++by_spelling;
    } else if (layer == "preprocessed") {
      EXPECT_TRUE(spelling.ok()) << "caught on the spelling already; say so in corpus.json: " << spelling;
      EXPECT_TRUE(absl::IsPermissionDenied(whole)) << whole;
      EXPECT_THAT(std::string(whole.message()), ::testing::HasSubstr("(after preprocessing)"));
      ++by_preprocessing;
    } else if (entry.value("caught_by", std::string()).starts_with("static screen")) {
      EXPECT_TRUE(absl::IsPermissionDenied(whole)) << whole;  // the older cases, caught on the spelling
      ++by_spelling;
    } else if (entry.at("expected").get<std::string>() != "REJECTED" && entry.value("screen", true)) {
      EXPECT_TRUE(whole.ok()) << "a candidate for a later stage must pass the screen: " << whole;
      ++passed;
    }
  }
  std::printf("corpus screen: %d caught on the spelling, %d only after preprocessing, %d passed on to later stages\n",
              by_spelling, by_preprocessing, passed);
  EXPECT_GE(by_spelling, 20);
  EXPECT_GE(by_preprocessing, 2);
  fs::remove_all(cache);
}

}  // namespace
}  // namespace sparseditto
