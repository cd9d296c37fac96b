// The one writer of a run's records (run_records.h) over a real store: the run record made once, a
// batch of tasks stored all or none, attempts and failures, every state stamped with its task, and the
// summary of a task that finished earlier; and the mutator set (mutator.h): plans routed by kind with
// the built-in fallback, makers, replayability and the one state, and a mutator that is neither the
// built-in nor an LLM one driven by the loop through that interface alone.
#include "coordinator/search/run_records.h"

#include <atomic>

#include "coordinator/search/builtin_child.h"
#include "coordinator/search/mutator.h"
#include "coordinator/search/search_loop.h"
#include "mutators/builtin/builtin_mutator.h"
#include "coordinator/testing/store_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using testing::SmallTask;

class RunRecordsTest : public testing::StoreTest {
 protected:
  RunRecordsTest() : StoreTest("run_records_test") {}
};

TEST_F(RunRecordsTest, TheRunRecordIsMadeOnceAndKept) {
  auto store = OpenStore("s");
  RunRecords run(*store, "run");
  ASSERT_TRUE(run.EnsureRun("rev1", R"({"a":1})").ok());
  ASSERT_TRUE(run.EnsureRun("rev2", R"({"b":2})").ok());
  absl::StatusOr<store::RunRecord> record = store->GetRun("run");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->project_revision(), "rev1");
  EXPECT_EQ(record->provenance_json(), R"({"a":1})");
  EXPECT_GT(record->created_unix_ms(), 0);
}

TEST_F(RunRecordsTest, ARunIsResumedOnlyByTheSameKindOfEvaluator) {
  constexpr char kGpu[] = R"({"nvcc":"12.4"})";
  constexpr char kFake[] = R"({"nvcc":"12.4","fake_evaluator":"fitness from tunables"})";
  struct Case {
    const char* made_with;
    const char* resumed_with;
    bool ok;
  };
  for (const Case& c : {Case{kGpu, kGpu, true}, Case{kFake, kFake, true}, Case{kGpu, kFake, false},
                        Case{kFake, kGpu, false}, Case{"", kGpu, true}, Case{"not json", kGpu, true},
                        Case{kFake, "", true}}) {
    SCOPED_TRACE(std::string(c.made_with) + " then " + c.resumed_with);
    auto store = OpenStore(std::to_string(std::hash<std::string>()(std::string(c.made_with) + c.resumed_with)));
    RunRecords run(*store, "run");
    ASSERT_TRUE(run.EnsureRun("rev", c.made_with).ok());
    const absl::Status again = run.EnsureRun("rev", c.resumed_with);
    EXPECT_EQ(again.ok(), c.ok) << again;
    if (!c.ok) {
      EXPECT_NE(again.message().find("mix measured and unmeasured"), std::string::npos) << again;
    }
    absl::StatusOr<store::RunRecord> record = store->GetRun("run");
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->provenance_json(), c.made_with) << "the stored provenance is kept";
  }
}

TEST_F(RunRecordsTest, TasksAreStoredAllOrNone) {
  auto store = OpenStore("s");
  RunRecords run(*store, "run");
  ASSERT_TRUE(run.EnsureRun().ok());
  ASSERT_TRUE(run.PutTasks({SmallTask(3, "kept")}).ok());
  ASSERT_TRUE(run.PutTasks({SmallTask(3, "kept")}).ok()) << "the same task again";
  v1::Task changed = SmallTask(3, "kept");
  changed.set_seed(changed.seed() + 1);
  changed.set_source_file("tasks.yaml");
  changed.set_source_line(7);
  absl::Status s = run.PutTasks({SmallTask(3, "new"), changed});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("run run holds task kept with other content than tasks.yaml:7"));
  EXPECT_TRUE(absl::IsNotFound(store->GetTask("run", "new").status())) << "nothing stored before the check";
  // Only the budget differs (--max-evaluations on the command line): said so, with both budgets.
  s = run.PutTasks({SmallTask(3, "new"), SmallTask(4, "kept")});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("run run holds task kept with another budget (stored: max_evaluations: 3"));
  EXPECT_THAT(s.message(), HasSubstr("now: max_evaluations: 4"));
  EXPECT_TRUE(absl::IsNotFound(store->GetTask("run", "new").status())) << "nothing stored before the check";
}

