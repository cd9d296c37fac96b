// EvaluationWork's logic without the network, on a fake clock: sessions, grants by attempt, leases
// that run out and go to another worker, late reports judged by their attempt, pinned confirmation
// jobs, drain. The same object over real gRPC: distributed_search_test.cc.
#include "coordinator/server/evaluation_work.h"

#include <thread>

#include "coordinator/search/evaluation_job.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

v1::RegisterWorkerRequest Worker(const std::string& name, int slots = 1, const std::string& arch = "sm_90") {
  v1::RegisterWorkerRequest r;
  r.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR);
  r.mutable_worker()->set_name(name);
  r.mutable_worker()->set_slots(slots);
  r.mutable_worker()->set_arch(arch);
  r.mutable_worker()->mutable_device()->set_sm_count(name == "first" ? 132 : 108);
  return r;
}

v1::Task Task() {
  v1::Task t;
  t.set_name("t");
  return t;
}

v1::Candidate Candidate(const std::string& id) {
  v1::Candidate c;
  c.set_id(id);
  return c;
}

class EvaluationWorkTest : public ::testing::Test {
 protected:
  EvaluationWorkTest()
      : work_({.lease = absl::Seconds(30), .session_ttl = absl::Seconds(60), .wait_for_workers = absl::ZeroDuration()},
              &clock_) {}

  std::string Register(const std::string& name) {
    auto reply = work_.Register(Worker(name));
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->session_id() : "";
  }
  std::vector<v1::EvaluationGrant> PullNow(const std::string& session, int max_jobs = 10) {
    v1::PullEvaluationJobsRequest r;
    r.set_session_id(session);
    r.set_max_jobs(max_jobs);
    auto reply = work_.Pull(r);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return {};
    return {reply->grants().begin(), reply->grants().end()};
  }
  absl::StatusOr<v1::ReportOutcome> ReportOf(const std::string& session, const v1::EvaluationGrant& grant,
                                             double fitness = 1.0) {
    v1::ReportEvaluationRequest r;
    r.set_session_id(session);
    r.set_job_id(grant.job().job_id());
    r.set_attempt(grant.attempt());
    r.mutable_result()->set_candidate_id(grant.job().candidate().id());
    r.mutable_result()->set_task_name(grant.job().task().name());
    r.mutable_result()->set_fitness(fitness);
    auto reply = work_.Report(r);
    if (!reply.ok()) return reply.status();
    return reply->outcome();
  }
  v1::EvaluationJob SubmitJob(const std::string& candidate) {
    auto job = work_.Submit(MakeEvaluationJob(Task(), Candidate(candidate), 1, EvaluationKind::kFull));
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : v1::EvaluationJob();
  }
  // A heartbeat naming the jobs the worker holds (only their leases are renewed).
  void Heartbeat(const std::string& session, const std::vector<v1::EvaluationGrant>& holding = {}) {
    v1::HeartbeatRequest r;
    r.set_session_id(session);
    for (const v1::EvaluationGrant& g : holding) r.add_holding_job_ids(g.job().job_id());
    EXPECT_TRUE(work_.Heartbeat(r).ok());
  }

  jobs::FakeMonotonicClock clock_;
  EvaluationWork work_;
};

