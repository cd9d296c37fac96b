// Real nvcc compiles (CPU only; no GPU needed).
#include "evaluator/compile/nvcc_compiler.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "evaluator/compile/compile_test_sources.h"
#include "evaluator/sandbox/landlock.h"
#include "evaluator/sandbox/sandbox_probe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::TinyCandidate;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class NvccCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(scratch_.path().empty());
    absl::StatusOr<std::unique_ptr<NvccCompiler>> compiler =
        NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch_.path() + "/cache"});
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    options_.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
    options_.archs = {"sm_80"};
  }

  CompileResult MustCompile(std::string_view source, const CompileOptions& options) {
    absl::StatusOr<CompileResult> result = compiler_->Compile(source, options);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : CompileResult{};
  }

  ScratchDir scratch_;
  std::unique_ptr<NvccCompiler> compiler_;
  CompileOptions options_;
};

TEST_F(NvccCompilerTest, ReferenceCandidateCompilesForSm80AndSm90WithResources) {
  options_.archs = {"sm_80", "sm_90"};
  const CompileResult result = MustCompile(ReadFile(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu"), options_);
  ASSERT_TRUE(result.ok) << result.failure << "\n" << result.log;
  EXPECT_FALSE(result.from_cache);
  EXPECT_TRUE(result.failure.empty());
  EXPECT_TRUE(std::filesystem::exists(result.library_path));
  EXPECT_GT(result.seconds, 0);
  EXPECT_THAT(result.log, HasSubstr("ptxas info"));
  for (const std::string arch : {"sm_80", "sm_90"}) {
    int kernels = 0;
    for (const v1::KernelResources& r : result.resources) {
      if (r.arch() != arch) continue;
      ++kernels;
      EXPECT_GT(r.registers(), 0) << arch << " " << r.kernel_name();
      EXPECT_THAT(r.kernel_name(), HasSubstr("CsrSpmmElementwise<"));
    }
    EXPECT_EQ(kernels, 3) << arch;  // fp32, fp16, bf16
  }
}

TEST_F(NvccCompilerTest, SyntaxErrorIsAFailedResultWithTheErrorInTheLog) {
  const CompileResult result = MustCompile(testing::kSyntaxErrorCandidate, options_);
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.timed_out);
  EXPECT_THAT(result.failure, HasSubstr("nvcc exited with code"));
  EXPECT_THAT(result.log, ::testing::StartsWith("candidate.cu(3): error"));
  EXPECT_THAT(result.log, ::testing::Not(HasSubstr(scratch_.path())));
  EXPECT_TRUE(result.library_path.empty());
  // Failures are deterministic, so they are cached too.
  EXPECT_TRUE(MustCompile(testing::kSyntaxErrorCandidate, options_).from_cache);
}

TEST_F(NvccCompilerTest, CacheHitsOnTheSameInputsAndMissesWhenAnyChanges) {
  const CompileResult first = MustCompile(TinyCandidate("1.0f"), options_);
  ASSERT_TRUE(first.ok) << first.failure << "\n" << first.log;
  EXPECT_FALSE(first.from_cache);
  const std::string first_bytes = ReadFile(first.library_path);

  const CompileResult second = MustCompile(TinyCandidate("1.0f"), options_);
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.seconds, 0);
  EXPECT_EQ(second.cache_key, first.cache_key);
  EXPECT_EQ(ReadFile(second.library_path), first_bytes);
  EXPECT_EQ(second.log, first.log);
  ASSERT_EQ(second.resources.size(), first.resources.size());
  EXPECT_EQ(second.resources[0].registers(), first.resources[0].registers());

  CompileOptions with_flag = options_;
  with_flag.extra_flags = {"-DSPARSEDITTO_TEST_FLAG=1"};
  const CompileResult flag_changed = MustCompile(TinyCandidate("1.0f"), with_flag);
  EXPECT_TRUE(flag_changed.ok);
  EXPECT_FALSE(flag_changed.from_cache);
  EXPECT_NE(flag_changed.cache_key, first.cache_key);

  const CompileResult source_changed = MustCompile(TinyCandidate("2.0f"), options_);
  EXPECT_TRUE(source_changed.ok);
  EXPECT_FALSE(source_changed.from_cache);

  CompileOptions no_cache = options_;
  no_cache.use_cache = false;
  EXPECT_FALSE(MustCompile(TinyCandidate("1.0f"), no_cache).from_cache);
}

