// What the job queue's tests share: a small Job and Result, a queue on a fake clock, and helpers
// that take without waiting and read one job's record. Tests only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "coordinator/jobs/job_queue.h"
#include "coordinator/jobs/monotonic_clock.h"
#include "gtest/gtest.h"

namespace sparseditto::jobs::testing {

struct TestJob {
  std::string platform;  // as submitted, so a taker can check what it was given
  int number = 0;
};
struct TestResult {
  std::string taker;
  int attempt = 0;
};
using TestQueue = JobQueue<TestJob, TestResult>;

constexpr absl::Duration kLease = absl::Seconds(30);  // JobQueueOptions' default
inline constexpr char kArch[] = "sm_90a";

// A queue on a fake clock with default options, or the options given.
class JobQueueTest : public ::testing::Test {
 protected:
  void Reopen(JobQueueOptions options) { queue_ = std::make_unique<TestQueue>(options, &clock_); }
  FakeMonotonicClock clock_;
  std::unique_ptr<TestQueue> queue_ = std::make_unique<TestQueue>(JobQueueOptions{}, &clock_);
};

inline void SubmitOrFail(TestQueue& queue, const std::string& id, const std::string& platform = "") {
  ASSERT_TRUE(queue.Submit(id, platform, TestJob{.platform = platform}).ok()) << id;
}

// Take without waiting; a failure is a test failure and an empty vector.
inline std::vector<TestQueue::Grant> TakeNow(TestQueue& queue, const std::string& taker, int max_jobs = 10,
                                             const std::string& platform = kArch) {
  absl::StatusOr<std::vector<TestQueue::Grant>> grants =
      queue.Take(taker, platform, max_jobs, absl::ZeroDuration());
  EXPECT_TRUE(grants.ok()) << grants.status();
  return grants.ok() ? *std::move(grants) : std::vector<TestQueue::Grant>{};
}

inline std::vector<std::string> IdsOf(const std::vector<TestQueue::Grant>& grants) {
  std::vector<std::string> ids;
  for (const TestQueue::Grant& grant : grants) ids.push_back(grant.job_id);
  return ids;
}

inline ReportOutcome ReportAs(TestQueue& queue, const std::string& taker, const std::string& id, int attempt) {
  return queue.Report(taker, id, attempt, TestResult{.taker = taker, .attempt = attempt});
}

// The record of job `id` in a snapshot of `queue`; nullopt when there is none.
inline std::optional<TestQueue::Record> RecordOf(TestQueue& queue, const std::string& id) {
  for (TestQueue::Record& record : queue.Snapshot()) {
    if (record.job_id == id) return record;
  }
  return std::nullopt;
}

}  // namespace sparseditto::jobs::testing
