// A task with several archs in distributed mode (issue 25, item 9), over real gRPC on 127.0.0.1 with
// evaluator nodes over the deterministic fake (IdEvaluator, the one place a fake evaluator is allowed):
// one population per arch, each evaluated only by workers of its arch and, once its first set-up fixed
// it, of its GPU model; a population no live worker serves waits and the log says so once.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "coordinator/search/batch_search.h"
#include "coordinator/search/evaluation_job.h"
#include "coordinator/search/stored_search.h"
#include "coordinator/server/run_reports.h"
#include "coordinator/server/test_cluster.h"
#include "coordinator/testing/store_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Key;
using namespace cluster_test;  // NOLINT: the shared fixture of the distributed tests

// The coordinator's log lines (on_event), kept for the test to read.
struct EventLog {
  void Add(const std::string& line) {
    absl::MutexLock lock(&mutex);
    lines.push_back(line);
  }
  int Count(const std::string& part) {
    absl::MutexLock lock(&mutex);
    return static_cast<int>(std::count_if(lines.begin(), lines.end(),
                                          [&](const std::string& l) { return l.find(part) != std::string::npos; }));
  }
  std::string All() {
    absl::MutexLock lock(&mutex);
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    return all;
  }
  absl::Mutex mutex;
  std::vector<std::string> lines ABSL_GUARDED_BY(mutex);
};

class MultiArchTest : public testing::StoreTest {
 protected:
  MultiArchTest() : StoreTest("multi_arch_test") {}
  EvaluationWorkOptions Options(absl::Duration session_ttl = absl::Seconds(60)) {
    return {.session_ttl = session_ttl,
            .heartbeat_interval = absl::Milliseconds(100),
            .wait_for_workers = absl::Seconds(30),
            .on_event = [this](const std::string& line) { events_.Add(line); }};
  }
  EventLog events_;
};

v1::Task TaskOfArchs(const std::string& name, const std::vector<std::string>& archs, int64_t evaluations) {
  v1::Task task = testing::SmallTask(evaluations, name);
  task.clear_arch();
  for (const std::string& a : archs) task.add_arch(a);
  return task;
}

TEST_F(MultiArchTest, EachArchIsAPopulationOfItsOwnEvaluatedOnlyByWorkersOfThatArch) {
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  const v1::Task task = TaskOfArchs("spmm", {"sm_80", "sm_90a"}, 12);

  CoordinatorServer coordinator(Options());
  IdEvaluator ampere("fake A100", "sm_80"), hopper("fake H100", "sm_90");
  auto link_a = coordinator.Link(kEvaluatorToken), link_h = coordinator.Link(kEvaluatorToken);
  absl::StatusOr<BatchOutcome> outcome;
  {
    RunningNode node_a(link_a.get(), &ampere, NodeOptions("ampere", "sm_80", "fake A100"));
    RunningNode node_h(link_h.get(), &hopper, NodeOptions("hopper", "sm_90", "fake H100"));
    auto store = OpenStore("run/store");
    ASSERT_NE(store, nullptr);
    BatchSearchOptions options;
    options.loop = testing::TestLoopOptions();
    options.loop.compile_ahead = 3;
    options.loop.max_finalists = 0;
    options.loop.pipeline = &coordinator.work;
    outcome = RunBatchSearch(*store, "run", {task}, *seeds, coordinator.work, options);
  }
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(outcome->tasks.size(), 2u);
  const std::string names[2] = {"spmm@sm_80", "spmm@sm_90a"};
  for (int i = 0; i < 2; ++i) {
    const TaskOutcome& t = outcome->tasks[i];
    EXPECT_EQ(t.task_name, names[i]);
    ASSERT_TRUE(t.ok) << t.task_name << ": " << (t.errors.empty() ? "" : t.errors.back());
    EXPECT_EQ(t.summary.evaluations, 12) << t.task_name << ": each population has the whole budget";
    EXPECT_THAT(t.summary.best_candidate_id, HasSubstr(names[i] + ".")) << "its own best, one of its candidates";
  }
  // Every job of the sm_80 population went to the sm_80 worker and every job of the sm_90a population
  // to the sm_90 one (set-ups included); neither worker saw the other's.
  EXPECT_THAT(ampere.tasks, ElementsAre(Key("spmm@sm_80")));
  EXPECT_THAT(hopper.tasks, ElementsAre(Key("spmm@sm_90a")));
  EXPECT_GE(ampere.tasks["spmm@sm_80"], 12);
  EXPECT_GE(hopper.tasks["spmm@sm_90a"], 12);
  EXPECT_EQ(events_.Count("task spmm@sm_80: evaluated on fake A100 (sm_80) only"), 1) << events_.All();
  EXPECT_EQ(events_.Count("task spmm@sm_90a: evaluated on fake H100 (sm_90) only"), 1) << events_.All();

  // The status the client service reads from the store: both populations, each with its arch, its one
  // GPU model and its best.
  google::protobuf::RepeatedPtrField<v1::Task> submitted;
  *submitted.Add() = task;
  auto statuses = ReadTaskStatuses((root_ / "run").string(), "run", submitted);
  ASSERT_TRUE(statuses.ok()) << statuses.status();
  ASSERT_EQ(statuses->size(), 2u);
  const std::string gpus[2] = {"fake A100 (sm_80): 12", "fake H100 (sm_90): 12"};
  const std::string archs[2] = {"sm_80", "sm_90a"};
  for (int i = 0; i < 2; ++i) {
    const v1::TaskStatus& s = (*statuses)[i];
    EXPECT_EQ(s.task_name(), names[i]);
    EXPECT_EQ(s.arch(), archs[i]);
    EXPECT_THAT(s.evaluated_on(), ElementsAre(gpus[i])) << "one GPU model per population";
    EXPECT_EQ(s.evaluations(), 12);
    EXPECT_EQ(s.best_candidate_id(), outcome->tasks[i].summary.best_candidate_id);
    EXPECT_THAT(s.state(), ::testing::AnyOf("done", "budget_exhausted"));
  }
}

