// The confirmation stage: rounds interleave the subjects behind fresh baselines, the figures are
// medians and ranges over the correct rounds, and the subjects of a real (fake-evaluated) search are
// its best and its best seed.
#include "coordinator/search/confirmation.h"

#include <filesystem>
#include <map>

#include "coordinator/search/search_loop.h"
#include "coordinator/testing/search_fixture.h"
#include "gtest/gtest.h"
#include "kernels/seed_library.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

// Scores by a table of (candidate id -> fitness per round, 0 = wrong); records the order of calls.
class ScriptedEvaluator : public CandidateEvaluator {
 public:
  std::map<std::string, std::vector<double>> fitness;
  std::vector<std::string> calls;  // "B" for a re-timing of the baselines, else the candidate id
  int round = -1;
  absl::Status retime_error;

  absl::Status RetimeBaselines(const v1::Task&) override {
    if (!retime_error.ok()) return retime_error;
    ++round;
    calls.push_back("B");
    return absl::OkStatus();
  }
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    calls.push_back(candidate.id());
    v1::EvalResult r;
    r.set_candidate_id(candidate.id());
    const double f = fitness[candidate.id()].at(round);
    r.set_stage_reached(v1::EVAL_STAGE_DONE);
    if (f > 0) {
      r.set_fitness(f);
    } else {
      r.set_failure(v1::FAILURE_CATEGORY_WRONG);
      r.set_failure_detail("C differs");
    }
    return r;
  }
};

ConfirmationSubject Subject(const std::string& role, const std::string& id) {
  ConfirmationSubject s{role, {}};
  s.candidate.set_id(id);
  return s;
}

TEST(ConfirmationTest, RoundsInterleaveBehindFreshBaselinesAndReportMediansAndRanges) {
  ScriptedEvaluator e;
  e.fitness = {{"plan", {1.10, 0.0, 1.30}}, {"seed", {1.00, 1.05, 1.00}}};
  auto c = ConfirmSubjects(e, v1::Task(), {Subject("result", "plan"), Subject("best seed", "seed")}, {.rounds = 3}, 9);
  ASSERT_TRUE(c.ok()) << c.status();
  // Baselines first in every round; the order rotates.
  EXPECT_EQ(e.calls, (std::vector<std::string>{"B", "plan", "seed", "B", "seed", "plan", "B", "plan", "seed"}));
  const ConfirmedCandidate& plan = c->subjects[0];
  EXPECT_EQ(plan.rounds_correct, 2);
  EXPECT_DOUBLE_EQ(plan.fitness_median, 1.20);  // of 1.10 and 1.30: the wrong round does not count
  EXPECT_DOUBLE_EQ(plan.fitness_low, 1.10);
  EXPECT_DOUBLE_EQ(plan.fitness_high, 1.30);
  EXPECT_NE(plan.failure.find("round 2: FAILURE_CATEGORY_WRONG: C differs"), std::string::npos) << plan.failure;
  EXPECT_DOUBLE_EQ(c->subjects[1].fitness_median, 1.00);
  // The ratio only over rounds where both were correct: 1.10 and 1.30.
  EXPECT_EQ(c->ratio_rounds, 2);
  EXPECT_DOUBLE_EQ(c->ratio_low, 1.10);
  EXPECT_DOUBLE_EQ(c->ratio_high, 1.30);
  const std::string text = DescribeConfirmation(*c);
  EXPECT_NE(text.find("result plan: fitness 1.200 [1.100, 1.300], correct in 2 of 3 rounds"), std::string::npos) << text;
  EXPECT_NE(text.find("result / best seed: 1.200 [1.100, 1.300] over 2 rounds"), std::string::npos) << text;
}

