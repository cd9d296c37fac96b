// Grants, leases and reports of JobQueue, on a fake clock: no sleeps, no timing asserted.
#include "coordinator/jobs/job_queue.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/jobs/job_queue_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::jobs::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

TEST_F(JobQueueTest, TakeGrantsMatchingPlatformsInSubmissionOrder) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, std::string>> jobs;  // id, platform
    std::string taker_platform;
    int max_jobs;
    std::vector<std::string> want;
  };
  const std::vector<std::pair<std::string, std::string>> mixed = {
      {"a", "sm_90a"}, {"b", "sm_80"}, {"c", ""}, {"d", "sm_90a"}};
  const Case cases[] = {
      {"any_platform", {{"a", ""}, {"b", ""}, {"c", ""}}, "sm_90a", 10, {"a", "b", "c"}},
      {"own_and_any", mixed, "sm_90a", 10, {"a", "c", "d"}},
      {"other_arch", mixed, "sm_80", 10, {"b", "c"}},
      {"taker_without_platform", mixed, "", 10, {"c"}},
      {"max_jobs_1", mixed, "sm_90a", 1, {"a"}},
      {"max_jobs_2", mixed, "sm_90a", 2, {"a", "c"}},
      {"none_matches", {{"a", "sm_80"}}, "sm_90a", 10, {}},
      {"empty_queue", {}, "sm_90a", 10, {}},
      {"pinned_to_this_taker", {{"a", "@w1"}, {"b", "sm_80"}}, "sm_90a", 10, {"a"}},
      {"pinned_to_another_taker", {{"a", "@w2"}, {"b", "@w"}, {"c", "@w10"}, {"d", "w1"}}, "sm_90a", 10, {}},
      {"pinned_without_platform", {{"a", PinnedTo("w1")}}, "", 10, {"a"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Reopen({});
    for (const auto& [id, platform] : c.jobs) SubmitOrFail(*queue_, id, platform);
    const std::vector<TestQueue::Grant> grants = TakeNow(*queue_, "w1", c.max_jobs, c.taker_platform);
    EXPECT_THAT(IdsOf(grants), ElementsAreArray(c.want));
    for (const TestQueue::Grant& grant : grants) {
      EXPECT_EQ(grant.attempt, 1);
      EXPECT_EQ(grant.lease_end, clock_.Now() + kLease);
      EXPECT_EQ(grant.lease, kLease);
      EXPECT_TRUE(grant.job.platform.empty() || grant.job.platform == c.taker_platform ||
                  grant.job.platform == PinnedTo("w1"));
    }
    EXPECT_EQ(queue_->Stats().leased, static_cast<int64_t>(c.want.size()));
  }
}

TEST_F(JobQueueTest, TakeRejectsAnEmptyTakerAndMaxJobsBelowOne) {
  struct Case {
    std::string taker;
    int max_jobs;
  };
  SubmitOrFail(*queue_, "a");
  for (const Case& c : {Case{"", 1}, Case{"w1", 0}, Case{"w1", -3}}) {
    EXPECT_EQ(queue_->Take(c.taker, kArch, c.max_jobs, absl::ZeroDuration()).status().code(),
              absl::StatusCode::kInvalidArgument)
        << "'" << c.taker << "' " << c.max_jobs;
  }
  EXPECT_EQ(queue_->Stats().pending, 1);
}

TEST_F(JobQueueTest, EveryGrantIsTheNextAttempt) {
  SubmitOrFail(*queue_, "a");
  EXPECT_EQ(TakeNow(*queue_, "w1").at(0).attempt, 1);
  ASSERT_TRUE(queue_->Release("w1", "a", 1).ok());
  EXPECT_EQ(TakeNow(*queue_, "w2").at(0).attempt, 2);
  clock_.Advance(kLease);
  EXPECT_EQ(TakeNow(*queue_, "w3").at(0).attempt, 3);
  EXPECT_EQ(RecordOf(*queue_, "a")->holders, (std::vector<std::string>{"w1", "w2", "w3"}));
  EXPECT_EQ(RecordOf(*queue_, "a")->lost_count, 1);
}

TEST_F(JobQueueTest, ExpiredLeaseIsGrantedAgainAndOnlyTheCurrentAttemptIsAccepted) {
  SubmitOrFail(*queue_, "a");
  ASSERT_THAT(IdsOf(TakeNow(*queue_, "w1")), ElementsAre("a"));
  clock_.Advance(kLease + absl::Seconds(1));
  const std::vector<TestQueue::Grant> again = TakeNow(*queue_, "w2");
  ASSERT_THAT(IdsOf(again), ElementsAre("a"));
  EXPECT_EQ(again[0].attempt, 2);

  EXPECT_EQ(ReportAs(*queue_, "w1", "a", 1), ReportOutcome::kStale);
  EXPECT_EQ(ReportAs(*queue_, "w2", "a", 2), ReportOutcome::kAccepted);
  EXPECT_EQ(ReportAs(*queue_, "w2", "a", 2), ReportOutcome::kDuplicate);
  EXPECT_EQ(ReportAs(*queue_, "w1", "a", 1), ReportOutcome::kDuplicate);

  absl::StatusOr<TestQueue::Outcome> outcome = queue_->Await("a", absl::ZeroDuration());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kResult);
  ASSERT_TRUE(outcome->result.has_value());
  EXPECT_EQ(outcome->result->taker, "w2");
  EXPECT_EQ(outcome->lost_attempts, 1);
  // The old holder learns that it lost the lease.
  EXPECT_THAT(queue_->Heartbeat("w1").revoked_job_ids, ElementsAre("a"));
}

