// Test code only: the test's side of the kill tests (search_kill_test, llm_kill_test): it runs the
// child (kill_point.h) until it stops at a stop point and SIGKILLs it there, then starts it again on
// the same store.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::testing {

// The test's side: runs `argv` to its end (no `stop`) or, with `stop` appended to it, until it
// prints STOPPED, then SIGKILLs it. Returns its stdout. Fails the test when the stop is not reached
// or a run to the end does not succeed.
inline std::string RunUntilStopped(std::vector<std::string> argv, const std::string& stop) {
  SpawnOptions options;
  options.argv = std::move(argv);
  if (!stop.empty()) options.argv.push_back(stop);
  auto child = Spawn(options);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return "";
  const Deadline deadline = DeadlineAfter(120);
  // Pump returns at the child's exit or at its deadline: look for the stop between short rounds.
  while (Clock::now() < deadline &&
         (stop.empty() || (*child)->captured_stdout().bytes.find("STOPPED") == std::string::npos)) {
    auto event = (*child)->Pump(std::min(deadline, DeadlineAfter(0.05)));
    EXPECT_TRUE(event.ok()) << event.status();
    if (!event.ok() || *event == ChildProcess::PumpEvent::kExited) break;
  }
  if (!stop.empty()) {
    EXPECT_THAT((*child)->captured_stdout().bytes, ::testing::HasSubstr("STOPPED")) << "never reached " << stop;
    (*child)->Kill();
  }
  auto outcome = (*child)->WaitFor(deadline);
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  if (stop.empty() && outcome.ok()) {
    EXPECT_TRUE(outcome->success()) << outcome->ToString() << "\n" << (*child)->captured_stderr().bytes;
  }
  return (*child)->captured_stdout().bytes;
}

}  // namespace sparseditto::testing