TEST(ConfirmationTest, BadArgumentsAndABaselineErrorAreErrors) {
  ScriptedEvaluator e;
  e.fitness = {{"a", {1.0}}};
  EXPECT_TRUE(absl::IsInvalidArgument(ConfirmSubjects(e, v1::Task(), {}, {}, 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ConfirmSubjects(e, v1::Task(), {Subject("result", "a")}, {.rounds = 0}, 1).status()));
  e.retime_error = absl::UnavailableError("the runner died");
  const auto failed = ConfirmSubjects(e, v1::Task(), {Subject("result", "a")}, {.rounds = 1}, 1);
  EXPECT_TRUE(absl::IsUnavailable(failed.status()));
  EXPECT_NE(failed.status().message().find("round 1: baselines: the runner died"), std::string::npos);
}

TEST(ConfirmationTest, NeverCorrectIsSaidSo) {
  ScriptedEvaluator e;
  e.fitness = {{"a", {0.0, 0.0}}, {"b", {1.0, 1.0}}};
  auto c = ConfirmSubjects(e, v1::Task(), {Subject("result", "a"), Subject("best seed", "b")}, {.rounds = 2}, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ratio_rounds, 0);
  const std::string text = DescribeConfirmation(*c);
  EXPECT_NE(text.find("result a: not correct in any round"), std::string::npos) << text;
  EXPECT_NE(text.find("no round where both were correct"), std::string::npos) << text;
}

TEST(ConfirmationTest, SubjectsOfASearchAreItsBestAndItsBestSeed) {
  testing_support::TempFolder folder("confirmation_test");
  absl::Status error;
  auto store = testing::OpenTestStore(folder.path() / "store", &error);
  ASSERT_NE(store, nullptr) << error;
  auto seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  const v1::Task task = testing::SmallTask(40);
  testing::CountingEvaluator evaluator(testing::Landscape(task, *seeds));
  SearchLoopOptions options = testing::TestLoopOptions();
  options.max_finalists = 0;
  auto summary = RunTaskSearch(*store, "run", task, *seeds, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  auto subjects = ConfirmationSubjects(*store, "run", task.name());
  ASSERT_TRUE(subjects.ok()) << subjects.status();
  ASSERT_FALSE(subjects->empty());
  EXPECT_EQ((*subjects)[0].role, "result");
  EXPECT_EQ((*subjects)[0].candidate.id(), summary->best_candidate_id);
  // The landscape puts every optimum away from the seeds' defaults: the search's best is a child.
  ASSERT_EQ(subjects->size(), 2u);
  EXPECT_EQ((*subjects)[1].role, "best seed");
  EXPECT_EQ((*subjects)[1].candidate.operator_(), v1::MUTATION_OPERATOR_SEED);
  EXPECT_NE((*subjects)[0].candidate.operator_(), v1::MUTATION_OPERATOR_SEED);
}

TEST(ConfirmationTest, NumbersGoToJsonAndBackAndABadFileIsNamed) {
  Confirmation c;
  c.rounds = 3;
  c.subjects = {{.role = "result", .candidate_id = "t.000009", .rounds_correct = 3, .fitness_median = 1.1,
                 .fitness_low = 1.05, .fitness_high = 1.2},
                {.role = "best seed", .candidate_id = "t.000002", .rounds_correct = 2, .fitness_median = 1.0,
                 .fitness_low = 0.9, .fitness_high = 1.01, .failure = "WRONG: n=16 \xFF", .shared_gpu = true}};
  c.ratio_rounds = 2;
  c.ratio_median = 1.1;
  c.ratio_low = 1.04;
  c.ratio_high = 1.2;
  absl::StatusOr<Confirmation> back = ConfirmationFromJson(ConfirmationToJson(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->rounds, 3);
  ASSERT_EQ(back->subjects.size(), 2u);
  EXPECT_EQ(back->subjects[1].candidate_id, "t.000002");
  EXPECT_EQ(back->subjects[1].rounds_correct, 2);
  EXPECT_DOUBLE_EQ(back->subjects[0].fitness_high, 1.2);
  EXPECT_TRUE(back->subjects[1].shared_gpu);
  EXPECT_EQ(back->subjects[1].failure, "WRONG: n=16 \xEF\xBF\xBD") << "bytes that are not UTF-8 replaced";
  EXPECT_EQ(back->ratio_rounds, 2);
  EXPECT_DOUBLE_EQ(back->ratio_low, 1.04);

  const struct {
    std::string text, want;
  } bad[] = {
      {"", "not a JSON object"},
      {"[1]", "not a JSON object"},
      {R"({"subjects": [], "ratio": {}})", "field rounds"},
      {R"({"rounds": "3", "subjects": [], "ratio": {}})", "field rounds"},
      {R"({"rounds": 1, "subjects": [{"role": "result"}], "ratio": {}})", "field subjects[].candidate_id"},
      {R"({"rounds": 1, "subjects": [], "ratio": {"rounds": 1}})", "field ratio"},
  };
  for (const auto& b : bad) {
    absl::StatusOr<Confirmation> parsed = ConfirmationFromJson(b.text);
    ASSERT_FALSE(parsed.ok()) << b.text;
    EXPECT_NE(std::string(parsed.status().message()).find(b.want), std::string::npos)
        << b.text << ": " << parsed.status();
  }
}

}  // namespace
}  // namespace sparseditto