TEST_F(NvccCompilerTest, CompileBombTimesOutAndLeavesNoProcessBehind) {
  options_.timeout_seconds = 5;
  const CompileResult result = MustCompile(testing::kCompileBombCandidate, options_);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.timed_out);
  EXPECT_THAT(result.failure, HasSubstr("timed out after 5 s"));
  EXPECT_THAT(result.log, HasSubstr("nvcc and its children were killed"));
  EXPECT_LT(result.seconds, 5 + 10);
  // SIGKILL is asynchronous: give the kernel a moment to finish the killed tree.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // cicc and ptxas name their intermediates in the compile's folder, <temp>/sparseditto-nvcc-<pid>-*.
  const std::string compile_folders = "sparseditto-nvcc-" + std::to_string(getpid()) + "-";
  while (testing::LiveProcessesMentioning(compile_folders) > 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(testing::LiveProcessesMentioning(compile_folders), 0);
  // A timeout is not cached: the next try compiles (and times out) again.
  options_.timeout_seconds = 1;
  EXPECT_FALSE(MustCompile(testing::kCompileBombCandidate, options_).from_cache);
}

TEST_F(NvccCompilerTest, ExportsThatCouldInterposeFailTheCompile) {
  const std::string exporter = TinyCandidate("1.0f") +
      "extern \"C\" __attribute__((visibility(\"default\"))) int gettimeofday_hook(void*) { return 0; }\n";
  const CompileResult result = MustCompile(exporter, options_);
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.failure, HasSubstr("exports the C symbol 'gettimeofday_hook'"));

  std::string missing_run = TinyCandidate("1.0f");
  missing_run.replace(missing_run.find("sparseditto_run"), 15, "sparseditto_ran");
  const CompileResult incomplete = MustCompile(missing_run, options_);
  EXPECT_FALSE(incomplete.ok);
  EXPECT_THAT(incomplete.failure, HasSubstr("does not export sparseditto_run"));
}

// Issue 23 item 3: at compile time a candidate reads nothing outside its folder and the toolchain. The
// secret is world-readable (so only Landlock, not file permissions, keeps it out), in this test's own
// folder; unsandboxed, the same sources compile (the attack works), sandboxed they fail.
TEST_F(NvccCompilerTest, ACandidateCannotReadFilesOutsideItsFolderWhileCompiling) {
  if (absl::StatusOr<int> abi = LandlockAbiVersion(); !abi.ok()) GTEST_SKIP() << abi.status().message();
  const std::string outside = scratch_.path() + "/outside";
  std::filesystem::create_directories(outside);
  std::ofstream(outside + "/secret.h") << "int leaked_secret = 42;\n";
  namespace fs = std::filesystem;
  for (const std::string& path : {scratch_.path(), outside}) {
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  }
  fs::permissions(outside + "/secret.h", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                             fs::perms::others_read);
  struct Attack {
    const char* what;
    std::string source;
  };
  const std::vector<Attack> attacks = {
      {"a top-level asm .incbin", TinyCandidate("1.0f") + "asm(\".pushsection .rodata\\n.incbin \\\"" + outside +
                                                             "/secret.h\\\"\\n.popsection\");\n"},
      {"an #include by absolute path", "#include \"" + outside + "/secret.h\"\n" + TinyCandidate("1.0f")},
  };
  absl::StatusOr<std::unique_ptr<NvccCompiler>> unsandboxed = NvccCompiler::Create(
      {.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch_.path() + "/cache-unsandboxed", .sandbox = std::nullopt});
  ASSERT_TRUE(unsandboxed.ok()) << unsandboxed.status();
  for (const Attack& attack : attacks) {
    absl::StatusOr<CompileResult> open = (*unsandboxed)->Compile(attack.source, options_);
    ASSERT_TRUE(open.ok()) << open.status();
    EXPECT_TRUE(open->ok) << attack.what << " should compile without the sandbox: " << open->log;
    const CompileResult confined = MustCompile(attack.source, options_);
    EXPECT_FALSE(confined.ok) << attack.what << " read a file outside the candidate's folder:\n" << confined.log;
    EXPECT_THAT(confined.log, HasSubstr("secret.h")) << attack.what;
    EXPECT_THAT(confined.log, ::testing::Not(::testing::ContainsRegex("ran without these sandbox layers.*landlock")))
        << attack.what;
  }
}

