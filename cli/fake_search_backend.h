// A test seam of `sparseditto search` and `bench`, for the tests that run the real binary on a machine
// without a GPU (tests/search_signals_test.cc, tests/bench_command_test.cc): with
// SPARSEDITTO_FAKE_EVALUATOR_MS=<ms> in the environment, the command's evaluations go to the
// deterministic fake evaluator of the coordinator's tests (coordinator/testing/fake_evaluator.h: fitness
// a pure function of each candidate's tunables), each taking <ms> milliseconds, instead of the GPU.
// Everything else (store, loop, table, events, signals, exit codes) is the command's own. The command
// says on stderr that the fake is in use, and a run's provenance records nothing of a GPU; never set it
// for a real search or bench.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/search_common.h"
#include "task.pb.h"

namespace sparseditto {

// The delay the variable asks for, nullopt when unset; InvalidArgument when it is not 0..60000.
absl::StatusOr<std::optional<int>> FakeEvaluatorDelayMs();

// The fake backend over the landscape of `tasks`' first task and the installed seed library.
absl::StatusOr<std::unique_ptr<SearchBackend>> MakeFakeSearchBackend(const std::vector<v1::Task>& tasks, int delay_ms);

// The same fake as `sparseditto bench`'s evaluator (the variable works there too): times at every n of
// `tasks`, and a set-up whose baselines are testing::FakeSetupReply's (coordinator/testing/search_fixture.h).
absl::StatusOr<std::unique_ptr<CandidateEvaluator>> MakeFakeBenchEvaluator(const std::vector<v1::Task>& tasks,
                                                                           int delay_ms);

}  // namespace sparseditto
