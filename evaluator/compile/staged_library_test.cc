// A real nvcc compile (CPU only): the library the runner is handed is a verified copy, and a cached
// library changed on disk is recompiled, never handed out.
#include "evaluator/compile/staged_library.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "evaluator/compile/compile_test_sources.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void FlipOneByte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  const char c = static_cast<char>(f.get());
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x40));
}

TEST(StagedLibrary, IsAVerifiedReadOnlyCopyAndATamperedCacheEntryIsRecompiled) {
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<NvccCompiler>> compiler =
      NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch.path() + "/cache"});
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  CompileOptions options;
  options.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.archs = {"sm_80"};
  const std::string source = testing::TinyCandidate("1.0f");
  absl::StatusOr<CompileResult> first = (*compiler)->Compile(source, options);
  ASSERT_TRUE(first.ok() && first->ok) << first.status() << (first.ok() ? first->log : "");

  std::string staged_directory;
  {
    absl::StatusOr<StagedLibrary> staged = StagedLibrary::Stage((*compiler)->cache(), first->cache_key, scratch.path());
    ASSERT_TRUE(staged.ok()) << staged.status();
    EXPECT_NE(staged->path(), first->library_path);
    EXPECT_EQ(ReadFile(staged->path()), ReadFile(first->library_path));
    struct stat st {};
    ASSERT_EQ(stat(staged->path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0444u);
    ASSERT_EQ(stat(staged->directory().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    staged_directory = staged->directory();
  }
  EXPECT_FALSE(fs::exists(staged_directory));  // removed with the StagedLibrary

  // One byte of the cached library changes after the trusted side stored it.
  const std::string cached_bytes = ReadFile(first->library_path);
  FlipOneByte(first->library_path, static_cast<std::streamoff>(cached_bytes.size() / 2));
  absl::StatusOr<StagedLibrary> refused = StagedLibrary::Stage((*compiler)->cache(), first->cache_key, scratch.path());
  EXPECT_TRUE(absl::IsDataLoss(refused.status())) << refused.status();
  std::string warning;
  EXPECT_FALSE((*compiler)->cache().Lookup(first->cache_key, &warning).has_value());
  EXPECT_THAT(warning, ::testing::HasSubstr("failed its hash check"));

  absl::StatusOr<CompileResult> again = (*compiler)->Compile(source, options);  // a miss: nvcc runs again
  ASSERT_TRUE(again.ok() && again->ok) << again.status();
  EXPECT_FALSE(again->from_cache);
  absl::StatusOr<StagedLibrary> restaged = StagedLibrary::Stage((*compiler)->cache(), again->cache_key, scratch.path());
  ASSERT_TRUE(restaged.ok()) << restaged.status();
  EXPECT_EQ(ReadFile(restaged->path()), ReadFile(again->library_path));
  absl::StatusOr<CompileResult> hit = (*compiler)->Compile(source, options);
  ASSERT_TRUE(hit.ok() && hit->ok);
  EXPECT_TRUE(hit->from_cache);
}

}  // namespace
}  // namespace sparseditto
