// CPU-only checks of the reference candidate: it compiles for sm_80 and sm_90, exports the ABI,
// and its declared tunables parse and can be rewritten into a source that still compiles.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "kernel_abi/tunables.h"
#include "kernels/testing/candidate_build.h"

namespace sparseditto {
namespace {

constexpr char kReferencePath[] = SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReferenceCandidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / ("sd_reference_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ReferenceCandidateTest, CompilesForSm80AndSm90AndExportsTheAbi) {
  const std::string library = (dir_ / "reference.so").string();
  auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, kReferencePath, {"sm_80", "sm_90"}, library);
  ASSERT_TRUE(log.ok()) << log.status();

  // ptxas reports each kernel it assembles and for which arch.
  EXPECT_NE(log->find("for 'sm_80'"), std::string::npos) << *log;
  EXPECT_NE(log->find("for 'sm_90'"), std::string::npos) << *log;

  auto lib = testing::LoadCandidate(library);
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ(lib->abi_version(), SPARSEDITTO_ABI_VERSION);
}

TEST_F(ReferenceCandidateTest, DeclaredTunablesRewriteIntoCompilableSources) {
  const std::string source = ReadFile(kReferencePath);
  auto tunables = ParseTunables(source);
  ASSERT_TRUE(tunables.ok()) << tunables.status();
  ASSERT_EQ(tunables->size(), 1u);
  EXPECT_EQ((*tunables)[0].name(), "THREADS_PER_BLOCK");

  auto rewritten = ApplyTunables(source, {{"THREADS_PER_BLOCK", "64"}});
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  const std::string path = (dir_ / "reference_64.cu").string();
  std::ofstream(path) << *rewritten;
  auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, path, {"sm_90"}, (dir_ / "r64.so").string());
  EXPECT_TRUE(log.ok()) << log.status();
}

TEST_F(ReferenceCandidateTest, ACompileErrorIsReportedWithTheLog) {
  const std::string path = (dir_ / "broken.cu").string();
  std::ofstream(path) << "#include \"sparseditto_kernel.h\"\nint x = undeclared_name;\n";
  auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, path, {"sm_90"}, (dir_ / "broken.so").string());
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("undeclared_name"), std::string::npos) << log.status();
}

}  // namespace
}  // namespace sparseditto
