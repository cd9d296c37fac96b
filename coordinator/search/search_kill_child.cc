// The child of search_kill_test: a whole batch search (two tasks, the real seed library, the
// deterministic fake evaluator) over a store and a run folder, as `sparseditto search` runs it. It can
// be told to stop dead at a chosen point, where the test SIGKILLs it:
//
//   search_kill_child STORE RUN_DIR CALLS_LOG [evaluate:N | write:OPERATION:N]
//
// CALLS_LOG gets one line per evaluator call ("<candidate id>\n", appended before the candidate is
// scored), so the test can count calls across processes. `evaluate:N` stops inside the N-th evaluator
// call of this process (after logging it); `write:CommitEvaluation:N` stops just before the N-th store
// write of that operation. Stopping prints "STOPPED\n" on stdout and waits forever.
// At the end it prints "task NAME ok EVALUATIONS BEST_ID FITNESS" per task and exits 0 (1 when a
// task failed, 2 for bad arguments or a store that does not open).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "coordinator/search/batch_search.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/kill_point.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

using testing::CountingEvaluator;

// Each with a matrix shape and n values, so that `export --torch` has them to write (cli_test).
std::vector<v1::Task> Batch() {
  std::vector<v1::Task> tasks = {testing::SmallTask(26, "alpha", 77), testing::SmallTask(14, "beta", 78)};
  for (v1::Task& task : tasks) {
    task.mutable_matrix()->mutable_generated()->set_rows(96);
    task.mutable_matrix()->mutable_generated()->set_cols(80);
    task.add_n(16);
  }
  return tasks;
}

int Main(int argc, char** argv) {
  testing::KillChild child;
  if (!child.SetUp(argc, argv, 3, "STORE RUN_DIR CALLS_LOG [evaluate:N | write:OPERATION:N]", 1, 3)) return 2;
  testing::KillPoint& kill = child.kill;
  const int log = child.log;
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  if (!seeds.ok()) return 2;
  const std::vector<v1::Task> tasks = Batch();
  // One landscape over both tasks (they differ only in name, seed and budget). The best seed's
  // candidates fail the finalist checks, so the finalist stage goes past the best.
  testing::FakeLandscape landscape = testing::Landscape(tasks[0], *seeds);
  landscape.finalist_failing_seeds = {"dense_cublas"};
  CountingEvaluator evaluator(landscape);
  evaluator.on_call = [&](const v1::Candidate& candidate) {
    const std::string line = candidate.id() + "\n";
    if (write(log, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::abort();
    kill.OnEvaluate();
  };
  BatchSearchOptions options;
  options.loop = testing::TestLoopOptions();
  options.run_dir = argv[2];
  options.provenance_json = R"({"gpu": "fake", "mutator_models": []})";
  auto outcome = RunBatchSearch(*child.store, "run", tasks, *seeds, evaluator, options);
  if (!outcome.ok()) {
    std::fprintf(stderr, "%s\n", std::string(outcome.status().message()).c_str());
    return 1;
  }
  for (const TaskOutcome& t : outcome->tasks) {
    std::printf("task %s %s %lld %s %.17g finalist %s\n", t.task_name.c_str(), t.ok ? "ok" : "failed",
                static_cast<long long>(t.summary.evaluations), t.summary.best_candidate_id.c_str(),
                t.summary.best_fitness, t.summary.finalist_candidate_id.c_str());
    for (const std::string& e : t.errors) std::fprintf(stderr, "%s: %s\n", t.task_name.c_str(), e.c_str());
  }
  return outcome->failed() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