// A worker's raw calls, as a node makes them, for the tests that need to hold jobs still.
class RawWorker {
 public:
  RawWorker(CoordinatorServer& coordinator, const std::string& arch, const std::string& gpu_name)
      : link_(coordinator.Link(kEvaluatorToken)) {
    v1::RegisterWorkerRequest hello;
    hello.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR);
    hello.mutable_worker()->set_slots(1);
    hello.mutable_worker()->set_arch(arch);
    hello.mutable_worker()->set_gpu_name(gpu_name);
    hello.mutable_worker()->set_name(gpu_name);
    auto session = link_->Register(hello);
    EXPECT_TRUE(session.ok()) << session.status();
    if (session.ok()) session_ = session->session_id();
  }
  // The jobs granted within `wait`.
  std::vector<v1::EvaluationGrant> Pull(absl::Duration wait, int max_jobs = 4) {
    v1::PullEvaluationJobsRequest pull;
    pull.set_session_id(session_);
    pull.set_max_jobs(max_jobs);
    pull.set_wait_ms(absl::ToInt64Milliseconds(wait));
    auto reply = link_->Pull(pull);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return {};
    return {reply->grants().begin(), reply->grants().end()};
  }
  void Report(const v1::EvaluationGrant& grant) {
    v1::ReportEvaluationRequest report;
    report.set_session_id(session_);
    report.set_job_id(grant.job().job_id());
    report.set_attempt(grant.attempt());
    report.mutable_result()->set_candidate_id(grant.job().candidate().id());
    report.mutable_result()->set_task_name(grant.job().task().name());
    report.mutable_result()->set_fitness(1.0);
    auto reply = link_->Report(report);
    EXPECT_TRUE(reply.ok()) << reply.status();
  }

 private:
  std::unique_ptr<GrpcCoordinatorLink> link_;
  std::string session_;
};

v1::EvaluationJob JobOf(const v1::Task& task, const std::string& candidate_id) {
  v1::Candidate c;
  c.set_id(candidate_id);
  return MakeEvaluationJob(task, c, 1, EvaluationKind::kFull);
}

// SetUp on a thread, answered by `worker`'s first pull: the population's platform is then fixed.
void SetUpThrough(CoordinatorServer& coordinator, RawWorker& worker, const v1::Task& task) {
  absl::Status set_up = absl::UnknownError("not run");
  std::thread search([&] { set_up = coordinator.work.SetUp(task); });
  std::vector<v1::EvaluationGrant> grants;
  for (int i = 0; i < 50 && grants.empty(); ++i) grants = worker.Pull(absl::Milliseconds(200));
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].job().task().name(), task.name());
  worker.Report(grants[0]);
  search.join();
  EXPECT_TRUE(set_up.ok()) << set_up;
}

