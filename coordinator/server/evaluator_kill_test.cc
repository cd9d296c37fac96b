// kill -9 of an evaluator mid-job (issue 25): a worker process (evaluator_kill_child) takes a job from
// the coordinator on 127.0.0.1 and is SIGKILLed while evaluating it. Its job goes to another worker
// once its lease runs out, every job ends with exactly one result (no duplicate record), and the
// killed worker started again on its spool comes back as its session with nothing to report.
#include <map>
#include <string>
#include <vector>

#include "common/status_format.h"
#include "common/subprocess.h"
#include "coordinator/server/coordinator_kill_setup.h"
#include "coordinator/server/test_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using namespace cluster_test;  // NOLINT: the shared fixture of these tests

TEST(EvaluatorKillTest, AKilledWorkersJobGoesToAnotherWithinItsLeaseAndEndsOnce) {
  testing_support::TempFolder folder("evaluator_kill_test");
  ASSERT_TRUE(folder.ok());
  const absl::Duration lease = absl::Seconds(1);
  CoordinatorServer coordinator({.lease = lease,
                                 .session_ttl = absl::Seconds(3),
                                 .heartbeat_interval = absl::Milliseconds(100),
                                 .max_pull_wait = absl::Milliseconds(300)});
  coordinator.tokens.Add(rpc::Role::kEvaluator, kill_test::kToken);  // the child's; before any call
  const std::string port = coordinator.address.substr(coordinator.address.rfind(':') + 1);
  std::vector<v1::EvaluationJob> jobs;
  for (const char* id : {"c0", "c11", "c222", "c3333"}) {
    auto job = coordinator.work.Submit(JobFor(id));
    ASSERT_TRUE(job.ok());
    jobs.push_back(*job);
  }
  const std::string spool = (folder.path() / "spool").string();
  SpawnOptions spawn;
  spawn.argv = {EVALUATOR_KILL_CHILD, port, spool, "30"};
  auto doomed = Spawn(spawn);
  ASSERT_TRUE(doomed.ok()) << doomed.status();
  const Deadline by = DeadlineAfter(30);
  while (Clock::now() < by && (*doomed)->captured_stdout().bytes.find("evaluating") == std::string::npos) {
    ASSERT_TRUE((*doomed)->Pump(DeadlineAfter(0.05)).ok());
  }
  ASSERT_THAT((*doomed)->captured_stdout().bytes, ::testing::HasSubstr("evaluating c0")) << "it took the first job";
  (*doomed)->Kill();  // SIGKILL mid-job
  const absl::Time killed = absl::Now();
  ASSERT_TRUE((*doomed)->WaitFor(DeadlineAfter(10)).ok());

  IdEvaluator survivor_evaluator;
  auto link = coordinator.Link(kEvaluatorToken);
  RunningNode survivor(link.get(), &survivor_evaluator, "survivor");
  const v1::EvalResult relet = coordinator.work.Await(jobs[0]);
  const absl::Duration relet_after = absl::Now() - killed;
  EXPECT_EQ(relet.failure(), v1::FAILURE_CATEGORY_NONE) << relet.failure_detail();
  EXPECT_DOUBLE_EQ(relet.fitness(), 0.52) << "the survivor's result, not the killed worker's";
  for (size_t i = 1; i < jobs.size(); ++i) EXPECT_DOUBLE_EQ(coordinator.work.Await(jobs[i]).fitness(), 0.5 + (2.0 + i) / 100);
  std::cerr << fmt::format("the killed worker's job was done by another {} after the kill (lease {})\n",
                           absl::FormatDuration(relet_after), absl::FormatDuration(lease));

  // Started again on its spool: the same session, nothing to report, nothing changes.
  spawn.argv = {EVALUATOR_KILL_CHILD, port, spool, "0"};
  auto again = Spawn(spawn);
  ASSERT_TRUE(again.ok());
  const Deadline back_by = DeadlineAfter(20);
  while (Clock::now() < back_by && (*again)->captured_stdout().bytes.find("registered") == std::string::npos) {
    ASSERT_TRUE((*again)->Pump(DeadlineAfter(0.05)).ok());
  }
  EXPECT_THAT((*again)->captured_stdout().bytes, ::testing::HasSubstr("registered again (same session)"));
  survivor.Stop();
  coordinator.work.Close();  // drains it
  auto drained = (*again)->WaitFor(DeadlineAfter(20));
  ASSERT_TRUE(drained.ok());
  EXPECT_TRUE(drained->success()) << drained->ToString() << (*again)->captured_stderr().bytes;
  EXPECT_EQ(coordinator.work.QueueStats().done, 4);
  EXPECT_EQ(coordinator.work.QueueStats().total(), 4) << "each job once";
  for (const char* id : {"c0", "c11", "c222", "c3333"}) EXPECT_EQ(survivor_evaluator.calls[id], 1) << id;
  EXPECT_DOUBLE_EQ(coordinator.work.Await(jobs[0]).fitness(), 0.52) << "the first result stays";
}

}  // namespace
}  // namespace sparseditto