TEST_F(EvaluationWorkTest, RegisterRefusesWhatIsNotAnEvaluatorOfSomeArch) {
  struct Case {
    const char* name;
    std::function<void(v1::RegisterWorkerRequest&)> damage;
    const char* want;
  };
  const Case cases[] = {
      {"mutator", [](auto& r) { r.mutable_worker()->set_kind(v1::WORKER_KIND_MUTATOR); }, "evaluators only"},
      {"no_kind", [](auto& r) { r.mutable_worker()->clear_kind(); }, "evaluators only"},
      {"no_slots", [](auto& r) { r.mutable_worker()->set_slots(0); }, "slots 0 < 1"},
      {"no_arch", [](auto& r) { r.mutable_worker()->clear_arch(); }, "arch is empty"},
      {"forged_session", [](auto& r) { r.set_previous_session_id("../../etc"); }, "not a session id"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::RegisterWorkerRequest r = Worker("w");
    c.damage(r);
    auto reply = work_.Register(r);
    ASSERT_FALSE(reply.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(reply.status()));
    EXPECT_THAT(std::string(reply.status().message()), HasSubstr(c.want));
  }
  EXPECT_TRUE(work_.LiveWorkers().empty());
}

TEST_F(EvaluationWorkTest, SlotsAndDeviceFollowTheLiveSessions) {
  EXPECT_EQ(work_.Slots(), 1) << "at least one, so the loop submits";
  EXPECT_EQ(work_.Device().sm_count, 0);
  EXPECT_TRUE(absl::IsUnavailable(work_.SetUp(Task()))) << "no worker within wait_for_workers (zero here)";
  const std::string first = Register("first");
  ASSERT_TRUE(work_.Register(Worker("second", 3)).ok());
  ASSERT_TRUE(work_.Register(Worker("first", 2, "sm_90")).ok());  // "first" again is a third session
  absl::Status set_up;
  std::thread thread([&] { set_up = work_.SetUp(Task()); });
  std::vector<v1::EvaluationGrant> grants;
  for (int i = 0; i < 1000 && grants.empty(); ++i) {
    grants = PullNow(first);
    if (grants.empty()) absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_EQ(grants.size(), 1u) << "a set-up job";
  EXPECT_TRUE(grants[0].job().candidate().id().empty());
  EXPECT_EQ(ReportOf(first, grants[0]).value(), v1::REPORT_OUTCOME_ACCEPTED);
  thread.join();
  EXPECT_TRUE(set_up.ok()) << set_up;
  EXPECT_EQ(work_.Slots(), 1 + 3 + 2);
  EXPECT_EQ(work_.Device().sm_count, 132) << "the oldest session's GPU";
  clock_.Advance(absl::Seconds(61));
  EXPECT_EQ(work_.LiveWorkers().size(), 0u) << "unseen for longer than the ttl";
  EXPECT_EQ(work_.Slots(), 1);
}

// Sessions end in the order of their last call, each session_ttl after it, whatever the order of
// their ids or registrations (ExpireSessionsLocked looks only at the least recently seen).
TEST_F(EvaluationWorkTest, EachSessionEndsSessionTtlAfterItsOwnLastCall) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Register(fmt::format("w{}", i)));
  auto heartbeat = [&](int i) {
    v1::HeartbeatRequest r;
    r.set_session_id(ids[i]);
    return work_.Heartbeat(r).status();
  };
  auto live = [&] {
    std::vector<std::string> names;
    for (const v1::WorkerInfo& w : work_.LiveWorkers()) names.push_back(w.name());
    return names;
  };
  clock_.Advance(absl::Seconds(30));
  ASSERT_TRUE(heartbeat(3).ok());
  ASSERT_TRUE(heartbeat(1).ok());
  clock_.Advance(absl::Seconds(15));
  ASSERT_TRUE(heartbeat(0).ok());
  clock_.Advance(absl::Seconds(16));  // 61 s: w2 and w4 were last seen at 0
  EXPECT_THAT(live(), ::testing::ElementsAre("w0", "w1", "w3"));
  EXPECT_TRUE(absl::IsNotFound(heartbeat(2)));
  clock_.Advance(absl::Seconds(29));  // 90 s: w1 and w3 were last seen at 30
  EXPECT_TRUE(absl::IsNotFound(heartbeat(3)));
  EXPECT_THAT(live(), ::testing::ElementsAre("w0"));
  clock_.Advance(absl::Seconds(14));  // 104 s: w0, seen at 45, has 1 s left
  ASSERT_TRUE(heartbeat(0).ok());
  clock_.Advance(absl::Seconds(59));
  EXPECT_THAT(live(), ::testing::ElementsAre("w0")) << "its heartbeat at 104 s counts, not its first at 45 s";
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(live().empty());
}

TEST_F(EvaluationWorkTest, AnExpiredLeaseGoesToAnotherWorkerAndTheLateReportIsNotRecorded) {
  const std::string dead = Register("dead"), alive = Register("alive");
  const v1::EvaluationJob job = SubmitJob("c1");
  const auto first = PullNow(dead);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].attempt(), 1);
  EXPECT_EQ(first[0].lease_ms(), 30000);
  EXPECT_TRUE(PullNow(alive).empty()) << "leased to the other";
  clock_.Advance(absl::Seconds(20));
  Heartbeat(alive);  // the alive worker stays; the dead one's lease runs out
  clock_.Advance(absl::Seconds(11));
  const auto second = PullNow(alive);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].attempt(), 2);
  EXPECT_EQ(ReportOf(dead, first[0]).value(), v1::REPORT_OUTCOME_STALE) << "its attempt is over";
  EXPECT_EQ(ReportOf(alive, second[0], 0.7).value(), v1::REPORT_OUTCOME_ACCEPTED);
  EXPECT_EQ(ReportOf(alive, second[0], 0.9).value(), v1::REPORT_OUTCOME_DUPLICATE) << "the first result won";
  EXPECT_EQ(ReportOf(dead, first[0]).value(), v1::REPORT_OUTCOME_DUPLICATE);
  EXPECT_DOUBLE_EQ(work_.Await(job).fitness(), 0.7);
}