TEST_F(JobQueueTest, HeartbeatsKeepEveryLeaseOfTheTakerPastManyLeaseLengths) {
  SubmitOrFail(*queue_, "a");
  SubmitOrFail(*queue_, "b");
  ASSERT_EQ(TakeNow(*queue_, "w1").size(), 2u);
  for (int i = 0; i < 10; ++i) {  // 10 x 25 s: more than eight leases
    clock_.Advance(absl::Seconds(25));
    const HeartbeatReply reply = queue_->Heartbeat("w1");
    EXPECT_EQ(reply.leases_renewed, 2);
    EXPECT_THAT(reply.revoked_job_ids, IsEmpty());
    EXPECT_THAT(TakeNow(*queue_, "w2"), IsEmpty());
  }
  EXPECT_EQ(ReportAs(*queue_, "w1", "a", 1), ReportOutcome::kAccepted);
  EXPECT_EQ(ReportAs(*queue_, "w1", "b", 1), ReportOutcome::kAccepted);
}

TEST_F(JobQueueTest, AJobThatLosesItsLeaseMaxTimesEndsAsLost) {
  for (int max_lost : {1, 3, 5}) {
    SCOPED_TRACE(max_lost);
    Reopen({.max_lost_attempts = max_lost});
    SubmitOrFail(*queue_, "a");
    for (int attempt = 1; attempt <= max_lost; ++attempt) {
      const std::vector<TestQueue::Grant> grants = TakeNow(*queue_, "w" + std::to_string(attempt));
      ASSERT_EQ(grants.size(), 1u);
      EXPECT_EQ(grants[0].attempt, attempt);
      clock_.Advance(kLease);
    }
    EXPECT_THAT(TakeNow(*queue_, "w0"), IsEmpty());
    absl::StatusOr<TestQueue::Outcome> outcome = queue_->Await("a", absl::ZeroDuration());
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->kind, OutcomeKind::kLost);
    EXPECT_EQ(outcome->lost_attempts, max_lost);
    EXPECT_FALSE(outcome->result.has_value());
    EXPECT_EQ(outcome->message,
              "job a lost its worker " + std::to_string(max_lost) + " times (lease 30s)");
    EXPECT_EQ(queue_->Stats().lost, 1);
    EXPECT_EQ(ReportAs(*queue_, "w1", "a", 1), ReportOutcome::kDuplicate);
  }
}

