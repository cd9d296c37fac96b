// Cancel, Close, Await, Stats, Snapshot/Restore and the blocking calls of JobQueue; the clocks; a
// protobuf instantiation. Threads only where a call must block; outcomes asserted, never times.
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "coordinator/jobs/job_queue.h"
#include "coordinator/jobs/job_queue_test_util.h"
#include "coordinator/jobs/monotonic_clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"

namespace sparseditto::jobs::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A generous real bound for calls that must return once another thread acts.
constexpr auto kGenerous = std::chrono::seconds(60);
constexpr absl::Duration kLongWait = absl::Minutes(2);

TEST_F(JobQueueTest, CancelEndsAPendingJobAtOnce) {
  SubmitOrFail(*queue_, "a");
  queue_->Cancel("a");
  absl::StatusOr<TestQueue::Outcome> outcome = queue_->Await("a", absl::ZeroDuration());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kCancelled);
  EXPECT_EQ(outcome->message, "job a was cancelled");
  EXPECT_THAT(TakeNow(*queue_, "w1"), IsEmpty());
  EXPECT_EQ(queue_->Stats().cancelled, 1);
}

TEST_F(JobQueueTest, CancelOfALeasedJobReachesItsHolderInTheNextHeartbeat) {
  SubmitOrFail(*queue_, "a");
  SubmitOrFail(*queue_, "b");
  ASSERT_EQ(TakeNow(*queue_, "w1").size(), 2u);
  queue_->Cancel("a");
  const HeartbeatReply reply = queue_->Heartbeat("w1");
  EXPECT_THAT(reply.cancelled_job_ids, ElementsAre("a"));
  EXPECT_EQ(reply.leases_renewed, 1);  // only "b" is still held
  EXPECT_THAT(queue_->Heartbeat("w1").cancelled_job_ids, IsEmpty());  // told once
  EXPECT_EQ(ReportAs(*queue_, "w1", "a", 1), ReportOutcome::kDuplicate);
  EXPECT_EQ(queue_->Await("a", absl::ZeroDuration())->kind, OutcomeKind::kCancelled);
  // Cancelling an ended or unknown job changes nothing.
  ASSERT_EQ(ReportAs(*queue_, "w1", "b", 1), ReportOutcome::kAccepted);
  queue_->Cancel("b");
  queue_->Cancel("zz");
  EXPECT_EQ(queue_->Await("b", absl::ZeroDuration())->kind, OutcomeKind::kResult);
}

TEST_F(JobQueueTest, HeartbeatOfATakerHoldingNothingIsEmptyAndSaysClosing) {
  HeartbeatReply reply = queue_->Heartbeat("nobody");
  EXPECT_EQ(reply.leases_renewed, 0);
  EXPECT_THAT(reply.cancelled_job_ids, IsEmpty());
  EXPECT_THAT(reply.revoked_job_ids, IsEmpty());
  EXPECT_FALSE(reply.closing);
  queue_->Close();
  EXPECT_TRUE(queue_->Heartbeat("nobody").closing);
}

