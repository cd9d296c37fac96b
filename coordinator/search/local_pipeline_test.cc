// The embedded pipeline (local_pipeline.h): every evaluation goes through the job queue to the one
// taker thread and back, each kind to the evaluator method it names, with its task, candidate, seed
// and bar intact, in the order asked; prefetch hints reach the evaluator on the taker's thread before
// the next job; several evaluators each get a taker, and they run at once.
#include "coordinator/search/local_pipeline.h"

#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

// Records every call: which method, for whom, on which thread. Read only after the pipeline is gone
// (its destructor joins the taker) or through results (the queue's hand-over orders them).
class RecordingEvaluator : public CandidateEvaluator {
 public:
  absl::Status SetUp(const v1::Task& task) override {
    calls.push_back("setup " + task.name());
    setup_thread = std::this_thread::get_id();
    return absl::OkStatus();
  }
  void Prefetch(const v1::Task&, const std::vector<v1::Candidate>& candidates) override {
    std::string ids;
    for (const v1::Candidate& c : candidates) ids += " " + c.id();
    calls.push_back("prefetch" + ids);
    threads.push_back(std::this_thread::get_id());
  }
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    return Answer("full", task, candidate, seed, -1);
  }
  v1::EvalResult EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed,
                                  const v1::ScreenBar& bar) override {
    return Answer("screen", task, candidate, seed, bar.margin());
  }
  v1::EvalResult EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    return Answer("finalist", task, candidate, seed, -1);
  }

  std::vector<std::string> calls;
  std::vector<std::thread::id> threads;
  std::thread::id setup_thread;

 private:
  v1::EvalResult Answer(const std::string& kind, const v1::Task& task, const v1::Candidate& candidate, uint64_t seed,
                        double margin) {
    calls.push_back(kind + " " + candidate.id());
    threads.push_back(std::this_thread::get_id());
    v1::EvalResult result;  // no candidate id or task name: RunEvaluationJob sets them
    result.set_failure_detail(fmt::format("{} {} seed {} margin {}", kind, task.name(), seed, margin));
    result.set_fitness(static_cast<double>(calls.size()));
    return result;
  }
};

v1::Candidate Candidate(const std::string& id) {
  v1::Candidate c;
  c.set_id(id);
  return c;
}

TEST(LocalEvaluationPipelineTest, EachKindReachesItsMethodOnTheTakerThreadInOrder) {
  RecordingEvaluator evaluator;
  v1::Task task;
  task.set_name("t");
  v1::ScreenBar bar;
  bar.set_margin(0.25);
  const std::vector<v1::EvaluationJob> jobs = {
      MakeEvaluationJob(task, Candidate("a"), 7, EvaluationKind::kFull),
      MakeEvaluationJob(task, Candidate("b"), 8, EvaluationKind::kScreened, &bar),
      MakeEvaluationJob(task, Candidate("a"), 9, EvaluationKind::kFinalist)};
  std::vector<v1::EvalResult> results;
  jobs::JobQueueStats stats;
  {
    LocalEvaluationPipeline pipeline({&evaluator});
    EXPECT_EQ(pipeline.Slots(), 1);
    pipeline.Hint(task, {Candidate("a"), Candidate("b")});
    std::vector<std::string> ids;
    for (const v1::EvaluationJob& job : jobs) {
      absl::StatusOr<v1::EvaluationJob> queued = pipeline.Submit(job);
      ASSERT_TRUE(queued.ok()) << queued.status();
      ids.push_back(queued->job_id());
      results.push_back(pipeline.Await(*queued));
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"a/1", "b/2", "a/3"})) << "the pipeline's ids, never the same twice";
    stats = pipeline.QueueStats();
  }
  EXPECT_EQ(stats.done, 3);
  EXPECT_EQ(stats.total(), 3);
  const std::vector<std::string> expected_calls = {"prefetch a b", "full a", "screen b", "finalist a"};
  EXPECT_EQ(evaluator.calls, expected_calls);
  ASSERT_EQ(results.size(), 3u);
  const std::vector<std::string> details = {"full t seed 7 margin -1", "screen t seed 8 margin 0.25",
                                            "finalist t seed 9 margin -1"};
  const std::vector<std::string> ids = {"a", "b", "a"};
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].failure_detail(), details[i]);
    EXPECT_EQ(results[i].candidate_id(), ids[i]) << "set from the job";
    EXPECT_EQ(results[i].task_name(), "t");
  }
  ASSERT_EQ(evaluator.threads.size(), 4u);
  for (const std::thread::id& id : evaluator.threads) {
    EXPECT_NE(id, std::this_thread::get_id()) << "prefetch and evaluations run on the taker";
    EXPECT_EQ(id, evaluator.threads[0]) << "one taker thread";
  }
}