// A resumed run keeps the layout it was started with: the task in another layout is other content, and
// a task stored before layouts existed (no field: KN) resumes from a file that names none, or says kn.
TEST_F(RunRecordsTest, AResumedRunKeepsItsLayout) {
  auto store = OpenStore("s");
  RunRecords run(*store, "run");
  ASSERT_TRUE(run.EnsureRun().ok());
  ASSERT_TRUE(run.PutTasks({SmallTask(3, "kn_task")}).ok());
  v1::Task explicit_kn = SmallTask(3, "kn_task");
  explicit_kn.set_layout(v1::LAYOUT_KN);
  EXPECT_TRUE(run.PutTasks({explicit_kn}).ok());
  v1::Task nk = SmallTask(3, "kn_task");
  nk.set_layout(v1::LAYOUT_NK);
  const absl::Status s = run.PutTasks({nk});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("run run holds task kn_task with other content"));
  absl::StatusOr<v1::Task> stored = store->GetTask("run", "kn_task");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->layout(), v1::LAYOUT_KN);
  ASSERT_TRUE(run.PutTasks({[] { v1::Task t = SmallTask(3, "nk_task"); t.set_layout(v1::LAYOUT_NK); return t; }()}).ok());
  stored = store->GetTask("run", "nk_task");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->layout(), v1::LAYOUT_NK) << "stored as given";
}

TEST_F(RunRecordsTest, AttemptsFailuresAndStamps) {
  auto store = OpenStore("s");
  RunRecords run(*store, "run");
  ASSERT_TRUE(run.EnsureRun().ok());
  ASSERT_TRUE(run.PutTasks({SmallTask(3, "t")}).ok());
  TaskRecords task(*store, "run", "t");
  absl::StatusOr<std::optional<store::RunState>> none = task.State();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  EXPECT_TRUE(absl::IsNotFound(task.MarkFailed("why")));

  ASSERT_TRUE(task.BeginAttempt().ok());
  absl::StatusOr<std::optional<store::RunState>> first = task.State();
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->status(), store::TASK_RUN_STATUS_PENDING);
  EXPECT_EQ((*first)->attempts(), 1);
  EXPECT_EQ((*first)->task_name(), "t");

  store::RunState written;  // no task name, no time: the writer stamps both
  written.set_status(store::TASK_RUN_STATUS_RUNNING);
  written.set_attempts(1);
  written.set_search_state("coordinator bytes");
  ASSERT_TRUE(task.Write(written).ok());
  ASSERT_TRUE(task.BeginAttempt().ok());
  ASSERT_TRUE(task.MarkFailed("failed after 2 attempts: boom").ok());
  absl::StatusOr<std::optional<store::RunState>> failed = task.State();
  ASSERT_TRUE(failed.ok() && failed->has_value());
  EXPECT_EQ((*failed)->task_name(), "t");
  EXPECT_GT((*failed)->updated_unix_ms(), 0);
  EXPECT_EQ((*failed)->attempts(), 2);
  EXPECT_EQ((*failed)->status(), store::TASK_RUN_STATUS_FAILED);
  EXPECT_EQ((*failed)->status_detail(), "failed after 2 attempts: boom");
  EXPECT_EQ((*failed)->search_state(), "coordinator bytes") << "kept for a later resume";
}