TEST_F(MultiArchTest, OnceAPopulationsGpuModelIsFixedAWorkerOfAnotherModelDoesNotTakeItsJobs) {
  CoordinatorServer coordinator(Options());
  RawWorker h100(coordinator, "sm_90", "NVIDIA H100 80GB HBM3");
  const v1::Task task = TaskOfArchs("t", {"sm_90a"}, 10);
  SetUpThrough(coordinator, h100, task);
  EXPECT_EQ(events_.Count("task t: evaluated on NVIDIA H100 80GB HBM3 (sm_90) only"), 1) << events_.All();

  // An H200 (the same arch, another model) and an A100 come; the population's jobs wait for the H100.
  RawWorker h200(coordinator, "sm_90", "NVIDIA H200"), a100(coordinator, "sm_80", "NVIDIA A100");
  ASSERT_TRUE(coordinator.work.Submit(JobOf(task, "t.000001")).ok());
  ASSERT_TRUE(coordinator.work.Submit(JobOf(task, "t.000002")).ok());
  EXPECT_TRUE(h200.Pull(absl::Milliseconds(300)).empty()) << "another GPU model of the same arch";
  EXPECT_TRUE(a100.Pull(absl::Milliseconds(300)).empty()) << "another arch";
  const std::vector<v1::EvaluationGrant> mine = h100.Pull(absl::Milliseconds(300));
  ASSERT_EQ(mine.size(), 2u);
  for (const v1::EvaluationGrant& g : mine) EXPECT_EQ(g.job().task().name(), "t");
}

TEST_F(MultiArchTest, APopulationNoLiveWorkerServesWaitsAndTheLogSaysSoOnce) {
  CoordinatorServer coordinator(Options(/*session_ttl=*/absl::Seconds(1)));
  const v1::Task task = TaskOfArchs("t", {"sm_80"}, 10);
  {
    // The set-up waits for an sm_80 worker, which comes later; the log says once what it waits for.
    absl::Status set_up = absl::UnknownError("not run");
    std::thread search([&] { set_up = coordinator.work.SetUp(task); });
    RawWorker h100(coordinator, "sm_90", "NVIDIA H100");
    EXPECT_TRUE(h100.Pull(absl::Milliseconds(300)).empty()) << "an sm_90 worker never sets up an sm_80 task";
    for (int i = 0; i < 50 && events_.Count("no evaluator of sm_80 is registered") == 0; ++i) absl::SleepFor(absl::Milliseconds(20));
    RawWorker first(coordinator, "sm_80", "NVIDIA A100");
    std::vector<v1::EvaluationGrant> grants;
    for (int i = 0; i < 50 && grants.empty(); ++i) grants = first.Pull(absl::Milliseconds(200));
    ASSERT_EQ(grants.size(), 1u);
    first.Report(grants[0]);
    search.join();
    ASSERT_TRUE(set_up.ok()) << set_up;
  }
  EXPECT_EQ(events_.Count("no evaluator of sm_80 is registered: task t waits for one"), 1) << events_.All();

  // Its A100 goes (no call for the session's ttl): the log says the population's jobs wait, once for
  // however many jobs are submitted meanwhile.
  absl::SleepFor(absl::Milliseconds(1300));
  EXPECT_TRUE(coordinator.work.LiveWorkers().empty());
  for (const char* id : {"t.000001", "t.000002", "t.000003"}) ASSERT_TRUE(coordinator.work.Submit(JobOf(task, id)).ok());
  EXPECT_EQ(events_.Count("no evaluator of NVIDIA A100 (sm_80) is registered"), 1) << events_.All();

  // A worker of that model that comes back takes them all.
  RawWorker again(coordinator, "sm_80", "NVIDIA A100");
  std::vector<v1::EvaluationGrant> taken;
  for (int i = 0; i < 10 && taken.size() < 3; ++i) {
    for (const v1::EvaluationGrant& g : again.Pull(absl::Milliseconds(200))) taken.push_back(g);
  }
  EXPECT_EQ(taken.size(), 3u);
  EXPECT_EQ(events_.Count("no evaluator of NVIDIA A100 (sm_80) is registered"), 1) << events_.All();
}

}  // namespace
}  // namespace sparseditto