TEST(LocalEvaluationPipelineTest, AnUnknownJobAndAPipelineNeverAskedEndWithoutAScore) {
  RecordingEvaluator evaluator;
  {
    LocalEvaluationPipeline pipeline({&evaluator});
    pipeline.Hint(v1::Task(), {Candidate("x")});
    v1::EvaluationJob never = MakeEvaluationJob(v1::Task(), Candidate("x"), 1, EvaluationKind::kFull);
    never.set_job_id("x/99");
    const v1::EvalResult unknown = pipeline.Await(never);
    EXPECT_EQ(unknown.failure(), v1::FAILURE_CATEGORY_INTERNAL);
    EXPECT_EQ(unknown.fitness(), 0);
    EXPECT_EQ(unknown.candidate_id(), "x");
  }  // joins the taker: Close wakes its Take
  for (const std::string& call : evaluator.calls) EXPECT_EQ(call.rfind("prefetch", 0), 0u) << call;
}

// An evaluator that waits (bounded) until `expected` evaluations are inside Evaluate at once.
class MeetingEvaluator : public CandidateEvaluator {
 public:
  MeetingEvaluator(absl::Mutex* mutex, int* inside, int expected) : mutex_(mutex), inside_(inside), expected_(expected) {}
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate&, uint64_t) override {
    absl::MutexLock lock(mutex_);
    ++*inside_;
    met = mutex_->AwaitWithTimeout(absl::Condition(
                                       +[](std::pair<int*, int>* a) { return *a->first >= a->second; }, &wait_for_),
                                   absl::Seconds(20));
    return v1::EvalResult();
  }
  bool met = false;

 private:
  absl::Mutex* mutex_;
  int* inside_;
  int expected_;
  std::pair<int*, int> wait_for_{inside_, expected_};
};

TEST(LocalEvaluationPipelineTest, EachEvaluatorHasItsOwnTakerAndTheyRunAtOnce) {
  absl::Mutex mutex;
  int inside = 0;
  MeetingEvaluator first(&mutex, &inside, 2), second(&mutex, &inside, 2);
  LocalEvaluationPipeline pipeline({&first, &second});
  EXPECT_EQ(pipeline.Slots(), 2);
  const v1::EvaluationJob a = MakeEvaluationJob(v1::Task(), Candidate("a"), 1, EvaluationKind::kFull);
  const v1::EvaluationJob b = MakeEvaluationJob(v1::Task(), Candidate("b"), 1, EvaluationKind::kFull);
  absl::StatusOr<v1::EvaluationJob> queued_a = pipeline.Submit(a), queued_b = pipeline.Submit(b);
  ASSERT_TRUE(queued_a.ok() && queued_b.ok());
  EXPECT_EQ(pipeline.Await(*queued_a).candidate_id(), "a");
  EXPECT_EQ(pipeline.Await(*queued_b).candidate_id(), "b");
  absl::MutexLock lock(&mutex);
  EXPECT_TRUE(first.met && second.met) << "both evaluations were inside their evaluators at once";
}

TEST(EvaluationJobTest, TheJobCarriesWhatItsKindNeeds) {
  v1::Task task;
  task.set_name("t");
  v1::ScreenBar bar;
  bar.set_margin(0.1);
  const v1::EvaluationJob full = MakeEvaluationJob(task, Candidate("c"), 3, EvaluationKind::kFull, &bar);
  EXPECT_FALSE(full.has_screen()) << "a bar is read only for a screen";
  EXPECT_FALSE(full.finalist());
  const v1::EvaluationJob screened = MakeEvaluationJob(task, Candidate("c"), 3, EvaluationKind::kScreened, &bar);
  EXPECT_TRUE(screened.has_screen());
  EXPECT_DOUBLE_EQ(screened.screen().margin(), 0.1);
  const v1::EvaluationJob finalist = MakeEvaluationJob(task, Candidate("c"), 3, EvaluationKind::kFinalist);
  EXPECT_TRUE(finalist.finalist());
  EXPECT_EQ(finalist.check_seed(), 3u);
  EXPECT_TRUE(finalist.job_id().empty()) << "the pipeline names it";
  const v1::EvalResult lost = JobEndedWithoutResult(finalist, "job j3 lost its worker 3 times (lease 30s)");
  EXPECT_EQ(lost.failure(), v1::FAILURE_CATEGORY_INTERNAL);
  EXPECT_EQ(lost.candidate_id(), "c");
  EXPECT_EQ(lost.fitness(), 0);
}

}  // namespace
}  // namespace sparseditto
