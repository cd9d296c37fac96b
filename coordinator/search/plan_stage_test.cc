// ProposePlan's archs: a plan builds for the task's archs that every variant builds for, by the seeds'
// rule (kernels/seed_library.h ArchBuildsFor: a variant declared for sm_90 builds for sm_90a). Before,
// the variants' declared archs were intersected as strings, so a 2:4 plan of nm24_stream_sp ([sm_90a])
// and dense_cublaslt ([sm_80, sm_90]) was refused as "share no arch" on an sm_90a task.
#include "coordinator/search/plan_stage.h"

#include <fstream>
#include <sstream>

#include "coordinator/testing/timed_result.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

std::string SeedSource(const std::string& name) {
  std::ifstream in(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds/" + name + ".cu");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

v1::Candidate Candidate(const std::string& id, const std::string& seed, const std::vector<std::string>& archs) {
  v1::Candidate c;
  c.set_id(id);
  c.set_seed_name(seed);
  c.set_source(SeedSource(seed));
  for (const std::string& a : archs) c.add_archs(a);
  return c;
}

using testing::TimedResult;

struct Case {
  std::string what;
  std::vector<std::string> task_archs, small_n_archs, large_n_archs;
  std::vector<std::string> want_archs;  // of the plan; empty with want_refused: no plan
  bool want_refused = false;
};

TEST(PlanStageTest, ThePlanBuildsForTheTaskArchsEveryVariantBuildsFor) {
  const std::vector<Case> cases = {
      {"base arch and arch-specific variants on an sm_90a task", {"sm_90a"}, {"sm_80", "sm_90"}, {"sm_90a"}, {"sm_90a"}},
      {"both for the base arch", {"sm_90a"}, {"sm_80", "sm_90"}, {"sm_90"}, {"sm_90a"}},
      {"an Ampere and a Hopper task arch", {"sm_80", "sm_90a"}, {"sm_80", "sm_90"}, {"sm_90a"}, {"sm_90a"}},
      {"a variant for Ampere only", {"sm_90a"}, {"sm_80"}, {"sm_90a"}, {}, true},
      {"sm_90a does not build for sm_90", {"sm_90"}, {"sm_90"}, {"sm_90a"}, {}, true},
      {"no variant names an arch", {"sm_90a"}, {}, {}, {}},
      {"one names none, the other its own", {"sm_80", "sm_90a"}, {}, {"sm_90a"}, {"sm_90a"}},
  };
  for (const Case& c : cases) {
    v1::Task task;
    task.set_name("t");
    for (const std::string& a : c.task_archs) task.add_arch(a);
    task.add_n(16);
    task.add_n(2048);
    const std::map<std::string, v1::Candidate> candidates = {
        {"t.000001", Candidate("t.000001", "csr_warp_per_row", c.small_n_archs)},
        {"t.000002", Candidate("t.000002", "dense_cublas", c.large_n_archs)}};
    const std::vector<v1::EvalResult> results = {TimedResult("t.000001", 1.0, {{16, 0.5}, {2048, 4.0}}),
                                                 TimedResult("t.000002", 1.0, {{16, 1.0}, {2048, 0.5}})};
    std::string why;
    absl::StatusOr<std::optional<PlanProposal>> plan = ProposePlan(task, candidates, results, 1.0, &why);
    ASSERT_TRUE(plan.ok()) << c.what << ": " << plan.status();
    if (c.want_refused) {
      EXPECT_FALSE(plan->has_value()) << c.what;
      EXPECT_NE(why.find("share no arch"), std::string::npos) << c.what << ": " << why;
      continue;
    }
    ASSERT_TRUE(plan->has_value()) << c.what << ": " << why;
    const v1::Candidate& made = (*plan)->candidate;
    EXPECT_EQ(std::vector<std::string>(made.archs().begin(), made.archs().end()), c.want_archs) << c.what;
    EXPECT_EQ(made.parent_ids_size(), 2) << c.what;
  }
}

}  // namespace
}  // namespace sparseditto
