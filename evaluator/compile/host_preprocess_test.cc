// The static screen on real `nvcc -E` output (CPU only): the host pass it reads is the compile's own,
// every seed passes it, and it is cheap.
#include "evaluator/compile/host_preprocess.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "common/subprocess.h"
#include "evaluator/compile/compile_test_sources.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "evaluator/compile/static_screen.h"
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

// The -D/-U macro names of the gcc -E line of `nvcc --dryrun <args>` that preprocesses the host pass
// (with the -U's applied), or the device pass when `device`.
std::set<std::string> PreprocessorMacros(const std::vector<std::string>& args, bool device) {
  SpawnOptions spawn;
  spawn.argv = {SPARSEDITTO_NVCC, "--dryrun"};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.merge_stderr_into_stdout = true;
  absl::StatusOr<CommandResult> run = RunCommand(spawn, 60);
  EXPECT_TRUE(run.ok()) << run.status();
  std::istringstream lines(run.ok() ? run->stdout_output.bytes : "");
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" -E ") == std::string::npos || line.find("gcc") == std::string::npos) continue;
    if ((line.find("-D__CUDA_ARCH__=") != std::string::npos) != device) continue;
    std::set<std::string> macros;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      for (size_t start = 0; start < w.size();) {  // -Xcompiler joins several -U with commas
        const size_t comma = w.find(",-", start);
        const std::string one = w.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        start = comma == std::string::npos ? w.size() : comma + 1;
        if (one.size() < 3 || one[0] != '-' || (one[1] != 'D' && one[1] != 'U')) continue;
        const std::string name = one.substr(2, one.find('=') - 2);
        if (one[1] == 'D') macros.insert(name); else macros.erase(name);
      }
    }
    return macros;
  }
  ADD_FAILURE() << "no gcc -E line in the dry run";
  return {};
}

TEST(HostPreprocess, TheScreensPassIsTheCompilesHostPass) {
  for (const std::vector<std::string>& archs :
       std::vector<std::vector<std::string>>{{"sm_80"}, {"sm_90a"}, {"sm_80", "sm_90a", "sm_100f"}, {"sm_100a"}}) {
    SCOPED_TRACE(archs.back());
    CompileOptions options;
    options.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
    options.archs = archs;
    absl::StatusOr<std::vector<std::string>> flags = NvccFlags(options);
    ASSERT_TRUE(flags.ok()) << flags.status();
    std::vector<std::string> compile = *flags;
    compile.insert(compile.end(), {"-o", "candidate.so", "candidate.cu"});
    std::vector<std::string> screen = *flags;
    const std::vector<std::string> tail = HostPreprocessArguments(archs);
    screen.insert(screen.end(), tail.begin(), tail.end());
    const std::set<std::string> host = PreprocessorMacros(compile, /*device=*/false);
    EXPECT_FALSE(host.empty());
    EXPECT_EQ(PreprocessorMacros(screen, /*device=*/true), host);  // -E runs as a device pass, minus the -U's
  }
}

class HostPreprocessCompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<NvccCompiler>> compiler =
        NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch_.path() + "/cache"});
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    options_.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
    options_.archs = {"sm_90a"};
  }
  ScratchDir scratch_;
  std::unique_ptr<NvccCompiler> compiler_;
  CompileOptions options_;
};

TEST_F(HostPreprocessCompileTest, EverySeedAndTheReferencePassInAFewHundredMilliseconds) {
  std::vector<std::string> sources = {SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu"};
  for (const auto& entry : fs::directory_iterator(SPARSEDITTO_SOURCE_DIR "/kernels/seeds")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".cu" && !name.ends_with("_test.cu")) sources.push_back(entry.path().string());
  }
  ASSERT_GE(sources.size(), 10u);
  double slowest = 0;
  for (const std::string& path : sources) {
    SCOPED_TRACE(path);
    const auto start = std::chrono::steady_clock::now();
    const absl::Status screened = ScreenCandidate(*compiler_, ReadFile(path), options_);
    slowest = std::max(slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    EXPECT_TRUE(screened.ok()) << screened;
  }
  std::printf("screen with preprocessing: %zu sources, slowest %.0f ms\n", sources.size(), slowest * 1000);
  EXPECT_LT(slowest, 5.0);  // about 0.4 s on an idle core; generous for a loaded CI machine
}

TEST_F(HostPreprocessCompileTest, WhatOnlyThePreprocessorShows) {
  struct Case {
    std::string name, body;
    std::string words;  // empty: passes
  };
  const std::vector<Case> cases = {
      {"host asm behind a condition that is true on the host",
       "__host__ __device__ int F() {\n#if __CUDA_ARCH__ >= 0\n  asm volatile(\"syscall\");\n#endif\n  return 0;\n}\n",
       "inline asm in a __host__ __device__ function"},
      {"a stringized path", "#define STR(x) #x\nconst char* p = STR(/proc/self/envir) \"on\";\n", "reads of /proc"},
      {"a feature macro that only the device pass defines",
       "__host__ __device__ int G() {\n#if (__CUDA_ARCH__ >= 0) && (1 - defined(__CUDA_ARCH_FEAT_SM90_ALL))\n"
       "  asm volatile(\"syscall\");\n#endif\n  return 0;\n}\n",
       "inline asm in a __host__ __device__ function"},
      {"honest arch-guarded asm", "__host__ __device__ int F() {\n#ifdef __CUDA_ARCH__\n  asm(\"nop;\");\n#endif\n  return 0;\n}\n", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string source = testing::TinyCandidate("1.0f") + c.body;
    absl::StatusOr<PreprocessResult> unit = compiler_->PreprocessHost(source, options_);
    ASSERT_TRUE(unit.ok()) << unit.status();
    ASSERT_TRUE(unit->ok) << unit->log;
    const absl::Status screened = ScreenCandidate(*compiler_, source, options_);
    if (c.words.empty()) {
      EXPECT_TRUE(screened.ok()) << screened;
    } else {
      EXPECT_TRUE(absl::IsPermissionDenied(screened)) << screened;
      EXPECT_THAT(std::string(screened.message()), ::testing::HasSubstr(c.words));
      EXPECT_THAT(std::string(screened.message()), ::testing::HasSubstr("(after preprocessing)"));
    }
  }
}

TEST_F(HostPreprocessCompileTest, ASourceThatDoesNotPreprocessIsLeftToTheCompile) {
  absl::StatusOr<PreprocessResult> unit = compiler_->PreprocessHost("#include <no_such_header.h>\n", options_);
  ASSERT_TRUE(unit.ok()) << unit.status();
  EXPECT_FALSE(unit->ok);
  EXPECT_FALSE(unit->timed_out);
  EXPECT_THAT(unit->log, ::testing::HasSubstr("no_such_header.h"));
  EXPECT_TRUE(ScreenCandidate(*compiler_, "#include <no_such_header.h>\n", options_).ok());
}

}  // namespace
}  // namespace sparseditto
