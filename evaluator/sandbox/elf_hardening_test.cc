#include "evaluator/sandbox/elf_hardening.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/subprocess.h"
#include "evaluator/sandbox/sandbox_testing.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using sandbox_testing::TempFolder;

// Small programs linked with each flag set by the system's C compiler, read back.
TEST(ElfHardeningTest, ReadsRelroAndBindNowAsLinked) {
  TempFolder dir;
  ASSERT_FALSE(dir.path.empty());
  std::ofstream(dir.path + "/main.c") << "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n";
  struct Case {
    const char* flags;
    bool relro;
    bool bind_now;
  };
  const std::vector<Case> cases = {
      {"-Wl,-z,relro,-z,now", true, true},
      {"-Wl,-z,relro,-z,lazy", true, false},
      {"-Wl,-z,norelro,-z,lazy", false, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string out = dir.path + "/prog" + std::to_string(i);
    SpawnOptions options;
    options.argv = {"cc", "-o", out, dir.path + "/main.c", cases[i].flags};
    options.merge_stderr_into_stdout = true;
    absl::StatusOr<CommandResult> built = RunCommand(options, 60);
    if (!built.ok()) GTEST_SKIP() << "no C compiler: " << built.status();
    ASSERT_TRUE(built->outcome.success()) << built->stdout_output.bytes;
    absl::StatusOr<ElfHardening> elf = ReadElfHardening(out);
    ASSERT_TRUE(elf.ok()) << elf.status();
    EXPECT_EQ(elf->relro, cases[i].relro) << cases[i].flags;
    EXPECT_EQ(elf->bind_now, cases[i].bind_now) << cases[i].flags;
    EXPECT_EQ(elf->full_relro(), cases[i].relro && cases[i].bind_now) << elf->ToString();
  }
}

TEST(ElfHardeningTest, NotAnElfIsAnError) {
  TempFolder dir;
  std::ofstream(dir.path + "/text") << "not an ELF file at all";
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadElfHardening(dir.path + "/text").status()));
  EXPECT_TRUE(absl::IsNotFound(ReadElfHardening(dir.path + "/missing").status()));
}

#ifdef SPARSEDITTO_RUNNER
// The runner that loads candidates is linked with full RELRO (evaluator/runner/CMakeLists.txt).
TEST(ElfHardeningTest, TheRunnerHasFullRelro) {
  if (!fs::exists(SPARSEDITTO_RUNNER)) GTEST_SKIP() << SPARSEDITTO_RUNNER << " is not built";
  absl::StatusOr<ElfHardening> elf = ReadElfHardening(SPARSEDITTO_RUNNER);
  ASSERT_TRUE(elf.ok()) << elf.status();
  EXPECT_TRUE(elf->full_relro()) << SPARSEDITTO_RUNNER << ": " << elf->ToString();
}
#endif

}  // namespace
}  // namespace sparseditto
