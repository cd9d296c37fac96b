// What coordinator_kill_test and its child share: the task, the loop's options, the coordinator's
// short leases and the token.
#pragma once

#include "coordinator/search/search_loop.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/testing/search_fixture.h"

namespace sparseditto::kill_test {

inline constexpr char kToken[] = "kill-test-evaluator-token-0123";

inline v1::Task Task() { return testing::SmallTask(36, "killed", 91); }

inline SearchLoopOptions LoopOptions() {
  SearchLoopOptions o = testing::TestLoopOptions();
  o.compile_ahead = 4;
  return o;
}

inline EvaluationWorkOptions WorkOptions() {
  // The lease bounds how long a worker may take to come back after the restart and still report the
  // job it held (else that job is evaluated again): 5 s, far above the workers' reconnection (their
  // channels retry within 200 ms), yet short enough for a grant lost in the kill to go out again soon.
  return {.lease = absl::Seconds(5),
          .session_ttl = absl::Seconds(6),
          .heartbeat_interval = absl::Milliseconds(200),
          .max_pull_wait = absl::Milliseconds(500),
          .wait_for_workers = absl::Seconds(60)};
}

}  // namespace sparseditto::kill_test
