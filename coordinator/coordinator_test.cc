#include "coordinator/coordinator.h"

#include <functional>
#include <map>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "coordinator/testing/test_util.h"

namespace sparseditto {
namespace {

using testing::MakeCandidate;
using testing::MakeResult;

v1::Task MakeTask() {
  v1::Task task;
  task.set_name("t");
  task.set_seed(11);
  task.mutable_budget()->set_max_evaluations(100);
  return task;
}

CoordinatorOptions With(const std::function<void(CoordinatorOptions&)>& edit) {
  CoordinatorOptions options;
  edit(options);
  return options;
}

// Registers and reports a candidate; returns the outcome.
ReportOutcome Feed(Coordinator& c, const v1::Candidate& candidate, double fitness,
                   v1::FailureCategory failure = v1::FAILURE_CATEGORY_NONE) {
  auto dup = c.RegisterCandidate(candidate);
  EXPECT_TRUE(dup.ok() && !dup->has_value()) << candidate.id();
  auto outcome = c.ReportResult(candidate, MakeResult(candidate.id(), fitness, failure, 40), {.wall_seconds = 1});
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  return outcome.ok() ? *outcome : ReportOutcome{};
}

TEST(CoordinatorOptionsTest, ValidateRefusesBadValues) {
  struct Case { const char* name; std::function<void(CoordinatorOptions&)> edit; const char* want; };
  const Case cases[] = {
      {"islands", [](auto& o) { o.num_islands = 0; }, "num_islands"},
      {"capacity", [](auto& o) { o.island_capacity = 0; }, "island_capacity"},
      {"generation", [](auto& o) { o.evaluations_per_generation = 0; }, "evaluations_per_generation"},
      {"interval", [](auto& o) { o.migration_interval = 0; }, "migration_interval"},
      {"fraction", [](auto& o) { o.migration_fraction = 1.5; }, "migration_fraction"},
      {"exploration", [](auto& o) { o.selection.exploration_ratio = -0.1; }, "exploration_ratio"},
      {"alpha", [](auto& o) { o.selection.child_penalty_alpha = -1; }, "child_penalty_alpha"},
      {"crossover", [](auto& o) { o.crossover_probability = 2; }, "crossover_probability"},
      {"inspirations", [](auto& o) { o.inspiration_top_k = -1; }, "inspiration"},
      {"features", [](auto& o) { o.features.push_back(FeatureDimension{}); }, "'seed' given twice"},
  };
  for (const Case& c : cases) {
    CoordinatorOptions options;
    c.edit(options);
    auto coordinator = Coordinator::Create(MakeTask(), options);
    ASSERT_FALSE(coordinator.ok()) << c.name;
    EXPECT_NE(coordinator.status().message().find(c.want), std::string::npos) << coordinator.status();
  }
  EXPECT_TRUE(CoordinatorOptions().Validate().ok());
}

TEST(CoordinatorTest, IdsIslandsAndTheFirstPlan) {
  auto c = Coordinator::Create(MakeTask(), With([](auto& o) { o.num_islands = 3; }));
  ASSERT_TRUE(c.ok()) << c.status();
  auto none = c->PlanMutation();
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c->step(), 0u) << "no step used before a correct candidate exists";
  for (size_t i = 0; i < 4; ++i) {
    v1::Candidate seed = MakeCandidate("", "s" + std::to_string(i));
    c->StampSeed(i, &seed);
    EXPECT_EQ(seed.id(), fmt::format("t.{:06d}", i + 1));
    EXPECT_EQ(seed.island(), static_cast<int>(i % 3));
    seed.set_source_hash("h" + seed.id());
    Feed(*c, seed, 1.0 + i);
  }
  auto plan = c->PlanMutation();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->step, 0u);
  EXPECT_EQ(plan->island, 0);
  EXPECT_EQ(plan->mutator, "builtin");
  EXPECT_TRUE(plan->op == v1::MUTATION_OPERATOR_TUNE || plan->op == v1::MUTATION_OPERATOR_TUNE_CROSSOVER);
  EXPECT_TRUE(plan->inspiration_ids.empty()) << "the built-in mutator needs none";
  EXPECT_EQ(c->children().at(plan->parent_id), 1);
  v1::Candidate child = MakeCandidate("", "s0");
  c->StampChild(*plan, &child);
  EXPECT_EQ(child.id(), "t.000005");
  EXPECT_EQ(child.island(), 0);
}

