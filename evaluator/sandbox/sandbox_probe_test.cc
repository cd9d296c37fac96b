#include "evaluator/sandbox/sandbox_probe.h"

#include <cstdlib>
#include <set>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

TEST(SandboxProbeTest, EveryLayerIsReportedWithAReason) {
  const std::vector<SandboxLayerStatus> layers = ProbeSandboxLayers({});
  std::set<std::string> names;
  for (const SandboxLayerStatus& layer : layers) {
    names.insert(layer.name);
    EXPECT_NE(layer.reason, "") << layer.name;
    // The test log shows what this machine offers (CI: which layers the tests could try).
    std::cout << (layer.on ? "on   " : "off  ") << (layer.needed ? "needed  " : "optional") << "  " << layer.name
              << ": " << layer.reason << "\n";
  }
  const std::set<std::string> expected = {"user namespace", "PID namespace", "network namespace", "IPC namespace",
                                          "uid drop", "parent-death signal", "no_new_privs", "landlock", "seccomp",
                                          "cgroup v2 delegation", "full RELRO of the runner"};
  EXPECT_EQ(names, expected);
  // Without a runner path the RELRO check is off, so not every needed layer is on.
  EXPECT_FALSE(AllNeededLayersOn(layers));
}

TEST(SandboxProbeTest, AllNeededLayersOnLooksOnlyAtNeededOnes) {
  const std::vector<std::pair<std::vector<SandboxLayerStatus>, bool>> cases = {
      {{}, true},
      {{{"a", true, true, "r"}, {"b", false, false, "r"}}, true},
      {{{"a", true, true, "r"}, {"b", false, true, "r"}}, false},
  };
  for (const auto& [layers, expected] : cases) EXPECT_EQ(AllNeededLayersOn(layers), expected);
}

TEST(SandboxProbeTest, CheckNeededLayersRefusesNamingTheMissingOnesUnlessAllowed) {
  const std::vector<SandboxLayerStatus> missing = {
      {"landlock", false, true, "landlock_create_ruleset: ENOSYS"}, {"cgroup", false, false, "no delegation"},
      {"seccomp", true, true, "loads"}};
  const absl::Status refused = CheckNeededLayers(missing, false);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_NE(refused.message().find("landlock (landlock_create_ruleset: ENOSYS)"), std::string::npos) << refused;
  EXPECT_EQ(refused.message().find("cgroup"), std::string::npos) << "an optional layer is not a reason to refuse";
  EXPECT_NE(refused.message().find("SPARSEDITTO_ALLOW_MISSING_LAYERS=1"), std::string::npos) << refused;
  EXPECT_TRUE(CheckNeededLayers(missing, true).ok());
  EXPECT_TRUE(CheckNeededLayers({{"seccomp", true, true, "loads"}}, false).ok());
  EXPECT_EQ(DescribeMissingLayers({{"seccomp", true, true, "loads"}}), "");
}

TEST(SandboxProbeTest, MissingLayersAreAllowedOnlyByTheExactOptOut) {
  const char* saved = std::getenv("SPARSEDITTO_ALLOW_MISSING_LAYERS");
  const std::string before = saved != nullptr ? saved : "";
  const std::vector<std::pair<const char*, bool>> cases = {{nullptr, false}, {"", false}, {"0", false},
                                                           {"yes", false}, {"1", true}};
  for (const auto& [value, allowed] : cases) {
    if (value == nullptr) unsetenv("SPARSEDITTO_ALLOW_MISSING_LAYERS");
    else setenv("SPARSEDITTO_ALLOW_MISSING_LAYERS", value, 1);
    EXPECT_EQ(MissingLayersAllowed(), allowed) << (value ? value : "unset");
  }
  if (saved != nullptr) setenv("SPARSEDITTO_ALLOW_MISSING_LAYERS", before.c_str(), 1);
  else unsetenv("SPARSEDITTO_ALLOW_MISSING_LAYERS");
}

}  // namespace
}  // namespace sparseditto
