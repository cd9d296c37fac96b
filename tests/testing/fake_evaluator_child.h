// The sparseditto binary started as a test's child with the fake evaluator behind it
// (SPARSEDITTO_FAKE_EVALUATOR_MS, cli/fake_search_backend.h), for the tests of `search` and `bench` on a
// machine without a GPU. Header-only, test code only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "gtest/gtest.h"

namespace sparseditto::testing_support {

// Starts `argv` (the binary first) with only PATH and HOME of this environment, each evaluation of the
// fake taking `ms` milliseconds; null (and the test failed) when it could not be started.
inline std::unique_ptr<ChildProcess> StartWithFakeEvaluator(std::vector<std::string> argv, int ms) {
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.inherit_variables = {"PATH", "HOME"};
  spawn.environment["SPARSEDITTO_FAKE_EVALUATOR_MS"] = std::to_string(ms);
  auto spawned = Spawn(spawn);
  EXPECT_TRUE(spawned.ok()) << spawned.status();
  return spawned.ok() ? *std::move(spawned) : nullptr;
}

}  // namespace sparseditto::testing_support
