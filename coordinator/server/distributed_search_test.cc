// Distributed mode over real gRPC on 127.0.0.1: the coordinator's WorkerService over EvaluationWork,
// evaluator nodes (evaluator/node/) over the deterministic fake evaluator, the only place a fake
// evaluator is allowed. A whole search through them makes the choices and records of an embedded one;
// the faults: a worker that vanishes mid-job (its job goes to another within the lease, its late
// report is a duplicate), bad and wrong-role tokens, garbage and oversized messages, a report for a
// job not held, and a result kept on disk by a worker that could not report it, reported by the next.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/search/evaluation_job.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/worker_service.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/server/test_cluster.h"
#include "coordinator/testing/store_test.h"
#include "evaluator/node/evaluator_node.h"
#include "evaluator/node/grpc_coordinator_link.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rpc/connection_options.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using namespace cluster_test;  // NOLINT: the shared fixture of these tests

class DistributedSearchTest : public testing::StoreTest {
 protected:
  DistributedSearchTest() : StoreTest("distributed_search_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *seeds;
    task_ = testing::SmallTask(40);
    landscape_ = testing::Landscape(task_, seeds_);
  }
  std::map<std::string, std::string> Stored(PopulationStore& store) {
    std::map<std::string, std::string> out;
    auto candidates = store.ListCandidates("run", task_.name());
    EXPECT_TRUE(candidates.ok());
    if (!candidates.ok()) return out;
    for (const v1::Candidate& c : *candidates) {
      if (auto e = store.GetEvaluation("run", c.id()); e.ok()) {
        out[c.id()] = fmt::format("{} {}", e->fitness(), static_cast<int>(e->failure()));
      }
    }
    return out;
  }
  std::vector<SeedKernel> seeds_;
  v1::Task task_;
  testing::FakeLandscape landscape_;
};

TEST_F(DistributedSearchTest, ASearchThroughTheCoordinatorAndTwoEvaluatorsIsTheEmbeddedSearch) {
  SearchLoopOptions options = testing::TestLoopOptions();
  options.compile_ahead = 4;
  testing::CountingEvaluator alone(landscape_);
  auto embedded_store = OpenStore("embedded");
  auto expected = RunTaskSearch(*embedded_store, "run", task_, seeds_, alone, options);
  ASSERT_TRUE(expected.ok()) << expected.status();

  CoordinatorServer coordinator({.wait_for_workers = absl::Seconds(30)});
  testing::CountingEvaluator evaluators[2] = {testing::CountingEvaluator(landscape_),
                                             testing::CountingEvaluator(landscape_)};
  auto link0 = coordinator.Link(kEvaluatorToken), link1 = coordinator.Link(kEvaluatorToken);
  std::map<std::string, int> calls;
  {
    RunningNode node0(link0.get(), &evaluators[0], "node0"), node1(link1.get(), &evaluators[1], "node1");
    SearchLoopOptions remote = options;
    remote.pipeline = &coordinator.work;
    auto store = OpenStore("distributed");
    auto summary = RunTaskSearch(*store, "run", task_, seeds_, coordinator.work, remote);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->evaluations, expected->evaluations);
    EXPECT_EQ(summary->best_candidate_id, expected->best_candidate_id);
    EXPECT_DOUBLE_EQ(summary->best_fitness, expected->best_fitness);
    EXPECT_EQ(summary->finalist_candidate_id, expected->finalist_candidate_id);
    EXPECT_EQ(Stored(*store), Stored(*embedded_store)) << "the same candidates with the same results";
    node0.Stop();
    node1.Stop();
    EXPECT_TRUE(node0.ended.ok()) << node0.ended;
    EXPECT_TRUE(node1.ended.ok()) << node1.ended;
    const EvaluatorNodeCounts c0 = node0.node.counts(), c1 = node1.node.counts();
    EXPECT_EQ(c0.duplicate + c1.duplicate + c0.stale + c1.stale + c0.not_held + c1.not_held, 0);
    EXPECT_EQ(c0.accepted + c1.accepted, c0.jobs_run + c1.jobs_run);
  }
  size_t prefetched = 0;
  for (auto& e : evaluators) {
    for (const auto& [id, n] : e.calls_by_id) calls[id] += n;
    for (const auto& batch : e.prefetched) prefetched += batch.size();
  }
  EXPECT_GT(prefetched, 0u) << "the search's compile-ahead hints reached the workers";
  EXPECT_EQ(calls, alone.calls_by_id) << "each candidate evaluated once, the same ones";
}

