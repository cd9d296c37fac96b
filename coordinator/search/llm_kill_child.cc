// The child of llm_kill_test: one LLM task's search (a model at SERVER_URL, asked three calls at once;
// the deterministic fake evaluator, 30 ms an evaluation) over a store, as `sparseditto search` runs it.
// It can be told to stop dead at a chosen point, where the test SIGKILLs it:
//
//   llm_kill_child STORE CALLS_LOG SERVER_URL [evaluate:N | write:OPERATION:N]
//
// CALLS_LOG gets one line per evaluator call ("<candidate id>\n", appended before the candidate is
// scored). `evaluate:N` stops inside the N-th evaluator call of this process; `write:OPERATION:N`
// just before the N-th store write of that operation. Stopping prints "STOPPED\n" and waits forever.
// At the end it prints "task NAME ok EVALUATIONS" and exits 0 (1 when the search failed, 2 for bad
// arguments or a store that does not open).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "coordinator/search/llm_search_mutator.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/testing/llm_search_fixture.h"
#include "coordinator/testing/kill_point.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

int Main(int argc, char** argv) {
  testing::KillChild child;
  if (!child.SetUp(argc, argv, 3, "STORE CALLS_LOG SERVER_URL [evaluate:N | write:OPERATION:N]", 1, 2)) return 2;
  testing::KillPoint& kill = child.kill;
  const int log = child.log;
  v1::MutatorSpec model = testing::OpenAiModel("coder", argv[3]);
  model.set_concurrency(3);
  const v1::Task task = testing::LlmTask({model}, 14, 0);
  const std::vector<SeedKernel> seeds = testing::LlmSeeds();
  testing::CountingEvaluator evaluator(testing::Landscape(task, seeds));
  evaluator.on_call = [&](const v1::Candidate& candidate) {
    const std::string line = candidate.id() + "\n";
    if (write(log, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::abort();
    kill.OnEvaluate();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  };
  std::vector<double> sleeps;
  absl::StatusOr<std::unique_ptr<LlmSearchMutator>> mutator =
      LlmSearchMutator::Create(task, testing::TestLlmOptions(&sleeps));
  if (!mutator.ok()) return 2;
  SearchLoopOptions options = testing::TestLoopOptions();
  options.proposals_in_flight = 3;
  options.mutators = {mutator->get()};
  options.max_finalists = 0;
  options.plan_stage = false;
  absl::StatusOr<SearchSummary> summary = RunTaskSearch(*child.store, "run", task, seeds, evaluator, options);
  if (!summary.ok()) {
    std::fprintf(stderr, "%s\n", std::string(summary.status().message()).c_str());
    return 1;
  }
  std::printf("task %s ok %lld\n", task.name().c_str(), static_cast<long long>(summary->evaluations));
  return 0;
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
