#include "llm_mutator/model_chooser.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::llm {
namespace {

std::vector<ModelChooser::Arm> Arms() { return {{.name = "a", .weight = 3}, {.name = "b", .weight = 1}}; }

std::vector<std::string> Draw(ModelChooser& c, int n, const std::set<std::string>& disabled = {}) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(*c.Choose(disabled));
  return out;
}

TEST(ModelChooserTest, WeightedFollowsWeightsAndIsDeterministic) {
  ModelChooser c1 = *ModelChooser::Create(Arms(), {.seed = 7});
  ModelChooser c2 = *ModelChooser::Create(Arms(), {.seed = 7});
  const std::vector<std::string> d1 = Draw(c1, 4000);
  EXPECT_EQ(d1, Draw(c2, 4000));
  const auto a = std::count(d1.begin(), d1.end(), "a");
  EXPECT_NEAR(static_cast<double>(a) / 4000, 0.75, 0.03);
  ModelChooser c3 = *ModelChooser::Create(Arms(), {.seed = 8});
  EXPECT_NE(d1, Draw(c3, 4000));
}

TEST(ModelChooserTest, DisabledModelsAreSkipped) {
  ModelChooser c = *ModelChooser::Create(Arms(), {.seed = 1});
  for (const std::string& m : Draw(c, 50, {"a"})) EXPECT_EQ(m, "b");
  EXPECT_EQ(c.Choose({"a", "b"}).status().code(), absl::StatusCode::kFailedPrecondition);
  ModelChooser u = *ModelChooser::Create(Arms(), {.policy = ChoicePolicy::kCostAwareUcb});
  for (const std::string& m : Draw(u, 5, {"b"})) EXPECT_EQ(m, "a");
}

// Simulated rewards: UCB settles on the better model; with costs it settles on the cheaper one of
// two equally good models.
TEST(ModelChooserTest, UcbPrefersTheBetterAndTheCheaperModel) {
  struct Case {
    std::string label;
    std::map<std::string, double> reward, cost;
    std::string winner;
  };
  const Case cases[] = {
      {"better", {{"a", 0.1}, {"b", 0.6}}, {{"a", 0}, {"b", 0}}, "b"},
      {"cheaper", {{"a", 0.5}, {"b", 0.5}}, {{"a", 0.4}, {"b", 0.01}}, "b"},
      {"worth_its_price", {{"a", 0.9}, {"b", 0.2}}, {{"a", 0.05}, {"b", 0.0}}, "a"},
  };
  for (const Case& k : cases) {
    ModelChooser c = *ModelChooser::Create(Arms(), {.policy = ChoicePolicy::kCostAwareUcb, .exploration = 0.3});
    std::map<std::string, int> picks;
    for (int i = 0; i < 400; ++i) {
      const std::string m = *c.Choose({});
      ++picks[m];
      ASSERT_TRUE(c.Record(m, k.reward.at(m), k.cost.at(m)).ok());
    }
    EXPECT_GT(picks[k.winner], 300) << k.label;
  }
  ModelChooser c = *ModelChooser::Create(Arms(), {.policy = ChoicePolicy::kCostAwareUcb});
  EXPECT_EQ(*c.Choose({}), "a");  // untried models first, in order
  EXPECT_EQ(c.Record("zzz", 1, 0).code(), absl::StatusCode::kNotFound);
}

TEST(ModelChooserTest, RestoredStateContinuesIdentically) {
  for (ChoicePolicy policy : {ChoicePolicy::kWeighted, ChoicePolicy::kCostAwareUcb}) {
    ModelChooser original = *ModelChooser::Create(Arms(), {.policy = policy, .seed = 3});
    for (int i = 0; i < 17; ++i) {
      const std::string m = *original.Choose({});
      ASSERT_TRUE(original.Record(m, m == "a" ? 0.2 : 0.4, 0.001).ok());
    }
    ModelChooser restored = *ModelChooser::Create(Arms(), {.policy = policy, .seed = 3});
    ASSERT_TRUE(restored.RestoreState(original.SaveState()).ok());
    EXPECT_EQ(restored.SaveState(), original.SaveState());
    for (int i = 0; i < 50; ++i) {
      const std::string a = *original.Choose({});
      ASSERT_EQ(a, *restored.Choose({}));
      ASSERT_TRUE(original.Record(a, 0.3, 0).ok());
      ASSERT_TRUE(restored.Record(a, 0.3, 0).ok());
    }
  }
  ModelChooser c = *ModelChooser::Create(Arms(), {});
  EXPECT_EQ(c.RestoreState("not json").code(), absl::StatusCode::kInvalidArgument);
  ModelChooser ucb = *ModelChooser::Create(Arms(), {.policy = ChoicePolicy::kCostAwareUcb});
  EXPECT_EQ(c.RestoreState(ucb.SaveState()).code(), absl::StatusCode::kInvalidArgument);
  ModelChooser other = *ModelChooser::Create({{.name = "x"}, {.name = "b"}}, {});
  EXPECT_EQ(c.RestoreState(other.SaveState()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ModelChooser::Create({}, {}).ok());
  EXPECT_FALSE(ModelChooser::Create({{.name = "a"}, {.name = "a"}}, {}).ok());
  EXPECT_FALSE(ModelChooser::Create({{.name = "a", .weight = 0}}, {}).ok());
}

TEST(ModelChooserTest, ImprovementReward) {
  auto result = [](v1::FailureCategory f, double fitness) {
    v1::EvalResult r;
    r.set_failure(f);
    r.set_fitness(fitness);
    return r;
  };
  EXPECT_DOUBLE_EQ(ImprovementReward(result(v1::FAILURE_CATEGORY_NONE, 1), result(v1::FAILURE_CATEGORY_WRONG, 0)), 0);
  EXPECT_DOUBLE_EQ(ImprovementReward(result(v1::FAILURE_CATEGORY_COMPILE, 0), result(v1::FAILURE_CATEGORY_SLOWER, 0.5)), 1);
  EXPECT_DOUBLE_EQ(ImprovementReward(result(v1::FAILURE_CATEGORY_NONE, 1), result(v1::FAILURE_CATEGORY_NONE, 1.5)),
                   std::log2(1.5));
  EXPECT_DOUBLE_EQ(ImprovementReward(result(v1::FAILURE_CATEGORY_NONE, 1), result(v1::FAILURE_CATEGORY_NONE, 4)), 1);
  EXPECT_DOUBLE_EQ(ImprovementReward(result(v1::FAILURE_CATEGORY_NONE, 2), result(v1::FAILURE_CATEGORY_NONE, 1)), 0);
}

}  // namespace
}  // namespace sparseditto::llm
