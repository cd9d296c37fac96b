// `sparseditto doctor` end to end: every sandbox layer listed with on/off and a reason, exit 0 exactly
// when every needed layer is on, and the runner's RELRO read from the binary given.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/shell_command.h"

namespace {

namespace fs = std::filesystem;
using sparseditto::testing_support::RunShell;
using sparseditto::testing_support::ShellOutcome;

class DoctorCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string path = (fs::temp_directory_path() / "sd_doctor_XXXXXX").string();
    ASSERT_NE(mkdtemp(path.data()), nullptr);
    dir_ = path;
  }
  void TearDown() override { fs::remove_all(dir_); }
  ShellOutcome Run(const std::string& args) { return RunShell(std::string("'") + SPARSEDITTO_BINARY + "' doctor " + args, dir_); }
  fs::path dir_;
};

TEST_F(DoctorCliTest, JsonListsEveryLayerAndTheExitCodeFollowsTheNeededOnes) {
  struct Case {
    std::string runner;
    bool relro_on;  // the runner built here has full RELRO; a missing file is off
  };
  const std::vector<Case> cases = {{SPARSEDITTO_RUNNER, true}, {(dir_ / "no-such-runner").string(), false}};
  for (const Case& c : cases) {
    if (c.relro_on && !fs::exists(c.runner)) continue;  // the runner is not built in this tree
    const ShellOutcome r = Run("--json --runner '" + c.runner + "'");
    const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(out.is_object()) << r.out << r.err;
    bool all_needed_on = true;
    bool saw_relro = false;
    for (const nlohmann::json& layer : out["layers"]) {
      EXPECT_FALSE(layer["reason"].get<std::string>().empty()) << layer.dump();
      if (layer["needed"].get<bool>() && !layer["on"].get<bool>()) all_needed_on = false;
      if (layer["name"] == "full RELRO of the runner") {
        saw_relro = true;
        EXPECT_EQ(layer["on"].get<bool>(), c.relro_on) << layer.dump();
      }
    }
    EXPECT_TRUE(saw_relro);
    EXPECT_EQ(out["layers"].size(), 11u);
    EXPECT_EQ(out["ready"].get<bool>(), all_needed_on);
    EXPECT_EQ(r.exit_code, all_needed_on ? 0 : 1) << r.out;
  }
}

TEST_F(DoctorCliTest, TextNamesEachLayerOnOrOff) {
  const ShellOutcome r = Run("--runner /nonexistent");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // the RELRO check cannot pass without a runner
  for (const char* name : {"PID namespace", "network namespace", "landlock", "seccomp", "no_new_privs", "uid drop",
                           "full RELRO of the runner"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << " missing from:\n" << r.out;
  }
  EXPECT_NE(r.out.find("untrusted candidates must not run here"), std::string::npos) << r.out;
}

}  // namespace
