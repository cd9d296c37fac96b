#include "evaluator/sandbox/sandbox_probe.h"

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

}  // namespace
}  // namespace sparseditto
