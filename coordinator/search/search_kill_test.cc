// kill -9 of the search PROCESS: search_kill_child runs a two-task batch search (fake evaluator, real
// RocksDB store, run folder) and is SIGKILLed at several points: inside an evaluation of a seed and of a
// child, just before a child is stored, just before an evaluation is committed, and inside the second
// task. Each time it is started again on the same store. Then it runs to the end, and:
//   * every task ends as in an uninterrupted run (evaluations, best candidate, fitness);
//   * no evaluation is lost or repeated: the evaluator saw the same candidates as in the uninterrupted
//     run, each once, except the candidate in flight at a kill (RunState.in_flight_candidate_id), which
//     is evaluated exactly once more per kill that caught it, and counted once;
//   * the run folder holds every stored candidate's folder, best/ and provenance.json.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/status_format.h"
#include "common/subprocess.h"
#include "coordinator/testing/kill_runner.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "population_store/population_store.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

struct Folders {
  fs::path store, run_dir, calls_log;
};

Folders MakeFolders(const fs::path& root, const std::string& name) {
  Folders f{root / name / "store", root / name / "run", root / name / "calls.log"};
  fs::create_directories(root / name);
  return f;
}

std::string RunChild(const Folders& f, const std::string& stop) {
  return testing::RunUntilStopped({SEARCH_KILL_CHILD, f.store.string(), f.run_dir.string(), f.calls_log.string()}, stop);
}

std::map<std::string, int> CallsById(const fs::path& log) {
  std::map<std::string, int> calls;
  std::ifstream in(log);
  for (std::string id; std::getline(in, id);) ++calls[id];
  return calls;
}

// The candidates in flight after a kill, from the store (read-only: the child is gone).
std::vector<std::string> InFlight(const fs::path& store_dir) {
  std::vector<std::string> ids;
  auto store = PopulationStore::OpenReadOnly(store_dir.string());
  if (!store.ok()) return ids;  // killed before the store existed
  for (const char* task : {"alpha", "beta"}) {
    auto state = (*store)->GetRunState("run", task);
    if (state.ok() && !state->in_flight_candidate_id().empty()) ids.push_back(state->in_flight_candidate_id());
  }
  return ids;
}

class SearchKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / fmt::format("search_kill_test.{}", getpid());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(SearchKillTest, KilledAndRestartedSearchEndsLikeAnUninterruptedOne) {
  const Folders straight = MakeFolders(root_, "straight");
  const std::string expected = RunChild(straight, "");
  ASSERT_THAT(expected, ::testing::HasSubstr("task alpha ok 26 "));
  ASSERT_THAT(expected, ::testing::HasSubstr("task beta ok 14 "));
  const std::map<std::string, int> straight_calls = CallsById(straight.calls_log);
  for (const auto& [id, n] : straight_calls) EXPECT_EQ(n, 1) << id;

  const Folders killed = MakeFolders(root_, "killed");
  // Counted per process: each restart counts from 1 again.
  const std::vector<std::string> stops = {
      "evaluate:3",                  // inside the third seed's evaluation
      "write:CommitCandidates:4",    // just before the 4th child is stored (resumed: no seed commit)
      "evaluate:9",                  // inside a child's evaluation
      "write:CommitEvaluation:5",    // evaluated, just before the result is committed
      "write:CommitEvaluation:12",   // past alpha's end: inside the second task
      "evaluate:2",                  // early in the resumed second task
  };
  std::map<std::string, int> expected_extra;
  for (const std::string& stop : stops) {
    SCOPED_TRACE(stop);
    const std::string out = RunChild(killed, stop);
    EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("task "))) << "the batch ended before the stop";
    for (const std::string& id : InFlight(killed.store)) {
      ++expected_extra[id];
      std::printf("killed at %s with %s in flight\n", stop.c_str(), id.c_str());
    }
  }
  EXPECT_FALSE(expected_extra.empty()) << "no kill caught a candidate in flight";
  const std::string resumed = RunChild(killed, "");
  EXPECT_EQ(resumed, expected) << "the same evaluations, best candidates and fitness";

  const std::map<std::string, int> calls = CallsById(killed.calls_log);
  std::map<std::string, int> calls_once;
  for (const auto& [id, n] : calls) {
    const auto extra = expected_extra.find(id);
    EXPECT_EQ(n, 1 + (extra == expected_extra.end() ? 0 : extra->second)) << id;
    calls_once[id] = 1;
  }
  EXPECT_EQ(calls_once, straight_calls) << "the same candidates were evaluated";

  // The run folder, regenerated from the store after the kills.
  auto store = PopulationStore::OpenReadOnly(killed.store.string());
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(fs::exists(killed.run_dir / "provenance.json"));
  for (const char* task : {"alpha", "beta"}) {
    SCOPED_TRACE(task);
    auto candidates = (*store)->ListCandidates("run", task);
    ASSERT_TRUE(candidates.ok()) << candidates.status();
    for (const v1::Candidate& c : *candidates) {
      EXPECT_TRUE(fs::exists(killed.run_dir / task / "candidates" / c.id() / "kernel.cu")) << c.id();
    }
    EXPECT_TRUE(fs::exists(killed.run_dir / task / "best" / "kernel.cu"));
    EXPECT_TRUE(fs::exists(killed.run_dir / task / "best" / "report.json"));
    for (const auto& entry : fs::directory_iterator(killed.run_dir / task / "candidates")) {
      EXPECT_THAT(entry.path().filename().string(), ::testing::Not(::testing::HasSubstr(".sparseditto-")));
    }
  }
}

}  // namespace
}  // namespace sparseditto