TEST(CoordinatorTest, DuplicatesAreNeverEvaluated) {
  auto c = Coordinator::Create(MakeTask(), {});
  ASSERT_TRUE(c.ok());
  const v1::Candidate a = MakeCandidate("t.000001", "s");
  Feed(*c, a, 1.0);
  v1::Candidate b = MakeCandidate("t.000002", "s");
  b.set_source_hash(a.source_hash());
  auto dup = c->RegisterCandidate(b);
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(dup->value_or(""), "t.000001");
  EXPECT_EQ(c->spent().duplicates(), 1);
  auto reported = c->ReportResult(b, MakeResult(b.id(), 2.0), {});
  EXPECT_EQ(reported.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(reported.status().message().find("duplicates 't.000001'"), std::string::npos) << reported.status();
  auto twice = c->ReportResult(a, MakeResult(a.id(), 1.0), {});
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kFailedPrecondition) << "already evaluated";
  const v1::Candidate unregistered = MakeCandidate("t.000003", "s");
  EXPECT_EQ(c->ReportResult(unregistered, MakeResult("t.000003", 1.0), {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c->spent().evaluations(), 1);
}

TEST(CoordinatorTest, RefusesForeignInput) {
  auto c = Coordinator::Create(MakeTask(), With([](auto& o) { o.num_islands = 2; }));
  ASSERT_TRUE(c.ok());
  v1::Candidate other_task = MakeCandidate("x", "s");
  other_task.set_task_name("u");
  EXPECT_EQ(c->RegisterCandidate(other_task).status().code(), absl::StatusCode::kInvalidArgument);
  v1::Candidate no_hash = MakeCandidate("x", "s");
  no_hash.clear_source_hash();
  EXPECT_EQ(c->RegisterCandidate(no_hash).status().code(), absl::StatusCode::kInvalidArgument);
  v1::Candidate far = MakeCandidate("y", "s", 1, /*island=*/2);
  ASSERT_TRUE(c->RegisterCandidate(far).ok());
  EXPECT_EQ(c->ReportResult(far, MakeResult("y", 1), {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c->ReportResult(MakeCandidate("y", "s"), MakeResult("z", 1), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c->spent().evaluations(), 0) << "nothing counted for refused input";
}

TEST(CoordinatorTest, GenerationsMigrateOnSchedule) {
  auto c = Coordinator::Create(
      MakeTask(), With([](auto& o) {
        o.num_islands = 2;
        o.evaluations_per_generation = 2;
        o.migration_interval = 2;
        o.migration_fraction = 1.0;
      }));
  ASSERT_TRUE(c.ok());
  std::vector<size_t> migrations_at;
  for (int i = 0; i < 8; ++i) {
    const v1::Candidate cand = MakeCandidate(fmt::format("t.{:06d}", i + 1), "s", 1, i % 2);
    ReportOutcome out = Feed(*c, cand, 1.0 + i);
    if (!out.migrations.empty()) migrations_at.push_back(i + 1);
  }
  EXPECT_EQ(migrations_at, (std::vector<size_t>{4, 8}));
  EXPECT_EQ(c->generation(), 4);
  EXPECT_EQ(c->islands().members(0).size(), 8u);
}

TEST(CoordinatorTest, MutatorsByWeightAndInspirationsForLlms) {
  v1::Task task = MakeTask();
  v1::MutatorSpec* builtin = task.add_mutators();
  builtin->set_name("tuner");
  builtin->set_kind(v1::MUTATOR_KIND_BUILTIN);
  builtin->set_weight(1);
  v1::MutatorSpec* llm = task.add_mutators();
  llm->set_name("claude");
  llm->set_kind(v1::MUTATOR_KIND_ANTHROPIC);
  llm->set_weight(3);
  auto c = Coordinator::Create(task, With([](auto& o) { o.num_islands = 1; }));
  ASSERT_TRUE(c.ok());
  for (int i = 0; i < 5; ++i) Feed(*c, MakeCandidate(fmt::format("t.{:06d}", i + 1), "s" + std::to_string(i)), 1 + i);
  std::map<std::string, int> by_mutator;
  for (int i = 0; i < 400; ++i) {
    auto plan = c->PlanMutation();
    ASSERT_TRUE(plan.ok()) << plan.status();
    ++by_mutator[plan->mutator];
    if (plan->mutator == "claude") {
      EXPECT_EQ(plan->mutator_kind, v1::MUTATOR_KIND_ANTHROPIC);
      EXPECT_EQ(plan->op, v1::MUTATION_OPERATOR_LLM_DIFF) << "no two candidates share a seed";
      EXPECT_EQ(plan->inspiration_ids.size(), 4u) << "3 top + 2 diverse of the 4 other elites";
    }
  }
  EXPECT_NEAR(by_mutator["claude"], 300, 30);
}

TEST(CoordinatorTest, NoTunableParentUsesTheStepAndCountsAsWasted) {
  auto c = Coordinator::Create(MakeTask(), With([](auto& o) { o.max_wasted_in_a_row = 3; }));
  ASSERT_TRUE(c.ok());
  Feed(*c, MakeCandidate("t.000001", "dense", /*movable=*/0), 1.0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c->PlanMutation().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c->step(), 3u);
  EXPECT_EQ(c->CheckStop(), StopReason::kExhausted);
  EXPECT_NE(c->ExplainStop().find("3 proposals in a row"), std::string::npos) << c->ExplainStop();
}

TEST(CoordinatorTest, RestoreRefusesForeignStates) {
  auto c = Coordinator::Create(MakeTask(), {});
  ASSERT_TRUE(c.ok());
  Feed(*c, MakeCandidate("t.000001", "s"), 1.0);
  const coordinator::SearchState state = c->SaveState();
  struct Case { const char* name; std::function<void(v1::Task&, CoordinatorOptions&, coordinator::SearchState&)> edit;
                absl::StatusCode code; };
  const Case cases[] = {
      {"same", [](auto&, auto&, auto&) {}, absl::StatusCode::kOk},
      {"other_options", [](auto&, auto& o, auto&) { o.num_islands = 5; }, absl::StatusCode::kFailedPrecondition},
      {"other_task", [](auto& t, auto&, auto&) { t.set_name("u"); }, absl::StatusCode::kFailedPrecondition},
      {"other_seed", [](auto& t, auto&, auto&) { t.set_seed(12); }, absl::StatusCode::kFailedPrecondition},
      {"format", [](auto&, auto&, auto& s) { s.set_format_version(2); }, absl::StatusCode::kInvalidArgument},
      {"repeated_child", [](auto&, auto&, auto& s) { s.add_children()->set_candidate_id("a");
                                                      s.add_children()->set_candidate_id("a"); },
       absl::StatusCode::kInvalidArgument},
      {"repeated_hash", [](auto&, auto&, auto& s) { *s.add_hashes() = s.hashes(0); }, absl::StatusCode::kInvalidArgument},
      {"bad_options", [](auto&, auto& o, auto&) { o.num_islands = 0; }, absl::StatusCode::kInvalidArgument},
  };
  for (const Case& k : cases) {
    v1::Task task = MakeTask();
    CoordinatorOptions options;
    coordinator::SearchState s = state;
    k.edit(task, options, s);
    EXPECT_EQ(Coordinator::Restore(task, options, s).status().code(), k.code) << k.name;
  }
  EXPECT_EQ(ParseSearchState("\xff\xff garbage").status().code(), absl::StatusCode::kInvalidArgument);
  auto parsed = ParseSearchState(state.SerializeAsString());
  ASSERT_TRUE(parsed.ok());
  auto restored = Coordinator::Restore(MakeTask(), {}, *parsed);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(restored->SaveState().SerializeAsString(), state.SerializeAsString());
}

TEST(CoordinatorTest, ExhaustedSpacesStopBuiltinPlansAndThenTheSearch) {
  struct Case { std::string name; bool with_llm; double llm_weight; StopReason want; };
  for (const Case& c : {Case{"built-in only", false, 0, StopReason::kExhausted},
                        Case{"an LLM mutator still has work", true, 1, StopReason::kNone},
                        Case{"an LLM mutator of weight 0 gets no plans", true, 0, StopReason::kExhausted}}) {
    v1::Task task = MakeTask();
    if (c.with_llm) {
      v1::MutatorSpec* builtin = task.add_mutators();
      builtin->set_kind(v1::MUTATOR_KIND_BUILTIN);
      builtin->set_weight(1);
      v1::MutatorSpec* llm = task.add_mutators();
      llm->set_kind(v1::MUTATOR_KIND_ANTHROPIC);
      llm->set_weight(c.llm_weight);
    }
    auto coordinator = Coordinator::Create(task, {});
    ASSERT_TRUE(coordinator.ok());
    Coordinator& co = *coordinator;
    co.SetDeviceFacts({.sm_count = 132, .arch = 90});
    for (const auto& [id, seed] : std::vector<std::pair<std::string, std::string>>{{"t.1", "a"}, {"t.2", "a"}, {"t.3", "b"}}) {
      v1::Candidate cand = MakeCandidate(id, seed);
      co.StampSeed(0, &cand);
      cand.set_id(id);
      Feed(co, cand, 1);
    }
    EXPECT_TRUE(co.KnowsSource("hash-t.1"));
    EXPECT_FALSE(co.KnowsSource("hash-t.9"));
    coordinator::ExhaustedSpace a;
    a.set_space_key("key-a");
    a.set_seed_name("a");
    a.set_points(4);
    EXPECT_TRUE(co.MarkSpaceExhausted(a, {"t.1", "t.2"}));
    EXPECT_FALSE(co.MarkSpaceExhausted(a, {"t.1", "t.2"})) << "reported twice";
    EXPECT_EQ(co.CheckStop(), StopReason::kNone) << c.name << ": seed b is left";
    // Built-in plans now only come from seed b.
    for (int i = 0; i < 20 && c.llm_weight == 0; ++i) {
      auto plan = co.PlanMutation();
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->parent_id, "t.3");
    }
    // A saved state keeps the spaces and the facts.
    auto restored = Coordinator::Restore(task, {}, co.SaveState());
    ASSERT_TRUE(restored.ok()) << restored.status();
    ASSERT_EQ(restored->exhausted_spaces().size(), 1u);
    EXPECT_EQ(restored->exhausted_spaces()[0].seed_name(), "a");
    EXPECT_EQ(restored->device_facts(), (DeviceFacts{.sm_count = 132, .arch = 90}));
    EXPECT_EQ(restored->SaveState().SerializeAsString(), co.SaveState().SerializeAsString());
    coordinator::ExhaustedSpace b;
    b.set_space_key("key-b");
    b.set_seed_name("b");
    b.set_points(2);
    EXPECT_TRUE(co.MarkSpaceExhausted(b, {"t.3"}));
    EXPECT_EQ(co.CheckStop(), c.want) << c.name;
    if (c.want == StopReason::kNone) {  // the same search without an LLM to serve its plans stops
      coordinator::ExhaustedSpace again = b;
      again.set_space_key("key-c");
      EXPECT_TRUE(co.MarkSpaceExhausted(again, {}, [](v1::MutatorKind) { return false; }));
      EXPECT_EQ(co.CheckStop(), StopReason::kExhausted);
    }
    if (c.want == StopReason::kExhausted) {
      EXPECT_NE(co.ExplainStop().find("every tunable space"), std::string::npos) << co.ExplainStop();
    }
  }
}

}  // namespace
}  // namespace sparseditto