TEST_F(DistributedSearchTest, AVanishedWorkersJobGoesToAnotherWithinTheLeaseAndItsLateReportIsADuplicate) {
  CoordinatorServer coordinator({.lease = absl::Milliseconds(500),
                                 .session_ttl = absl::Seconds(1),
                                 .heartbeat_interval = absl::Milliseconds(100)});
  auto raw = coordinator.Link(kEvaluatorToken);
  v1::RegisterWorkerRequest hello;
  hello.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR);
  hello.mutable_worker()->set_slots(1);
  hello.mutable_worker()->set_arch("sm_90");
  auto session = raw->Register(hello);
  ASSERT_TRUE(session.ok()) << session.status();
  auto job = coordinator.work.Submit(JobFor("c1"));
  ASSERT_TRUE(job.ok());
  v1::PullEvaluationJobsRequest pull;
  pull.set_session_id(session->session_id());
  pull.set_max_jobs(1);
  auto taken = raw->Pull(pull);
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_EQ(taken->grants_size(), 1);
  const v1::EvaluationGrant vanished = taken->grants(0);  // and then it never heartbeats again

  IdEvaluator survivor_evaluator;
  auto survivor_link = coordinator.Link(kEvaluatorToken);
  RunningNode survivor(survivor_link.get(), &survivor_evaluator, "survivor");
  const absl::Time start = absl::Now();
  const v1::EvalResult result = coordinator.work.Await(*job);
  const absl::Duration relet = absl::Now() - start;
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_NONE) << result.failure_detail();
  EXPECT_DOUBLE_EQ(result.fitness(), 0.52);
  std::cerr << "re-leased and done " << absl::FormatDuration(relet) << " after the survivor started\n";

  // The vanished worker comes back and reports: judged by its attempt, never a second record.
  v1::ReportEvaluationRequest late;
  late.set_session_id(session->session_id());
  late.set_job_id(vanished.job().job_id());
  late.set_attempt(vanished.attempt());
  late.mutable_result()->set_candidate_id("c1");
  late.mutable_result()->set_task_name("t");
  late.mutable_result()->set_fitness(99);
  auto answer = raw->Report(late);
  if (absl::IsNotFound(answer.status())) {  // its session ended meanwhile: it registers again as itself
    hello.set_previous_session_id(session->session_id());
    ASSERT_TRUE(raw->Register(hello).ok());
    answer = raw->Report(late);
  }
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->outcome(), v1::REPORT_OUTCOME_DUPLICATE);
  EXPECT_DOUBLE_EQ(coordinator.work.Await(*job).fitness(), 0.52) << "the first result stays";
  late.set_job_id("c9/77");
  EXPECT_EQ(raw->Report(late)->outcome(), v1::REPORT_OUTCOME_NOT_HELD);
  survivor.Stop();
  EXPECT_EQ(survivor_evaluator.calls["c1"], 1);
  EXPECT_EQ(coordinator.work.QueueStats().done, 1);
}

TEST_F(DistributedSearchTest, SetUpRunsOnAWorkerAndBringsItsDeviceFacts) {
  CoordinatorServer coordinator({.wait_for_workers = absl::Seconds(30)});
  IdEvaluator evaluator;
  auto link = coordinator.Link(kEvaluatorToken);
  RunningNode node(link.get(), &evaluator, "node");
  EXPECT_EQ(coordinator.work.Device().sm_count, 0) << "not known before a set-up";
  ASSERT_TRUE(coordinator.work.SetUp(OneTask()).ok());
  EXPECT_EQ(coordinator.work.Device(), evaluator.Device()) << "told by the worker, read from its device";
  auto job = coordinator.work.Submit(JobFor("c1"));
  ASSERT_TRUE(job.ok());
  EXPECT_DOUBLE_EQ(coordinator.work.Await(*job).fitness(), 0.52);
  node.Stop();
  EXPECT_EQ(evaluator.set_ups, 1) << "a task is set up once per worker";
}

TEST_F(DistributedSearchTest, BadTokensAreRefusedAndNeverEchoed) {
  CoordinatorServer coordinator({});
  struct Case {
    const char* name;
    std::string token;
    absl::StatusCode want;
  };
  const Case cases[] = {
      {"no_token", "", absl::StatusCode::kUnauthenticated},
      {"unknown_token", "not-a-token-of-this-coordinator", absl::StatusCode::kUnauthenticated},
      {"client_token", kClientToken, absl::StatusCode::kPermissionDenied},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    IdEvaluator evaluator;
    auto link = coordinator.Link(c.token);
    ResultSpool* spool = nullptr;
    auto owned = ResultSpool::Open("");
    ASSERT_TRUE(owned.ok());
    spool = owned->get();
    EvaluatorNode node(link.get(), &evaluator, spool, NodeOptions("bad"));
    const absl::Status ended = node.Run();
    EXPECT_EQ(ended.code(), c.want) << ended;
    if (!c.token.empty()) EXPECT_THAT(std::string(ended.message()), Not(HasSubstr(c.token)));
  }
  EXPECT_TRUE(coordinator.work.LiveWorkers().empty());
}