TEST_F(EvaluationWorkTest, ReportsAreJudgedByWhoHoldsWhatAndMustNameTheJobsCandidate) {
  const std::string a = Register("a"), b = Register("b");
  SubmitJob("c1");
  const auto grants = PullNow(a);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(ReportOf(b, grants[0]).value(), v1::REPORT_OUTCOME_NOT_HELD) << "b was never granted it";
  v1::EvaluationGrant forged = grants[0];
  forged.mutable_job()->set_job_id("no-such-job");
  EXPECT_EQ(ReportOf(a, forged).value(), v1::REPORT_OUTCOME_NOT_HELD);
  v1::EvaluationGrant other = grants[0];
  other.mutable_job()->mutable_candidate()->set_id("c2");
  auto wrong = ReportOf(a, other);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status()));
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("candidate 'c2'"));
  auto unknown = ReportOf("00000000000000000000000000000000", grants[0]);
  EXPECT_TRUE(absl::IsNotFound(unknown.status())) << "an unknown session must register again";
  EXPECT_EQ(ReportOf(a, grants[0]).value(), v1::REPORT_OUTCOME_ACCEPTED) << "nothing above changed the job";
}

TEST_F(EvaluationWorkTest, AWorkerCutOffPastItsSessionComesBackAsTheSameSession) {
  const std::string id = Register("w");
  SubmitJob("c1");
  const auto grants = PullNow(id);
  ASSERT_EQ(grants.size(), 1u);
  clock_.Advance(absl::Seconds(25));
  Heartbeat(id);
  clock_.Advance(absl::Seconds(61));  // session gone; the lease too
  EXPECT_TRUE(absl::IsNotFound(ReportOf(id, grants[0]).status()));
  v1::RegisterWorkerRequest again = Worker("w");
  again.set_previous_session_id(id);
  auto reply = work_.Register(again);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->session_id(), id);
  EXPECT_EQ(ReportOf(id, grants[0]).value(), v1::REPORT_OUTCOME_STALE) << "judged by its attempt";
  const auto regranted = PullNow(id);
  ASSERT_EQ(regranted.size(), 1u);
  EXPECT_EQ(regranted[0].attempt(), 2);
}

TEST_F(EvaluationWorkTest, HeartbeatsKeepALongJobLeasedForMinutes) {
  const std::string id = Register("w");
  SubmitJob("c1");
  const auto grants = PullNow(id);
  ASSERT_EQ(grants.size(), 1u);
  for (int i = 0; i < 20; ++i) {  // ten minutes, many leases long
    clock_.Advance(absl::Seconds(29));
    Heartbeat(id, grants);
  }
  EXPECT_EQ(ReportOf(id, grants[0]).value(), v1::REPORT_OUTCOME_ACCEPTED);
}

TEST_F(EvaluationWorkTest, AGrantItsWorkerNeverReceivedRunsOutThoughTheWorkerHeartbeats) {
  // The Pull answer was lost on the way (or the coordinator died after granting): the worker lives
  // and heartbeats, holding nothing; the job must not stay leased to it for ever.
  const std::string id = Register("w"), other = Register("other");
  SubmitJob("c1");
  const auto lost = PullNow(id);
  ASSERT_EQ(lost.size(), 1u);
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Seconds(25));
    Heartbeat(id);
    Heartbeat(other);
  }
  const auto regranted = PullNow(other);
  ASSERT_EQ(regranted.size(), 1u) << "the lease ran out after one lease length";
  EXPECT_EQ(regranted[0].attempt(), 2);
  EXPECT_EQ(ReportOf(other, regranted[0]).value(), v1::REPORT_OUTCOME_ACCEPTED);
}

TEST_F(EvaluationWorkTest, TheConfirmationIsPinnedToOneWorkerAndEndsWhenThatWorkerGoes) {
  const std::string first = Register("first"), second = Register("second");
  absl::Status retimed;
  std::thread confirm([&] { retimed = work_.RetimeBaselines(Task()); });
  std::vector<v1::EvaluationGrant> grants;
  for (int i = 0; i < 1000 && grants.empty(); ++i) {
    EXPECT_TRUE(PullNow(second).empty()) << "pinned to the oldest session";
    grants = PullNow(first);
    if (grants.empty()) absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_TRUE(grants[0].job().retime_baselines());
  EXPECT_TRUE(grants[0].job().candidate().id().empty());
  v1::ReportEvaluationRequest r;
  r.set_session_id(first);
  r.set_job_id(grants[0].job().job_id());
  r.set_attempt(1);
  r.mutable_result()->set_task_name("t");
  ASSERT_TRUE(work_.Report(r).ok());
  confirm.join();
  EXPECT_TRUE(retimed.ok()) << retimed;

  // The evaluations after it go to the same worker; when it goes, they end as typed failures.
  v1::EvalResult result;
  std::thread evaluate([&] { result = work_.Evaluate(Task(), Candidate("c1"), 1); });
  for (int i = 0; i < 1000 && work_.QueueStats().pending == 0; ++i) absl::SleepFor(absl::Milliseconds(2));
  EXPECT_TRUE(PullNow(second).empty());
  for (int i = 0; i < 7; ++i) {
    clock_.Advance(absl::Seconds(10));
    Heartbeat(second);  // only the second stays
  }
  evaluate.join();
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_INTERNAL);
  EXPECT_EQ(result.candidate_id(), "c1");
  EXPECT_THAT(result.failure_detail(), HasSubstr("cancelled"));
  EXPECT_EQ(result.fitness(), 0);
}

