// JobQueue under load: 8 taker threads (some die holding jobs, some come back after their lease
// ran out), 1 submitter that also cancels some, a few poison jobs that kill every taker they reach,
// and a driver thread that moves the fake clock and reclaims. Checked afterwards: every job ended
// exactly once, no job was accepted twice, and only the last attempt of a job was ever accepted.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/jobs/job_queue.h"
#include "coordinator/jobs/job_queue_test_util.h"
#include "gtest/gtest.h"

namespace sparseditto::jobs::testing {
namespace {

constexpr int kJobs = 2000;
constexpr int kTakers = 8;

std::string JobId(int index) { return "j" + std::to_string(index); }
// A job that kills (or hangs) every taker it reaches: it must end lost, not circle for ever.
bool IsPoison(int index) { return index % 250 == 7; }

// What the takers saw of one job.
struct JobTally {
  std::atomic<int> grants{0};
  std::atomic<int> highest_attempt_granted{0};
  std::atomic<int> accepted{0};
  std::atomic<int> accepted_attempt{0};
};

struct Counters {
  std::atomic<int> deaths{0};
  std::atomic<int> releases{0};
  std::atomic<int> stale{0};
  std::atomic<int> duplicate{0};
  std::atomic<int> not_held{0};
  std::atomic<int> wrong_platform{0};
  std::atomic<int> late_reports{0};           // from a taker whose lease had run out
  std::atomic<int> late_reports_accepted{0};  // must stay 0
};

void RaiseTo(std::atomic<int>& value, int at_least) {
  int seen = value.load();
  while (seen < at_least && !value.compare_exchange_weak(seen, at_least)) {
  }
}

// One taker thread: takes, sometimes dies (abandons its grants unreported and comes back under a
// new id, as a restarted worker would; always on a poison job), sometimes stalls past its leases
// without heartbeating and then reports, sometimes releases, otherwise heartbeats and reports.
void RunTaker(int index, TestQueue& queue, const FakeMonotonicClock& clock, std::vector<JobTally>& tallies,
              Counters& counters, const std::atomic<bool>& stop) {
  const std::string platform = index % 2 == 0 ? "sm_90a" : "sm_80";
  std::mt19937 rng(1234 + index);
  int generation = 0;
  while (!stop.load()) {
    const std::string taker = "t" + std::to_string(index) + "." + std::to_string(generation);
    absl::StatusOr<std::vector<TestQueue::Grant>> grants =
        queue.Take(taker, platform, 1 + static_cast<int>(rng() % 4), absl::Milliseconds(2));
    if (!grants.ok()) continue;
    for (const TestQueue::Grant& grant : *grants) {
      JobTally& tally = tallies[grant.job.number];
      tally.grants.fetch_add(1);
      RaiseTo(tally.highest_attempt_granted, grant.attempt);
      if (!grant.job.platform.empty() && grant.job.platform != platform) counters.wrong_platform.fetch_add(1);
    }
    bool poisoned = false;
    absl::Duration last_lease_end = absl::ZeroDuration();
    for (const TestQueue::Grant& grant : *grants) {
      poisoned = poisoned || IsPoison(grant.job.number);
      last_lease_end = std::max(last_lease_end, grant.lease_end);
    }
    if (poisoned || (!grants->empty() && rng() % 40 == 0)) {  // dies: never heartbeats or reports these
      counters.deaths.fetch_add(1);
      ++generation;
      continue;
    }
    const bool stalls = rng() % 25 == 0;
    if (stalls) {  // no heartbeat until every lease has run out on the queue's clock
      while (!stop.load() && clock.Now() < last_lease_end) std::this_thread::yield();
    } else {
      queue.Heartbeat(taker);
    }
    for (const TestQueue::Grant& grant : *grants) {
      if (rng() % 30 == 0 && queue.Release(taker, grant.job_id, grant.attempt).ok()) {
        counters.releases.fetch_add(1);
        continue;
      }
      JobTally& tally = tallies[grant.job.number];
      const ReportOutcome outcome =
          queue.Report(taker, grant.job_id, grant.attempt, TestResult{.taker = taker, .attempt = grant.attempt});
      if (stalls) {
        counters.late_reports.fetch_add(1);
        if (outcome == ReportOutcome::kAccepted) counters.late_reports_accepted.fetch_add(1);
      }
      switch (outcome) {
        case ReportOutcome::kAccepted:
          tally.accepted.fetch_add(1);
          tally.accepted_attempt.store(grant.attempt);
          break;
        case ReportOutcome::kStale: counters.stale.fetch_add(1); break;
        case ReportOutcome::kDuplicate: counters.duplicate.fetch_add(1); break;
        case ReportOutcome::kNotHeld: counters.not_held.fetch_add(1); break;
      }
    }
  }
}

TEST(JobQueueConcurrencyTest, EveryJobEndsExactlyOnceWhileTakersDie) {
  FakeMonotonicClock clock;
  TestQueue queue({}, &clock);  // lease 30 s, lost after 3 expiries
  std::vector<JobTally> tallies(kJobs);
  Counters counters;
  std::atomic<bool> stop{false};

  std::vector<std::thread> threads;
  std::thread submitter([&] {  // cancels every 100th job a little after submitting it
    for (int i = 0; i < kJobs; ++i) {
      const std::string platform = i % 2 == 0 ? "sm_90a" : "";
      EXPECT_TRUE(queue.Submit(JobId(i), platform, TestJob{.platform = platform, .number = i}).ok());
      if (i % 100 == 10) queue.Cancel(JobId(i - 10));
    }
  });
  threads.emplace_back([&] {  // the driver: a second of queue time per ~200 us of real time
    while (!stop.load()) {
      clock.Advance(absl::Seconds(1));
      queue.ReclaimExpired();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (int t = 0; t < kTakers; ++t) {
    threads.emplace_back([&, t] { RunTaker(t, queue, clock, tallies, counters, stop); });
  }

  submitter.join();  // an Await before its Submit would be NotFound
  std::vector<TestQueue::Outcome> outcomes;
  absl::Status failure;
  for (int i = 0; i < kJobs && failure.ok(); ++i) {
    absl::StatusOr<TestQueue::Outcome> outcome = queue.Await(JobId(i), absl::Seconds(120));
    if (outcome.ok()) outcomes.push_back(*std::move(outcome));
    else failure = outcome.status();
  }
  stop.store(true);
  queue.Close();
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(failure.ok()) << failure;

  const std::vector<TestQueue::Record> records = queue.Snapshot();
  ASSERT_EQ(records.size(), static_cast<size_t>(kJobs));
  int results = 0, lost = 0, cancelled = 0;
  for (int i = 0; i < kJobs; ++i) {
    const TestQueue::Outcome& outcome = outcomes[i];
    const JobTally& tally = tallies[i];
    const TestQueue::Record& record = records[i];
    SCOPED_TRACE(JobId(i));
    EXPECT_EQ(tally.grants.load(), record.attempt);  // every attempt granted once
    EXPECT_EQ(tally.highest_attempt_granted.load(), record.attempt);
    EXPECT_EQ(tally.accepted.load(), outcome.kind == OutcomeKind::kResult ? 1 : 0);
    if (IsPoison(i)) {
      EXPECT_EQ(outcome.kind, OutcomeKind::kLost);
    }
    switch (outcome.kind) {
      case OutcomeKind::kResult:
        ++results;
        ASSERT_TRUE(outcome.result.has_value());
        // Only the last attempt was accepted, and the result recorded is the accepted one.
        EXPECT_EQ(tally.accepted_attempt.load(), record.attempt);
        EXPECT_EQ(outcome.result->attempt, record.attempt);
        EXPECT_EQ(outcome.result->taker, record.holders.back());
        break;
      case OutcomeKind::kLost:
        ++lost;
        EXPECT_EQ(outcome.lost_attempts, 3);
        EXPECT_EQ(record.state, JobState::kLost);
        break;
      case OutcomeKind::kCancelled:
        ++cancelled;
        EXPECT_EQ(record.state, JobState::kCancelled);
        break;
    }
  }
  const JobQueueStats stats = queue.Stats();
  EXPECT_EQ(stats.ended(), kJobs);
  EXPECT_EQ(stats.done, results);
  EXPECT_EQ(stats.lost, lost);
  EXPECT_EQ(stats.cancelled, cancelled);
  EXPECT_EQ(counters.wrong_platform.load(), 0);
  EXPECT_EQ(counters.not_held.load(), 0);
  EXPECT_EQ(counters.late_reports_accepted.load(), 0);
  EXPECT_GT(results, 0);
  std::printf("%d results, %d lost, %d cancelled; %d deaths, %d releases, %d late reports; %d stale, "
              "%d duplicate reports\n",
              results, lost, cancelled, counters.deaths.load(), counters.releases.load(),
              counters.late_reports.load(), counters.stale.load(), counters.duplicate.load());
}

}  // namespace
}  // namespace sparseditto::jobs::testing