// Issue 23 item 9: kill -9 of the process that compiles (sparseditto eval, a search) used to leave nvcc
// and cicc running under init and their temporary folder behind. Now the sandbox's parent-death signal
// and PID namespace take the whole compile, and the next NvccCompiler::Create sweeps the folder.
TEST_F(NvccCompilerTest, KillOfTheCompilingProcessTakesTheCompilerAndTheNextStartSweepsItsFolder) {
  for (const SandboxLayerStatus& layer : ProbeSandboxLayers({})) {
    if ((layer.name == "PID namespace" || layer.name == "parent-death signal") && !layer.on) {
      GTEST_SKIP() << layer.name << " is not available here: " << layer.reason;
    }
  }
  // A temporary folder of this test's own: NvccCompiler::Create in any other test process running at
  // the same time (ctest -j) would otherwise sweep the killed compile's folder before we look for it.
  const std::string own_tmp = scratch_.path() + "/tmp";
  ASSERT_TRUE(std::filesystem::create_directory(own_tmp));
  // The sandboxed compiler runs as nobody: it must be able to pass through to its folder.
  std::filesystem::permissions(scratch_.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                                    std::filesystem::perms::others_exec);
  std::filesystem::permissions(own_tmp, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                            std::filesystem::perms::others_exec);
  const char* saved_tmpdir = std::getenv("TMPDIR");
  struct RestoreTmpdir {
    bool had;
    std::string value;
    ~RestoreTmpdir() { had ? setenv("TMPDIR", value.c_str(), 1) : unsetenv("TMPDIR"); }
  } restore_tmpdir{saved_tmpdir != nullptr, saved_tmpdir != nullptr ? saved_tmpdir : ""};
  setenv("TMPDIR", own_tmp.c_str(), 1);
  const pid_t compiling = fork();
  if (compiling == 0) {
    CompileOptions long_bomb = options_;
    long_bomb.timeout_seconds = 120;
    (void)compiler_->Compile(testing::kCompileBombCandidate, long_bomb);
    _exit(0);
  }
  const std::string folders = "sparseditto-nvcc-" + std::to_string(compiling) + "-";
  auto wait_for = [](const std::function<bool()>& condition) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!condition() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return condition();
  };
  auto folder_left = [&] {
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
      if (entry.path().filename().string().rfind(folders, 0) == 0) return true;
    }
    return false;
  };
  const bool started = wait_for([&] { return testing::LiveProcessesMentioning(folders) > 0; });
  kill(compiling, SIGKILL);
  waitpid(compiling, nullptr, 0);
  ASSERT_TRUE(started) << "the compile never started";
  EXPECT_TRUE(wait_for([&] { return testing::LiveProcessesMentioning(folders) == 0; }))
      << testing::LiveProcessesMentioning(folders) << " compiler processes outlived kill -9 of their parent";
  EXPECT_TRUE(folder_left());  // nobody removed it: the process died at once
  ASSERT_TRUE(NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch_.path() + "/cache"}).ok());
  EXPECT_FALSE(folder_left()) << "NvccCompiler::Create did not sweep the dead process's compile folder";
}

TEST_F(NvccCompilerTest, HarnessErrorsAreStatuses) {
  CompileOptions bad_arch = options_;
  bad_arch.archs = {"sm_90; rm -rf /"};
  EXPECT_TRUE(absl::IsInvalidArgument(compiler_->Compile("x", bad_arch).status()));
  CompileOptions no_abi = options_;
  no_abi.abi_include_dir = "";
  EXPECT_TRUE(absl::IsInvalidArgument(compiler_->Compile("x", no_abi).status()));
  CompileOptions wrong_abi = options_;
  wrong_abi.abi_include_dir = scratch_.path();
  EXPECT_TRUE(absl::IsFailedPrecondition(compiler_->Compile("x", wrong_abi).status()));
  EXPECT_TRUE(absl::IsNotFound(NvccCompiler::Create({.nvcc = "/no/such/nvcc", .cache_directory = "x"}).status()));
}

}  // namespace
}  // namespace sparseditto