TEST_F(EvaluationWorkTest, CloseDrainsWorkersAndEndsWhatTheSearchAwaits) {
  const std::string id = Register("w");
  const v1::EvaluationJob job = SubmitJob("c1");
  work_.Close();
  v1::PullEvaluationJobsRequest pull;
  pull.set_session_id(id);
  pull.set_max_jobs(1);
  auto reply = work_.Pull(pull);
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE(reply->draining());
  EXPECT_EQ(reply->grants_size(), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(work_.Register(Worker("late")).status()));
  const v1::EvalResult result = work_.Await(job);
  EXPECT_EQ(result.failure(), v1::FAILURE_CATEGORY_INTERNAL);
  EXPECT_THAT(result.failure_detail(), HasSubstr("draining"));
}

TEST_F(EvaluationWorkTest, EachSessionGetsTheLatestHintOnceWithItsNextPull) {
  const std::string a = Register("a"), b = Register("b");
  work_.Hint(Task(), {Candidate("c1"), Candidate("c2")});
  v1::PullEvaluationJobsRequest r;
  r.set_max_jobs(1);
  auto prefetch_of = [&](const std::string& session) {
    r.set_session_id(session);
    auto reply = work_.Pull(r);
    EXPECT_TRUE(reply.ok());
    std::vector<std::string> ids;
    for (const v1::Candidate& c : reply->prefetch()) ids.push_back(c.id());
    return ids;
  };
  EXPECT_THAT(prefetch_of(a), ::testing::ElementsAre("c1", "c2"));
  EXPECT_THAT(prefetch_of(a), ::testing::IsEmpty()) << "once";
  EXPECT_THAT(prefetch_of(b), ::testing::ElementsAre("c1", "c2")) << "every session";
  work_.Hint(Task(), {Candidate("c3")});
  EXPECT_THAT(prefetch_of(a), ::testing::ElementsAre("c3")) << "the latest";
}

TEST(EvaluationWorkEventsTest, WorkersJoiningComingBackAndGoingAreTold) {
  jobs::FakeMonotonicClock clock;
  std::vector<std::string> events;
  EvaluationWork work({.session_ttl = absl::Seconds(60), .on_event = [&](const std::string& e) { events.push_back(e); }},
                      &clock);
  v1::RegisterWorkerRequest hello = Worker("node-1");
  hello.mutable_worker()->set_gpu_name("NVIDIA H200");
  const std::string id = work.Register(hello)->session_id();
  hello.set_previous_session_id(id);
  ASSERT_TRUE(work.Register(hello).ok());  // a reconnect
  clock.Advance(absl::Seconds(61));
  EXPECT_TRUE(work.LiveWorkers().empty());
  ASSERT_TRUE(work.Register(hello).ok());  // back after its session ended
  ASSERT_EQ(events.size(), 4u);
  EXPECT_THAT(events[0], HasSubstr("evaluator node-1 (NVIDIA H200, sm_90"));
  EXPECT_THAT(events[0], HasSubstr("joined"));
  EXPECT_THAT(events[1], HasSubstr("is back"));
  EXPECT_THAT(events[2], HasSubstr("node-1 gone"));
  EXPECT_THAT(events[3], HasSubstr("joined again"));
}

TEST_F(EvaluationWorkTest, MalformedPullsAreRefused) {
  const std::string id = Register("w");
  v1::PullEvaluationJobsRequest r;
  r.set_session_id(id);
  r.set_max_jobs(0);
  EXPECT_TRUE(absl::IsInvalidArgument(work_.Pull(r).status()));
  r.set_max_jobs(1);
  r.set_wait_ms(-5);
  EXPECT_TRUE(absl::IsInvalidArgument(work_.Pull(r).status()));
  r.set_wait_ms(0);
  r.set_session_id("nope");
  EXPECT_TRUE(absl::IsNotFound(work_.Pull(r).status()));
}

}  // namespace
}  // namespace sparseditto
