// The capacity test's code path at CI scale (capacity_bench.cc runs it at 64, 512 and 2048 evaluators):
// the real WorkerService on 127.0.0.1 (load_coordinator.h) fed by a submitter, 64 simulated evaluators
// on their own channels (simulated_evaluators.h) with short evaluations and a 1 s lease, some of them
// killed mid-job. Only what cannot vary from run to run is asserted, never a time: every submitted job
// ends exactly once and with a result, no job's report is accepted twice, the killed workers' jobs are
// all granted again, and the counts of the two sides add up.
#include <string>
#include <thread>

#include "coordinator/server/load_coordinator.h"
#include "coordinator/server/simulated_evaluators.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

constexpr int kEvaluators = 64;

TEST(CapacityTest, EveryJobEndsOnceWithOneAcceptedResultThroughKills) {
  LoadCoordinatorOptions options;
  options.work.lease = absl::Seconds(1);
  options.work.heartbeat_interval = absl::Milliseconds(250);
  options.outstanding = 2 * kEvaluators;
  options.track_jobs = true;
  LoadCoordinator coordinator(options);
  ASSERT_TRUE(coordinator.ok());

  SimulatedEvaluatorsOptions sim_options;
  sim_options.address = coordinator.address();
  sim_options.token = kLoadEvaluatorToken;
  sim_options.count = kEvaluators;
  sim_options.median_evaluation = absl::Milliseconds(20);
  sim_options.sigma = 0.5;
  sim_options.pull_wait = absl::Seconds(1);
  sim_options.track_jobs = true;
  SimulatedEvaluators sims(sim_options);
  ASSERT_TRUE(sims.Start().ok());
  // One connection per simulated evaluator: their channels are not shared by gRPC's subchannel pool.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string& address = coordinator.address();
  EXPECT_EQ(ConnectionsTo(std::stoi(address.substr(address.rfind(':') + 1))), kEvaluators);

  coordinator.SetFeed(LoadCoordinator::Feed::kFeeding);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const int killed = sims.Kill(0.05);
  EXPECT_GE(killed, 1);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // past the killed workers' leases
  coordinator.SetFeed(LoadCoordinator::Feed::kPaused);
  ASSERT_TRUE(coordinator.WaitAllAwaited(absl::Seconds(10))) << "jobs still unfinished";
  sims.Stop();  // every call answered, and counted, before the counts are read
  const SimulatedEvaluatorsStats evaluators = sims.Stats();

  const LoadCoordinatorStats s = coordinator.Stats();
  EXPECT_GT(s.submitted, 2 * kEvaluators);
  EXPECT_EQ(s.results, s.submitted);
  EXPECT_EQ(s.without_result, 0);
  EXPECT_EQ(s.queue.done, s.submitted);
  EXPECT_EQ(s.queue.pending + s.queue.leased + s.queue.lost + s.queue.cancelled, 0);
  const std::map<std::string, int> ends = coordinator.EndCounts();
  EXPECT_EQ(static_cast<int64_t>(ends.size()), s.submitted);
  for (const auto& [job, count] : ends) EXPECT_EQ(count, 1) << job;

  // The evaluators' side: one accepted report per job, for exactly the jobs that ended.
  std::string errors;
  for (const auto& [what, count] : evaluators.errors) errors += what + ": " + std::to_string(count) + "; ";
  EXPECT_EQ(evaluators.rpc_errors, 0) << errors;
  EXPECT_EQ(evaluators.accepted, s.submitted);
  EXPECT_EQ(evaluators.not_held, 0);
  const std::map<std::string, int> accepted = sims.AcceptedCounts();
  EXPECT_EQ(accepted.size(), ends.size());
  for (const auto& [job, count] : accepted) {
    EXPECT_EQ(count, 1) << job;
    EXPECT_TRUE(ends.contains(job)) << job;
  }
  // Every killed worker's job went to another worker and was granted once more, unless the worker was
  // killed with its report already on the way (then that report ended the job: it ended, once, above).
  EXPECT_EQ(evaluators.relet.count + evaluators.killed_after_report, killed);
  EXPECT_EQ(evaluators.relet_waiting, 0);
  EXPECT_GE(evaluators.relet.count, 1);
}

}  // namespace
}  // namespace sparseditto