TEST_F(JobQueueTest, ReleaseKeepsTheLostCountAndTheJobsPlaceInFront) {
  SubmitOrFail(*queue_, "a");
  SubmitOrFail(*queue_, "b");
  SubmitOrFail(*queue_, "c");
  ASSERT_THAT(IdsOf(TakeNow(*queue_, "w1", 1)), ElementsAre("a"));
  clock_.Advance(kLease);  // lost once
  ASSERT_THAT(IdsOf(TakeNow(*queue_, "w2", 1)), ElementsAre("a"));
  ASSERT_TRUE(queue_->Release("w2", "a", 2).ok());
  EXPECT_EQ(RecordOf(*queue_, "a")->state, JobState::kPending);
  EXPECT_EQ(RecordOf(*queue_, "a")->lost_count, 1);
  const std::vector<TestQueue::Grant> grants = TakeNow(*queue_, "w3", 3);
  EXPECT_THAT(IdsOf(grants), ElementsAre("a", "b", "c"));
  EXPECT_EQ(grants[0].attempt, 3);
  EXPECT_EQ(ReportAs(*queue_, "w2", "a", 2), ReportOutcome::kStale);
}

TEST_F(JobQueueTest, ReleaseFailsUnlessTheTakerHoldsThatAttempt) {
  struct Case {
    const char* name;
    std::string taker, job;
    int attempt;
    absl::StatusCode want;
  };
  const Case cases[] = {
      {"holder", "w1", "a", 1, absl::StatusCode::kOk},
      {"other_taker", "w2", "a", 1, absl::StatusCode::kFailedPrecondition},
      {"other_attempt", "w1", "a", 2, absl::StatusCode::kFailedPrecondition},
      {"unknown_job", "w1", "zz", 1, absl::StatusCode::kNotFound},
      {"pending_job", "w1", "b", 1, absl::StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    Reopen({});
    SubmitOrFail(*queue_, "a");
    ASSERT_EQ(TakeNow(*queue_, "w1", 1).size(), 1u);
    SubmitOrFail(*queue_, "b");
    EXPECT_EQ(queue_->Release(c.taker, c.job, c.attempt).code(), c.want) << c.name;
    EXPECT_EQ(queue_->Stats().leased, c.want == absl::StatusCode::kOk ? 0 : 1) << c.name;
  }
  // A lease that expired is no longer the taker's to release.
  Reopen({});
  SubmitOrFail(*queue_, "a");
  ASSERT_EQ(TakeNow(*queue_, "w1").size(), 1u);
  clock_.Advance(kLease);
  EXPECT_EQ(queue_->Release("w1", "a", 1).code(), absl::StatusCode::kFailedPrecondition);
}

// Each case brings job "a" (taken by w1 as attempt 1) to a state, then a report, and checks the
// outcome and the job's state after it.
TEST_F(JobQueueTest, ReportOutcomeFollowsTheAttemptsState) {
  using Setup = std::function<void(TestQueue&, FakeMonotonicClock&)>;
  struct Case {
    const char* name;
    Setup setup;
    std::string taker, job;
    int attempt;
    ReportOutcome want;
    JobState state_after;
  };
  const Setup nothing = [](TestQueue&, FakeMonotonicClock&) {};
  const Setup expire = [](TestQueue&, FakeMonotonicClock& clock) { clock.Advance(kLease); };
  const Setup regrant = [](TestQueue& q, FakeMonotonicClock& clock) {
    clock.Advance(kLease);
    EXPECT_EQ(TakeNow(q, "w2").size(), 1u);
  };
  const Setup accept = [](TestQueue& q, FakeMonotonicClock&) {
    EXPECT_EQ(ReportAs(q, "w1", "a", 1), ReportOutcome::kAccepted);
  };
  const Setup release = [](TestQueue& q, FakeMonotonicClock&) { EXPECT_TRUE(q.Release("w1", "a", 1).ok()); };
  const Setup cancel = [](TestQueue& q, FakeMonotonicClock&) { q.Cancel("a"); };
  const Setup almost_expire = [](TestQueue&, FakeMonotonicClock& clock) {
    clock.Advance(kLease - absl::Nanoseconds(1));
  };
  const Case cases[] = {
      {"current_holder", nothing, "w1", "a", 1, ReportOutcome::kAccepted, JobState::kDone},
      {"just_before_the_end", almost_expire, "w1", "a", 1, ReportOutcome::kAccepted, JobState::kDone},
      {"at_the_lease_end", expire, "w1", "a", 1, ReportOutcome::kStale, JobState::kPending},
      {"expired_granted_again", regrant, "w1", "a", 1, ReportOutcome::kStale, JobState::kLeased},
      {"new_holder", regrant, "w2", "a", 2, ReportOutcome::kAccepted, JobState::kDone},
      {"released", release, "w1", "a", 1, ReportOutcome::kStale, JobState::kPending},
      {"second_report", accept, "w1", "a", 1, ReportOutcome::kDuplicate, JobState::kDone},
      {"after_cancel", cancel, "w1", "a", 1, ReportOutcome::kDuplicate, JobState::kCancelled},
      {"unknown_job", nothing, "w1", "zz", 1, ReportOutcome::kNotHeld, JobState::kLeased},
      {"never_held", nothing, "w9", "a", 1, ReportOutcome::kNotHeld, JobState::kLeased},
      {"never_held_after_done", accept, "w9", "a", 1, ReportOutcome::kNotHeld, JobState::kDone},
      {"attempt_not_granted", nothing, "w1", "a", 2, ReportOutcome::kNotHeld, JobState::kLeased},
      {"attempt_zero", nothing, "w1", "a", 0, ReportOutcome::kNotHeld, JobState::kLeased},
      {"attempt_of_another", regrant, "w1", "a", 2, ReportOutcome::kNotHeld, JobState::kLeased},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Reopen({});
    SubmitOrFail(*queue_, "a");
    ASSERT_EQ(TakeNow(*queue_, "w1").size(), 1u);
    c.setup(*queue_, clock_);
    EXPECT_EQ(ReportAs(*queue_, c.taker, c.job, c.attempt), c.want)
        << "got " << ReportOutcomeName(ReportAs(*queue_, c.taker, c.job, c.attempt));
    EXPECT_EQ(RecordOf(*queue_, "a")->state, c.state_after) << JobStateName(RecordOf(*queue_, "a")->state);
    if (c.want == ReportOutcome::kAccepted) {
      EXPECT_EQ(queue_->Await("a", absl::ZeroDuration())->result->taker, c.taker);
    }
  }
}

TEST_F(JobQueueTest, SubmitRejectsEmptyAndRepeatedIdsAndAClosedQueue) {
  SubmitOrFail(*queue_, "done");
  SubmitOrFail(*queue_, "leased");
  SubmitOrFail(*queue_, "pending");
  ASSERT_THAT(IdsOf(TakeNow(*queue_, "w1", 2)), ElementsAre("done", "leased"));
  ASSERT_EQ(ReportAs(*queue_, "w1", "done", 1), ReportOutcome::kAccepted);
  struct Case {
    std::string id;
    absl::StatusCode want;
  };
  const Case cases[] = {{"pending", absl::StatusCode::kAlreadyExists},
                        {"leased", absl::StatusCode::kAlreadyExists},
                        {"done", absl::StatusCode::kAlreadyExists},
                        {"", absl::StatusCode::kInvalidArgument},
                        {"new", absl::StatusCode::kOk}};
  for (const Case& c : cases) EXPECT_EQ(queue_->Submit(c.id, "", TestJob{}).code(), c.want) << c.id;
  queue_->Close();
  EXPECT_EQ(queue_->Submit("after_close", "", TestJob{}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Stats().total(), 4);
}

}  // namespace
}  // namespace sparseditto::jobs::testing
