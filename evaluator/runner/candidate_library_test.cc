// The layout check at load (kernel_abi/sparseditto_kernel.h's sparseditto_layouts): real nvcc-built
// libraries, loaded with the host's own LoadCandidateLibrary. CPU only (dlopen needs no GPU).
#include "evaluator/runner/candidate_library.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "evaluator/compile/compile_test_sources.h"
#include "evaluator/compile/exported_symbols.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/candidate_build.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

class CandidateLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing_support::ProcessTempDir()) / ("sd_candidate_library_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Compiles `source` (for sm_80) into <dir>/<name>.so and returns its path.
  std::string Build(const std::string& name, const std::string& source) {
    const std::string cu = (dir_ / (name + ".cu")).string(), so = (dir_ / (name + ".so")).string();
    std::ofstream(cu) << source;
    auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, cu, {"sm_80"}, so);
    EXPECT_TRUE(log.ok()) << log.status();
    return so;
  }

  std::filesystem::path dir_;
};

std::string WithMask(const std::string& mask_expression) {
  return testing::TinyCandidate("1.0f") + "SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) { return " +
         mask_expression + "; }\n";
}

struct LayoutCase {
  std::string label;
  std::string source;
  uint32_t mask;
  bool kn_ok, nk_ok;
};

TEST_F(CandidateLibraryTest, TheMaskDecidesWhichLayoutsTheHostHandsTheKernel) {
  const LayoutCase cases[] = {
      {"no_mask_is_kn_only", testing::TinyCandidate("1.0f"), 1u, true, false},
      {"kn_and_nk", WithMask("SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)"), 3u, true,
       true},
      {"nk_only", WithMask("SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)"), 2u, false, true},
      {"empty_mask", WithMask("0u"), 0u, false, false},
      {"junk_bits_name_no_nk", WithMask("0xfffffffdu"), 0xfffffffdu, true, false},
  };
  for (const LayoutCase& c : cases) {
    SCOPED_TRACE(c.label);
    const std::string so = Build(c.label, c.source);
    auto lib = LoadCandidateLibrary(so);
    ASSERT_TRUE(lib.ok()) << lib.status();
    EXPECT_EQ(lib->layouts, c.mask);
    EXPECT_EQ(CheckLayoutSupported(*lib, SD_LAYOUT_KN).ok(), c.kn_ok);
    const absl::Status nk = CheckLayoutSupported(*lib, SD_LAYOUT_NK);
    EXPECT_EQ(nk.ok(), c.nk_ok);
    if (!c.nk_ok) {
      EXPECT_EQ(nk.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(nk.message(), HasSubstr("does not support layout nk"));
      EXPECT_THAT(nk.message(), HasSubstr("SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)"));
    }
    // A number the enum does not name is refused whatever the mask says (junk bits included).
    EXPECT_FALSE(CheckLayoutSupported(*lib, 5).ok());
    EXPECT_FALSE(CheckLayoutSupported(*lib, 40).ok());
    EXPECT_FALSE(CheckLayoutSupported(*lib, -1).ok());
  }
}

// The compile stage's allow-list of exports takes the mask (a sparseditto_* name), and the reference
// candidate, built by nvcc as the evaluator builds it, exports it with both layouts.
TEST_F(CandidateLibraryTest, TheReferenceExportsTheMaskAndTheAllowListAcceptsIt) {
  const std::string so = Build("reference", [] {
    std::ifstream in(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }());
  auto symbols = ReadExportedSymbols(so);
  ASSERT_TRUE(symbols.ok()) << symbols.status();
  bool found = false;
  for (const ExportedSymbol& s : *symbols) found |= s.name == "sparseditto_layouts";
  EXPECT_TRUE(found);
  EXPECT_THAT(CandidateExportProblems(*symbols), ::testing::IsEmpty());
  auto lib = LoadCandidateLibrary(so);
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ(lib->layouts, SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
  EXPECT_TRUE(CheckLayoutSupported(*lib, SD_LAYOUT_NK).ok());
}

}  // namespace
}  // namespace sparseditto