TEST_F(JobQueueTest, AwaitSaysNotFoundAndDeadlineExceeded) {
  SubmitOrFail(*queue_, "a");
  EXPECT_EQ(queue_->Await("zz", absl::ZeroDuration()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(queue_->Await("a", absl::ZeroDuration()).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(queue_->Await("a", absl::Milliseconds(1)).status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(JobQueueTest, StatsCountJobsByState) {
  Reopen({.max_lost_attempts = 1});
  for (const char* id : {"lost", "done", "leased", "cancelled", "pending"}) SubmitOrFail(*queue_, id);
  ASSERT_EQ(TakeNow(*queue_, "w1", 1).size(), 1u);  // "lost"
  clock_.Advance(kLease);
  ASSERT_EQ(TakeNow(*queue_, "w1", 2).size(), 2u);  // "done", "leased"
  ASSERT_EQ(ReportAs(*queue_, "w1", "done", 1), ReportOutcome::kAccepted);
  queue_->Cancel("cancelled");
  const JobQueueStats stats = queue_->Stats();
  EXPECT_EQ(stats.pending, 1);
  EXPECT_EQ(stats.leased, 1);
  EXPECT_EQ(stats.done, 1);
  EXPECT_EQ(stats.lost, 1);
  EXPECT_EQ(stats.cancelled, 1);
  EXPECT_EQ(stats.ended(), 3);
}

TEST_F(JobQueueTest, RenewAllLeasesGivesEveryLeaseAFreshWindow) {
  SubmitOrFail(*queue_, "a");
  ASSERT_EQ(TakeNow(*queue_, "w1").size(), 1u);
  clock_.Advance(kLease - absl::Seconds(1));
  queue_->RenewAllLeases();
  clock_.Advance(kLease - absl::Seconds(1));
  EXPECT_THAT(TakeNow(*queue_, "w2"), IsEmpty());
  EXPECT_EQ(ReportAs(*queue_, "w1", "a", 1), ReportOutcome::kAccepted);
}

TEST_F(JobQueueTest, SnapshotAndRestoreKeepEveryJobAndGiveLeasesAFreshWindow) {
  for (const char* id : {"done", "leased", "pending", "cancelled"}) SubmitOrFail(*queue_, id);
  ASSERT_EQ(TakeNow(*queue_, "w1", 2).size(), 2u);  // "done", "leased"
  ASSERT_EQ(ReportAs(*queue_, "w1", "done", 1), ReportOutcome::kAccepted);
  queue_->Cancel("cancelled");
  clock_.Advance(absl::Seconds(29));  // "leased" has 1 s left

  // A restart: a new process whose clock has another origin.
  FakeMonotonicClock restarted(absl::Hours(5));
  absl::StatusOr<std::unique_ptr<TestQueue>> restored = TestQueue::Restore(queue_->Snapshot(), {}, &restarted);
  ASSERT_TRUE(restored.ok()) << restored.status();
  TestQueue& queue = **restored;
  const JobQueueStats stats = queue.Stats();
  EXPECT_EQ(stats.done, 1);
  EXPECT_EQ(stats.leased, 1);
  EXPECT_EQ(stats.pending, 1);
  EXPECT_EQ(stats.cancelled, 1);

  restarted.Advance(kLease - absl::Seconds(1));
  EXPECT_THAT(IdsOf(TakeNow(queue, "w2")), ElementsAre("pending"));  // not "leased"
  EXPECT_EQ(queue.Heartbeat("w1").leases_renewed, 1);
  EXPECT_EQ(ReportAs(queue, "w9", "leased", 1), ReportOutcome::kNotHeld);
  EXPECT_EQ(ReportAs(queue, "w1", "leased", 1), ReportOutcome::kAccepted);
  absl::StatusOr<TestQueue::Outcome> done = queue.Await("done", absl::ZeroDuration());
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_TRUE(done->result.has_value());
  EXPECT_EQ(done->result->taker, "w1");
  EXPECT_EQ(queue.Await("cancelled", absl::ZeroDuration())->kind, OutcomeKind::kCancelled);
  EXPECT_EQ(queue.Submit("done", "", TestJob{}).code(), absl::StatusCode::kAlreadyExists);
}

TEST(JobQueueRestoreTest, RejectsRecordsThatContradictThemselves) {
  TestQueue::Record leased;
  leased.job_id = "a";
  leased.state = JobState::kLeased;
  leased.attempt = 1;
  leased.holders = {"w1"};
  struct Case {
    const char* name;
    std::vector<TestQueue::Record> records;
  };
  auto changed = [&](auto change) {
    TestQueue::Record record = leased;
    change(record);
    return std::vector<TestQueue::Record>{record};
  };
  const Case cases[] = {
      {"repeated_id", {leased, leased}},
      {"empty_id", changed([](TestQueue::Record& r) { r.job_id.clear(); })},
      {"holders_not_attempts", changed([](TestQueue::Record& r) { r.holders.push_back("w2"); })},
      {"leased_never_granted", changed([](TestQueue::Record& r) {
                                   r.attempt = 0;
                                   r.holders.clear();
                                 })},
      {"done_without_result", changed([](TestQueue::Record& r) { r.state = JobState::kDone; })},
      {"result_but_not_done", changed([](TestQueue::Record& r) { r.result = TestResult{}; })},
      {"negative_lost_count", changed([](TestQueue::Record& r) { r.lost_count = -1; })},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TestQueue::Restore(c.records).status().code(), absl::StatusCode::kInvalidArgument) << c.name;
  }
  EXPECT_TRUE(TestQueue::Restore({leased}).ok());
}

TEST_F(JobQueueTest, ATakeThatWaitsReturnsWhenAnotherThreadSubmits) {
  auto taken = std::async(std::launch::async, [&] { return queue_->Take("w1", kArch, 4, kLongWait); });
  std::thread submitter([&] { SubmitOrFail(*queue_, "a", kArch); });
  submitter.join();
  ASSERT_EQ(taken.wait_for(kGenerous), std::future_status::ready);
  absl::StatusOr<std::vector<TestQueue::Grant>> grants = taken.get();
  ASSERT_TRUE(grants.ok()) << grants.status();
  EXPECT_THAT(IdsOf(*grants), ElementsAre("a"));
}

TEST_F(JobQueueTest, CloseWakesAWaitingTakeAndAwait) {
  SubmitOrFail(*queue_, "other_platform", "sm_80");
  auto taken = std::async(std::launch::async, [&] { return queue_->Take("w1", kArch, 1, kLongWait); });
  auto awaited = std::async(std::launch::async, [&] { return queue_->Await("other_platform", kLongWait); });
  queue_->Close();
  ASSERT_EQ(taken.wait_for(kGenerous), std::future_status::ready);
  ASSERT_EQ(awaited.wait_for(kGenerous), std::future_status::ready);
  absl::StatusOr<std::vector<TestQueue::Grant>> grants = taken.get();
  ASSERT_TRUE(grants.ok()) << grants.status();
  EXPECT_THAT(*grants, IsEmpty());
  EXPECT_EQ(awaited.get().status().code(), absl::StatusCode::kCancelled);
}

// On the steady clock a waiting Take wakes by itself when a lease expires: no other call needed.
TEST(JobQueueSteadyClockTest, AWaitingTakeGetsAJobWhoseLeaseExpires) {
  TestQueue queue({.lease = absl::Milliseconds(20)});
  SubmitOrFail(queue, "a");
  ASSERT_EQ(TakeNow(queue, "w1").size(), 1u);
  absl::StatusOr<std::vector<TestQueue::Grant>> grants = queue.Take("w2", kArch, 1, absl::Seconds(60));
  ASSERT_TRUE(grants.ok()) << grants.status();
  ASSERT_THAT(IdsOf(*grants), ElementsAre("a"));
  EXPECT_EQ((*grants)[0].attempt, 2);
}

TEST(JobQueueProtobufTest, WorksWithProtobufMessages) {
  using ProtoQueue = JobQueue<google::protobuf::Duration, google::protobuf::Duration>;
  FakeMonotonicClock clock;
  ProtoQueue queue({}, &clock);
  google::protobuf::Duration job;
  job.set_seconds(7);
  ASSERT_TRUE(queue.Submit("a", kArch, job).ok());
  absl::StatusOr<std::vector<ProtoQueue::Grant>> grants = queue.Take("w1", kArch, 1, absl::ZeroDuration());
  ASSERT_TRUE(grants.ok() && grants->size() == 1);
  EXPECT_EQ((*grants)[0].job.seconds(), 7);
  google::protobuf::Duration result;
  result.set_nanos(42);
  EXPECT_EQ(queue.Report("w1", "a", 1, result), ReportOutcome::kAccepted);
  absl::StatusOr<ProtoQueue::Outcome> outcome = queue.Await("a", absl::ZeroDuration());
  ASSERT_TRUE(outcome.ok() && outcome->result.has_value());
  EXPECT_EQ(outcome->result->nanos(), 42);
  EXPECT_EQ(queue.Snapshot().at(0).result->nanos(), 42);
}

TEST(MonotonicClockTest, FakeMovesOnlyForwardAndSteadyNeverGoesBack) {
  FakeMonotonicClock fake(absl::Seconds(3));
  fake.Advance(absl::Seconds(2));
  fake.Advance(-absl::Seconds(10));
  EXPECT_EQ(fake.Now(), absl::Seconds(5));
  SteadyMonotonicClock steady;
  const absl::Duration first = steady.Now();
  EXPECT_GE(steady.Now(), first);
}

TEST(JobQueueOptionsTest, InvalidOptionsReadAsDefaults) {
  TestQueue queue({.lease = -absl::Seconds(1), .max_lost_attempts = 0});
  EXPECT_EQ(queue.options().lease, kLease);
  EXPECT_EQ(queue.options().max_lost_attempts, 1);
}

}  // namespace
}  // namespace sparseditto::jobs::testing