TEST_F(RunRecordsTest, ATaskFinishedEarlierIsSummarisedFromItsRecords) {
  auto store = OpenStore("s");
  RunRecords run(*store, "run");
  ASSERT_TRUE(run.EnsureRun().ok());
  ASSERT_TRUE(run.PutTasks({SmallTask(3, "t")}).ok());
  TaskRecords task(*store, "run", "t");
  coordinator::SearchState search;
  search.set_best_candidate_id("t.3");
  search.set_best_fitness(1.25);
  search.mutable_spent()->set_evaluations(3);
  search.mutable_spent()->set_duplicates(2);
  coordinator::ExhaustedSpace* space = search.add_exhausted_spaces();
  space->set_seed_name("dense_stream");
  space->set_points(3);
  store::RunState state;
  state.set_status(store::TASK_RUN_STATUS_RUNNING);
  state.set_search_state(search.SerializeAsString());
  state.set_status_detail("max_evaluations 3 reached");
  ASSERT_TRUE(task.Write(state).ok());
  absl::StatusOr<std::optional<SearchSummary>> running = task.FinishedEarlier(false);
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_FALSE(running->has_value()) << "still to run";

  state.set_status(store::TASK_RUN_STATUS_BUDGET_EXHAUSTED);
  ASSERT_TRUE(task.Write(state).ok());
  absl::StatusOr<std::optional<SearchSummary>> without_finalists = task.FinishedEarlier(true);
  ASSERT_TRUE(without_finalists.ok());
  EXPECT_FALSE(without_finalists->has_value()) << "its finalist stage is still to run";
  absl::StatusOr<std::optional<SearchSummary>> done = task.FinishedEarlier(false);
  ASSERT_TRUE(done.ok() && done->has_value());
  const SearchSummary& s = **done;
  EXPECT_EQ(s.stop_reason, "finished earlier");
  EXPECT_EQ(s.stop_detail, "max_evaluations 3 reached");
  EXPECT_TRUE(s.resumed);
  EXPECT_EQ(s.best_candidate_id, "t.3");
  EXPECT_EQ(s.best_fitness, 1.25);
  EXPECT_EQ(s.evaluations, 3);
  EXPECT_EQ(s.duplicates, 2);
  EXPECT_EQ(s.evaluations_this_call, 0);
  ASSERT_EQ(s.exhausted_spaces.size(), 1u);
  EXPECT_THAT(s.exhausted_spaces[0], HasSubstr("seed dense_stream: all 3 points"));
}

// A mutator serving `kind`, making children of `op`.
class FakeMutator : public Mutator {
 public:
  FakeMutator(v1::MutatorKind kind, v1::MutationOperator op, bool replayable, bool keeps_state)
      : kind_(kind), op_(op), replayable_(replayable), keeps_state_(keeps_state) {}
  bool Serves(v1::MutatorKind kind) const override { return kind == kind_; }
  bool Available() const override { return available; }
  bool Replayable() const override { return replayable_; }
  bool Made(const v1::Candidate& child) const override { return child.operator_() == op_; }
  absl::StatusOr<Proposal> Propose(const MutationPlan&, const MutationContext&) override { return Proposal(); }
  bool KeepsState() const override { return keeps_state_; }
  std::string SaveState() const override { return state; }
  absl::Status RestoreState(const std::string& s) override {
    state = s;
    return absl::OkStatus();
  }
  bool available = true;
  std::string state = "fake state";

 private:
  v1::MutatorKind kind_;
  v1::MutationOperator op_;
  bool replayable_;
  bool keeps_state_;
};

v1::Candidate Of(v1::MutationOperator op) {
  v1::Candidate c;
  c.set_operator_(op);
  return c;
}

TEST(MutatorSetTest, PlansGoByKindToTheFirstAvailableElseTheFallback) {
  BuiltinSearchMutator builtin({});
  FakeMutator llm(v1::MUTATOR_KIND_ANTHROPIC, v1::MUTATION_OPERATOR_LLM_DIFF, /*replayable=*/false, true);
  absl::StatusOr<MutatorSet> set = MutatorSet::Create(&builtin, {&llm});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(&set->For(v1::MUTATOR_KIND_ANTHROPIC), &llm);
  EXPECT_EQ(&set->For(v1::MUTATOR_KIND_BUILTIN), &builtin);
  EXPECT_EQ(&set->For(v1::MUTATOR_KIND_OPENAI_COMPATIBLE), &builtin) << "a kind nobody serves";
  EXPECT_EQ(set->MakerOf(Of(v1::MUTATION_OPERATOR_LLM_DIFF)), &llm);
  EXPECT_EQ(set->MakerOf(Of(v1::MUTATION_OPERATOR_TUNE_CROSSOVER)), &builtin);
  EXPECT_EQ(set->MakerOf(Of(v1::MUTATION_OPERATOR_SEED)), nullptr);
  EXPECT_EQ(set->MakerOf(Of(v1::MUTATION_OPERATOR_PLAN)), nullptr);
  EXPECT_FALSE(set->Replayable());
  EXPECT_TRUE(set->ServedElsewhere(v1::MUTATOR_KIND_ANTHROPIC));
  EXPECT_FALSE(set->ServedElsewhere(v1::MUTATOR_KIND_COMMAND)) << "a kind nobody serves goes to the fallback";
  EXPECT_EQ(set->SaveState(), "fake state");
  ASSERT_TRUE(set->RestoreState("").ok());
  EXPECT_EQ(llm.state, "fake state") << "a run stored without a state leaves it";
  ASSERT_TRUE(set->RestoreState("stored").ok());
  EXPECT_EQ(llm.state, "stored");

  llm.available = false;  // every model disabled
  EXPECT_EQ(&set->For(v1::MUTATOR_KIND_ANTHROPIC), &builtin);
  EXPECT_FALSE(set->ServedElsewhere(v1::MUTATOR_KIND_ANTHROPIC));
  EXPECT_EQ(set->MakerOf(Of(v1::MUTATION_OPERATOR_LLM_DIFF)), &llm) << "its children stay its own";
}

