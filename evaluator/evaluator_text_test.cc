// What the evaluator returns is cleaned and screened on the CPU side (no GPU, no runner needed: these
// candidates end at the screen or the compile): candidate text in the compile log comes back escaped
// and scrubbed of secrets, our own credential variables included, and a refusal only the
// preprocessed unit shows is REJECTED.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "evaluator/compile/static_screen.h"
#include "evaluator/evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A credential of "ours", set before anything reads the environment (CleanUntrustedText reads it once).
constexpr char kOurToken[] = "our-own-service-token-0451";
const bool kTokenSet = [] { return setenv("SD_EVALUATOR_TEXT_TEST_TOKEN", kOurToken, 1) == 0; }();

std::string Reference() {
  std::ifstream in(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class EvaluatorTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kTokenSet);
    ASSERT_TRUE(folder_.ok());
    EvaluatorOptions options;
    options.compiler.cache_directory = (folder_.path() / "compile").string();
    options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
    options.runner.runner_path = SPARSEDITTO_FAKE_RUNNER;  // never started: these end before the GPU stages
    auto evaluator = Evaluator::Create(options);
    ASSERT_TRUE(evaluator.ok()) << evaluator.status();
    evaluator_ = std::move(*evaluator);
    task_.set_name("t");
    task_.set_dtype(v1::DTYPE_FP16);
    task_.add_arch("sm_80");
    task_.add_n(16);
  }
  testing_support::TempFolder folder_{"evaluator_text_test"};
  std::unique_ptr<Evaluator> evaluator_;
  v1::Task task_;
};

TEST_F(EvaluatorTextTest, ACompileLogComesBackEscapedAndScrubbed) {
  v1::Candidate candidate;
  candidate.set_id("noisy");
  candidate.set_source(Reference() + "\n#error \"\x1b[2J\x1b]0;pwned\x07 OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUv012345 " +
                       kOurToken + "\"\n");
  const v1::EvalResult result = evaluator_->Evaluate(task_, candidate, false, 1);
  ASSERT_EQ(result.failure(), v1::FAILURE_CATEGORY_COMPILE) << result.failure_detail();
  EXPECT_THAT(result.compile_log(), HasSubstr("\\x1b[2J"));
  EXPECT_THAT(result.compile_log(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(result.compile_log(), Not(HasSubstr("\x07")));
  EXPECT_THAT(result.compile_log(), Not(HasSubstr("sk-proj-AbCd")));
  EXPECT_THAT(result.compile_log(), Not(HasSubstr(kOurToken)));
  EXPECT_THAT(result.compile_log(), HasSubstr("[redacted]"));
}

TEST_F(EvaluatorTextTest, WhatOnlyThePreprocessedUnitShowsIsRejected) {
  v1::Candidate candidate;
  candidate.set_id("stringized");
  candidate.set_source(Reference() + "\n#define PATH_OF(x) #x\nconst char* kPath = PATH_OF(/proc/self/envir) \"on\";\n");
  ASSERT_TRUE(ScreenCandidateSource(candidate.source()).ok());  // the spelling alone passes
  const v1::EvalResult result = evaluator_->Evaluate(task_, candidate, false, 1);
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_REJECTED);
  EXPECT_THAT(result.failure_detail(), HasSubstr("reads of /proc"));
  EXPECT_THAT(result.failure_detail(), HasSubstr("(after preprocessing)"));
  EXPECT_TRUE(absl::IsPermissionDenied(evaluator_->Screen(candidate, task_)));  // remembered: same verdict
}

// A machine without the NVIDIA driver (EvaluatorOptions::missing_driver, as the command line sets it):
// set-up says so before any runner starts, and an evaluation still screens and compiles, then ends
// INTERNAL with the same sentence rather than the runner's dying words.
TEST_F(EvaluatorTextTest, WithoutADriverSetUpSaysSoAndTheEvaluationStopsAfterTheCompile) {
  EvaluatorOptions options;
  options.compiler.cache_directory = (folder_.path() / "compile").string();
  options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.runner.runner_path = SPARSEDITTO_FAKE_RUNNER;
  int asked = 0;
  options.missing_driver = [&asked] {
    ++asked;
    return std::optional<std::string>("no NVIDIA driver was found on this machine (no /dev/nvidiactl)");
  };
  auto evaluator = Evaluator::Create(options);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  const auto setup = (*evaluator)->SetupTask(task_);
  EXPECT_TRUE(absl::IsUnavailable(setup.status())) << setup.status();
  EXPECT_THAT(std::string(setup.status().message()), HasSubstr("no NVIDIA driver was found"));
  EXPECT_EQ(asked, 1);
  v1::Candidate candidate;
  candidate.set_id("reference");
  candidate.set_source(Reference());
  const v1::EvalResult result = (*evaluator)->Evaluate(task_, candidate, false, 1);
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_INTERNAL) << result.failure_detail();
  EXPECT_EQ(result.stage_reached(), v1::EVAL_STAGE_COMPILE);
  EXPECT_THAT(result.failure_detail(), HasSubstr("GPU stages not run: no NVIDIA driver was found"));
}

}  // namespace
}  // namespace sparseditto