TEST_F(DistributedSearchTest, GarbageAndOversizedMessagesAreRefusedAndTheServerGoesOn) {
  CoordinatorServer coordinator({});
  // Bytes that are no ReportEvaluationRequest, straight onto the method.
  grpc::GenericStub generic(grpc::CreateChannel(coordinator.address, grpc::InsecureChannelCredentials()));
  const std::string garbage = "\xff\xff\xff\xff\x0f garbage";
  grpc::Slice slice(garbage);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::ClientContext context;
  context.AddMetadata("authorization", std::string("Bearer ") + kEvaluatorToken);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  absl::Notification done;
  grpc::Status status;
  generic.UnaryCall(&context, "/sparseditto.v1.WorkerService/ReportEvaluation", grpc::StubOptions(), &request,
                    &response, [&](grpc::Status s) {
                      status = std::move(s);
                      done.Notify();
                    });
  done.WaitForNotification();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE) << "answered, not dropped: " << status.error_message();

  // A report bigger than the server takes (16 MiB), from a client that would send it.
  auto stub = v1::WorkerService::NewStub(grpc::CreateChannel(coordinator.address, grpc::InsecureChannelCredentials()));
  v1::ReportEvaluationRequest huge;
  huge.set_job_id("j");
  huge.mutable_result()->set_failure_detail(std::string(20 << 20, 'x'));
  grpc::ClientContext big;
  big.AddMetadata("authorization", std::string("Bearer ") + kEvaluatorToken);
  big.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ReportEvaluationResponse ignored;
  EXPECT_EQ(stub->ReportEvaluation(&big, huge, &ignored).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  // Still serving.
  auto link = coordinator.Link(kEvaluatorToken);
  v1::RegisterWorkerRequest hello;
  hello.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR);
  hello.mutable_worker()->set_slots(1);
  hello.mutable_worker()->set_arch("sm_90");
  EXPECT_TRUE(link->Register(hello).ok());
}

// A link whose reports fail as if the coordinator were unreachable, while `fail_reports` is set.
class CutOffReports final : public CoordinatorLink {
 public:
  explicit CutOffReports(CoordinatorLink* inner) : inner_(inner) {}
  absl::StatusOr<v1::RegisterWorkerResponse> Register(const v1::RegisterWorkerRequest& r) override {
    return inner_->Register(r);
  }
  absl::StatusOr<v1::PullEvaluationJobsResponse> Pull(const v1::PullEvaluationJobsRequest& r) override {
    return inner_->Pull(r);
  }
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& r) override {
    return inner_->Heartbeat(r);
  }
  absl::StatusOr<v1::ReportEvaluationResponse> Report(const v1::ReportEvaluationRequest&) override {
    return absl::UnavailableError("connection refused (cut off by the test)");
  }
  absl::Status Release(const v1::ReleaseEvaluationRequest& r) override { return inner_->Release(r); }

 private:
  CoordinatorLink* inner_;
};

TEST_F(DistributedSearchTest, AResultThatCouldNotBeReportedWaitsOnDiskAndTheNextWorkerReportsIt) {
  CoordinatorServer coordinator({});
  testing_support::TempFolder folder("distributed_spool");
  ASSERT_TRUE(folder.ok());
  const std::string spool_dir = (folder.path() / "spool").string();
  auto job = coordinator.work.Submit(JobFor("c22"));
  ASSERT_TRUE(job.ok());
  std::string first_session;
  {
    auto link = coordinator.Link(kEvaluatorToken);
    CutOffReports cut(link.get());
    IdEvaluator evaluator;
    RunningNode node(&cut, &evaluator, "first", spool_dir);
    for (int i = 0; i < 500 && node.node.counts().jobs_run == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
    node.Stop();  // killed before it could report (its drain's tries fail too)
    EXPECT_EQ(node.node.counts().jobs_run, 1);
    EXPECT_EQ(node.node.counts().accepted, 0);
    EXPECT_EQ(node.spool->Pending().size(), 1u);
    first_session = node.spool->Session();
  }
  EXPECT_EQ(coordinator.work.QueueStats().done, 0);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(spool_dir)) files += entry.path().extension() == ".report";
  EXPECT_EQ(files, 1u) << "the result is on disk";

  auto link = coordinator.Link(kEvaluatorToken);
  IdEvaluator evaluator;
  RunningNode next(link.get(), &evaluator, "second", spool_dir);
  const v1::EvalResult result = coordinator.work.Await(*job);
  EXPECT_DOUBLE_EQ(result.fitness(), 0.53);
  next.Stop();
  EXPECT_EQ(next.spool->Session(), first_session) << "it came back as the same session";
  EXPECT_EQ(next.node.counts().accepted, 1);
  EXPECT_EQ(next.node.counts().jobs_run, 0) << "reported, not evaluated again";
  for (const auto& p : next.spool->Pending()) ADD_FAILURE() << "still kept: " << p.ShortDebugString();
}

}  // namespace
}  // namespace sparseditto