TEST(MutatorSetTest, TheBuiltinAloneIsReplayableWithoutState) {
  BuiltinSearchMutator builtin({});
  absl::StatusOr<MutatorSet> set = MutatorSet::Create(&builtin, {});
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->Replayable());
  EXPECT_FALSE(set->ServedElsewhere(v1::MUTATOR_KIND_ANTHROPIC));
  EXPECT_EQ(set->SaveState(), "");
  EXPECT_EQ(&set->For(v1::MUTATOR_KIND_ANTHROPIC), &builtin);
}

TEST(MutatorSetTest, RefusesTwoStatesAndNull) {
  BuiltinSearchMutator builtin({});
  FakeMutator a(v1::MUTATOR_KIND_ANTHROPIC, v1::MUTATION_OPERATOR_LLM_DIFF, false, true);
  FakeMutator b(v1::MUTATOR_KIND_COMMAND, v1::MUTATION_OPERATOR_LLM_REWRITE, false, true);
  EXPECT_EQ(MutatorSet::Create(&builtin, {&a, &b}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MutatorSet::Create(nullptr, {&a}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MutatorSet::Create(&builtin, {nullptr}).status().code(), absl::StatusCode::kInvalidArgument);
}

// A mutator of kind command that is neither built in nor a model: the built-in tunable move under
// operator LLM_REWRITE, counting what the loop tells it; its state is that count.
class CommandMutator : public Mutator {
 public:
  explicit CommandMutator(bool replayable) : replayable_(replayable) {}
  bool Serves(v1::MutatorKind kind) const override { return kind == v1::MUTATOR_KIND_COMMAND; }
  bool Replayable() const override { return replayable_; }
  bool Made(const v1::Candidate& child) const override {
    return child.operator_() == v1::MUTATION_OPERATOR_LLM_REWRITE;
  }
  absl::StatusOr<Proposal> Propose(const MutationPlan& plan, const MutationContext& context) override {
    ++proposed;
    Rng rng(plan.mutator_seed);
    BuiltinMutatorOptions options;
    options.mutator_name = plan.mutator;
    Proposal proposal;
    absl::StatusOr<v1::Candidate> child = MutateTunables(context.candidates.at(plan.parent_id), rng, options, context.known);
    if (!child.ok()) {
      proposal.why = std::string(child.status().message());
      return proposal;
    }
    child->set_operator_(v1::MUTATION_OPERATOR_LLM_REWRITE);
    proposal.child = *std::move(child);
    proposal.tokens = 10;
    return proposal;
  }
  absl::Status RecordEvaluation(const v1::Candidate& child, const v1::EvalResult&, const MutationContext& context) override {
    EXPECT_TRUE(context.candidates.contains(child.id())) << "the child is stored before its evaluation is told";
    ++evaluated;
    return absl::OkStatus();
  }
  bool KeepsState() const override { return true; }
  std::string SaveState() const override { return std::to_string(evaluated); }
  absl::Status RestoreState(const std::string& state) override {
    restored = state;
    evaluated = std::stoi(state);
    return absl::OkStatus();
  }
  std::atomic<int> proposed{0};  // Propose runs on the pool's threads when not replayable
  int evaluated = 0;
  std::string restored;

 private:
  bool replayable_;
};

class ThirdMutatorTest : public testing::StoreTest {
 protected:
  ThirdMutatorTest() : StoreTest("third_mutator_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *std::move(seeds);
    task_ = SmallTask(30, "third");
    for (auto [name, kind] : {std::pair{"builtin", v1::MUTATOR_KIND_BUILTIN}, {"cmd", v1::MUTATOR_KIND_COMMAND}}) {
      v1::MutatorSpec* m = task_.add_mutators();
      m->set_name(name);
      m->set_kind(kind);
      m->set_weight(1);
    }
  }
  int Children(PopulationStore& store, v1::MutationOperator op) {
    auto all = store.ListCandidates("run", task_.name());
    EXPECT_TRUE(all.ok()) << all.status();
    return all.ok() ? static_cast<int>(std::count_if(all->begin(), all->end(),
                                                     [&](const v1::Candidate& c) { return c.operator_() == op; }))
                    : 0;
  }
  std::vector<SeedKernel> seeds_;
  v1::Task task_;
};

TEST_F(ThirdMutatorTest, PlansOfItsKindGoToItAndItsStateIsKeptAcrossAResume) {
  auto store = OpenStore("s");
  testing::CountingEvaluator evaluator(testing::Landscape(task_, seeds_));
  CommandMutator first(/*replayable=*/false);
  SearchLoopOptions options = testing::TestLoopOptions();
  options.compile_ahead = 4;  // not replayable: its calls asked asynchronously, up to 4 at once
  options.mutators = {&first};
  options.stop_after_evaluations = 15;
  absl::StatusOr<SearchSummary> interrupted = RunTaskSearch(*store, "run", task_, seeds_, evaluator, options);
  ASSERT_TRUE(interrupted.ok()) << interrupted.status();
  ASSERT_EQ(interrupted->stop_reason, "interrupted");
  EXPECT_GT(first.proposed, 0);
  EXPECT_GT(first.evaluated, 0);
  absl::StatusOr<store::RunState> state = store->GetRunState("run", task_.name());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->mutator_state(), std::to_string(first.evaluated));

  CommandMutator second(/*replayable=*/false);
  options.mutators = {&second};
  options.stop_after_evaluations = 0;
  absl::StatusOr<SearchSummary> resumed = RunTaskSearch(*store, "run", task_, seeds_, evaluator, options);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(second.restored, std::to_string(first.evaluated));
  EXPECT_EQ(resumed->evaluations, 30 + (resumed->plan_candidate_id.empty() ? 0 : 1));
  const int its_children = Children(*store, v1::MUTATION_OPERATOR_LLM_REWRITE);
  EXPECT_GT(its_children, 0);
  EXPECT_GT(Children(*store, v1::MUTATION_OPERATOR_TUNE) + Children(*store, v1::MUTATION_OPERATOR_TUNE_CROSSOVER), 0)
      << "the built-in mutator keeps its own plans";
  EXPECT_EQ(second.evaluated, its_children) << "every child of it evaluated once and told to it once (no duplicates: "
                                               "it proposes no known source)";
  absl::StatusOr<store::RunState> end = store->GetRunState("run", task_.name());
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->mutator_state(), std::to_string(its_children));
}

TEST_F(ThirdMutatorTest, AReplayableOneKeepsTheCompileAheadBatches) {
  auto store = OpenStore("s");
  testing::CountingEvaluator evaluator(testing::Landscape(task_, seeds_));
  CommandMutator replayable(/*replayable=*/true);
  SearchLoopOptions options = testing::TestLoopOptions();
  options.compile_ahead = 4;
  options.mutators = {&replayable};
  absl::StatusOr<SearchSummary> summary = RunTaskSearch(*store, "run", task_, seeds_, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(std::any_of(evaluator.prefetched.begin(), evaluator.prefetched.end(),
                          [](const std::vector<std::string>& b) { return b.size() > 1; }));
  EXPECT_GT(Children(*store, v1::MUTATION_OPERATOR_LLM_REWRITE), 0);
}

}  // namespace
}  // namespace sparseditto
