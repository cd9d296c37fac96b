// A task's archs as populations: which device arch serves a target arch, the platform a population's
// jobs carry, the split of a task with several archs, and the refusal of a task no local GPU serves.
#include "task/arch_populations.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

TEST(ArchPopulations, ATargetArchRunsOnTheDeviceArchOfItsBase) {
  const struct {
    std::string arch, device;
  } cases[] = {
      {"sm_80", "sm_80"},   {"sm_86", "sm_86"},   {"sm_89", "sm_89"},      {"sm_90", "sm_90"},
      {"sm_90a", "sm_90"},  // the arch-specific features of the H100/H200 run on sm_90 devices
      {"sm_100f", "sm_100"}, {"sm_100a", "sm_100"}, {"sm_120", "sm_120"}, {"", ""},
      {"sm_a", "sm_a"},     // no digit before the 'a': not a suffix
  };
  for (const auto& c : cases) EXPECT_EQ(DeviceArchOf(c.arch), c.device) << c.arch;
}

TEST(ArchPopulations, AJobsPlatformIsItsDeviceArchAndGpuModel) {
  const struct {
    std::string arch, gpu, platform;
  } cases[] = {
      {"sm_80", "NVIDIA A100-SXM4-80GB", "sm_80/NVIDIA A100-SXM4-80GB"},
      {"sm_90", "NVIDIA H200", "sm_90/NVIDIA H200"},
      {"sm_90a", "NVIDIA H200", "sm_90/NVIDIA H200"},  // an sm_90a population is served by sm_90 workers
      {"sm_90", "NVIDIA H100 80GB HBM3", "sm_90/NVIDIA H100 80GB HBM3"},
      {"sm_90", "", "sm_90/"},  // a worker that could not read its GPU's name: a model of its own
  };
  for (const auto& c : cases) EXPECT_EQ(EvaluationPlatform(c.arch, c.gpu), c.platform) << c.arch << " " << c.gpu;
  EXPECT_NE(EvaluationPlatform("sm_90", "NVIDIA H100 80GB HBM3"), EvaluationPlatform("sm_90", "NVIDIA H200"));
  EXPECT_EQ(DescribePlatform("sm_90/NVIDIA H200"), "NVIDIA H200 (sm_90)");
  EXPECT_EQ(DescribePlatform("sm_80/"), "an unnamed GPU (sm_80)");
}

TEST(ArchPopulations, ArchNames) {
  for (const char* good : {"sm_80", "sm_90a", "sm_100f", "sm_120"}) EXPECT_TRUE(IsArchName(good)) << good;
  for (const char* bad : {"", "sm_", "sm_a", "sm_90ab", "compute_90", "gpu0", "sm_9x"}) EXPECT_FALSE(IsArchName(bad)) << bad;
}

v1::Task TaskOf(const std::string& name, const std::vector<std::string>& archs) {
  v1::Task t;
  t.set_name(name);
  t.set_seed(5);
  t.mutable_budget()->set_max_evaluations(40);
  for (const std::string& a : archs) t.add_arch(a);
  return t;
}

TEST(ArchPopulations, ATaskWithSeveralArchsIsOnePopulationPerArchInItsOrder) {
  const std::vector<v1::Task> split =
      SplitByArch({TaskOf("one", {"sm_90"}), TaskOf("two", {"sm_80", "sm_90a"}), TaskOf("none", {})});
  std::vector<std::string> names, archs;
  for (const v1::Task& t : split) {
    names.push_back(t.name());
    archs.push_back(t.arch().empty() ? "-" : t.arch(0));
    EXPECT_LE(t.arch_size(), 1) << t.name();
    EXPECT_EQ(t.seed(), 5u) << t.name();
    EXPECT_EQ(t.budget().max_evaluations(), 40) << t.name() << ": the budget is each population's";
  }
  EXPECT_THAT(names, ::testing::ElementsAre("one", "two@sm_80", "two@sm_90a", "none"));
  EXPECT_THAT(archs, ::testing::ElementsAre("sm_90", "sm_80", "sm_90a", "-"));
  const std::vector<v1::Task> again = SplitByArch(split);
  ASSERT_EQ(again.size(), split.size()) << "splitting twice changes nothing";
  for (size_t i = 0; i < split.size(); ++i) EXPECT_EQ(again[i].name(), split[i].name());
}

TEST(ArchPopulations, ATaskNoArchOfWhichTheDeviceServesIsRefusedNamingTaskAndArchs) {
  const struct {
    std::vector<std::string> task_archs;
    std::string device;
    bool served;
  } cases[] = {
      {{"sm_90"}, "sm_90", true},         {{"sm_90a"}, "sm_90", true},  {{"sm_80"}, "sm_80", true},
      {{}, "sm_80", true},                {{"sm_80", "sm_90"}, "sm_90", true},
      {{"sm_80"}, "sm_90", false},        {{"sm_90"}, "sm_80", false},  {{"sm_90a"}, "sm_89", false},
      {{"sm_86"}, "sm_80", false},  // the same major: still another GPU, never timed in its place
  };
  for (const auto& c : cases) {
    v1::Task task = TaskOf("spmm@x", c.task_archs);
    SCOPED_TRACE(task.DebugString() + " on " + c.device);
    EXPECT_EQ(DeviceServesTask(task, c.device), c.served);
    const absl::Status s = CheckDeviceServesTask(task, c.device, "NVIDIA H200");
    EXPECT_EQ(s.ok(), c.served) << s;
    if (!c.served) {
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(std::string(s.message()), HasSubstr("task spmm@x targets " + c.task_archs[0]));
      EXPECT_THAT(std::string(s.message()), HasSubstr("(NVIDIA H200) is " + c.device + ": not searched here"));
      EXPECT_THAT(std::string(s.message()), HasSubstr("--name spmm@x"));
    }
  }
}

}  // namespace
}  // namespace sparseditto
