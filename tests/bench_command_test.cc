// `sparseditto bench` (the real binary) with no GPU: SPARSEDITTO_FAKE_EVALUATOR_MS (cli/fake_search_backend.h)
// puts the coordinator tests' fake evaluator behind the command; the loop, the table files, the events,
// the kept evaluations, the signals and the exit codes are the command's own. A bench stopped by a
// signal or killed, then resumed with --resume, evaluates no seed of a task twice and ends with the
// whole table; bad input is a clear error, not a crash.
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "coordinator/testing/events_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/fake_evaluator_child.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kTasks = 3;

class BenchCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    std::ofstream suite(dir() / "suite.yaml");
    suite << "defaults:\n  dtype: fp16\n  pattern: {family: unstructured, sparsity: 0.9}\n"
             "  matrix:\n    generated: {rows: 256, cols: 256}\n  n: [16, 128]\n  arch: [sm_90]\n  seed: 5\n"
             "tasks:\n";
    for (int i = 0; i < kTasks; ++i) suite << "  - name: t" << i << "\n";
  }
  const fs::path& dir() const { return folder_.path(); }
  fs::path Out() const { return dir() / "out"; }

  std::unique_ptr<ChildProcess> StartBench(int ms, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {SPARSEDITTO_BINARY, "bench", "--suite", (dir() / "suite.yaml").string(),
                                     "--cache", (dir() / "cache").string()};
    if (std::find(extra.begin(), extra.end(), "--out") == extra.end()) {
      argv.insert(argv.end(), {"--out", Out().string()});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing_support::StartWithFakeEvaluator(std::move(argv), ms);
  }
  // Runs a bench to its end; its exit code (-1 when it did not exit).
  int RunBench(const std::vector<std::string>& extra, std::string* out = nullptr, std::string* err = nullptr) {
    auto bench = StartBench(0, extra);
    if (bench == nullptr) return -1;
    absl::StatusOr<ExitOutcome> ended = bench->WaitFor(DeadlineAfter(120));
    if (out != nullptr) *out = bench->captured_stdout().bytes;
    if (err != nullptr) *err = bench->captured_stderr().bytes;
    return ended.ok() && ended->kind == ExitOutcome::Kind::kExited ? ended->exit_code : -1;
  }
  // The seeds `--list` says apply to each task, counted over the suite.
  int ApplicablePairs() {
    std::string out;
    EXPECT_EQ(RunBench({"--list"}, &out), 0);
    return static_cast<int>(std::count(out.begin(), out.end(), '\n'));
  }
  json Table() const {
    std::ifstream in(Out() / "bench.json");
    return json::parse(in, nullptr, /*allow_exceptions=*/false);
  }

  testing_support::TempFolder folder_{"bench_command_test"};
};

TEST_F(BenchCommandTest, ABenchWritesItsTableAndOneEventPerEvaluation) {
  const int pairs = ApplicablePairs();
  ASSERT_GE(pairs, kTasks * 2);
  std::string out, err;
  ASSERT_EQ(RunBench({}, &out, &err), 0) << err;
  EXPECT_THAT(err, HasSubstr("SPARSEDITTO_FAKE_EVALUATOR_MS is set"));
  EXPECT_THAT(out, HasSubstr("fp16: geomean speedup of the best seed over the best baseline"));
  EXPECT_THAT(out, HasSubstr("wrote " + Out().string() + "/bench.{txt,json,csv} and events.jsonl"));
  const json table = Table();
  ASSERT_TRUE(table.is_array());
  EXPECT_EQ(table.size(), 2u * kTasks);  // one row per task and n
  for (const char* file : {"bench.txt", "bench.csv"}) EXPECT_TRUE(fs::exists(Out() / file)) << file;

  const std::vector<json> events = testing::ReadEvents(Out() / "events.jsonl");
  std::map<std::string, int> counts = testing::CountByType(events);
  EXPECT_EQ(counts["evaluation"], pairs);
  EXPECT_EQ(counts["rows"], kTasks);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().value("command", ""), "bench");
  EXPECT_EQ(events.back().value("reason", ""), "done");
  EXPECT_EQ(events.back().value("rows", 0), 2 * kTasks);
}

// SIGTERM and SIGINT stop the bench before its next evaluation (exit 143, 130); SIGKILL ends it anywhere.
// --resume then ends the bench with each (task, seed) evaluated once over both commands (a killed
// evaluation in flight had no event) and the whole table.
TEST_F(BenchCommandTest, ABenchStoppedOrKilledResumesEvaluatingNothingTwice) {
  const int pairs = ApplicablePairs();
  const struct {
    int signal_number;
    int exit_code;  // -1: killed
  } cases[] = {{SIGTERM, 143}, {SIGINT, 130}, {SIGKILL, -1}};
  for (const auto& c : cases) {
    SCOPED_TRACE(strsignal(c.signal_number));
    fs::remove_all(Out());
    auto bench = StartBench(40, {});
    ASSERT_NE(bench, nullptr);
    // A task and a bit in: the second task's evaluations under way.
    const Deadline by = DeadlineAfter(60);
    auto evaluated = [this] {
      return testing::CountByType(testing::ReadEvents(Out() / "events.jsonl"))["evaluation"];
    };
    while (Clock::now() < by && evaluated() < pairs / kTasks + 2 && !bench->outcome().has_value()) {
      (void)bench->Pump(DeadlineAfter(0.05));
    }
    ASSERT_FALSE(bench->outcome().has_value()) << bench->captured_stderr().bytes;
    ASSERT_EQ(::kill(bench->pid(), c.signal_number), 0);
    absl::StatusOr<ExitOutcome> ended = bench->WaitFor(DeadlineAfter(60));
    ASSERT_TRUE(ended.ok()) << ended.status();
    if (c.exit_code >= 0) {
      EXPECT_EQ(ended->exit_code, c.exit_code) << bench->captured_stderr().bytes;
      EXPECT_THAT(bench->captured_stderr().bytes, HasSubstr("stopping after the evaluation in hand"));
      const std::vector<json> events = testing::ReadEvents(Out() / "events.jsonl");
      ASSERT_FALSE(events.empty());
      EXPECT_EQ(events.back().value("reason", ""), "interrupted");
    }
    EXPECT_LT(evaluated(), pairs) << "stopped before the end";

    std::string err;
    ASSERT_EQ(RunBench({"--resume"}, nullptr, &err), 0) << err;
    EXPECT_THAT(err, HasSubstr("kept from the bench that was cut short"));
    std::set<std::string> candidates;
    for (const json& e : testing::ReadEvents(Out() / "events.jsonl")) {
      if (e.value("type", "") != "evaluation") continue;
      EXPECT_TRUE(candidates.insert(e.value("candidate", "")).second) << "evaluated twice: " << e;
    }
    EXPECT_GE(static_cast<int>(candidates.size()), pairs - (c.exit_code < 0 ? 1 : 0));
    EXPECT_EQ(Table().size(), 2u * kTasks);
    EXPECT_FALSE(fs::exists(Out() / "bench-partial" / "t1.json")) << "the finished task's kept evaluations stay";
  }
}

TEST_F(BenchCommandTest, BadInputIsAClearErrorNotACrash) {
  std::string err;
  EXPECT_EQ(RunBench({"--name", "t["}, nullptr, &err), 1);
  EXPECT_THAT(err, HasSubstr("task name filter 't['"));

  fs::create_directories(Out());
  std::ofstream(Out() / "bench.json") << "{\"not\": \"rows\"}";
  EXPECT_EQ(RunBench({"--resume"}, nullptr, &err), 1);
  EXPECT_THAT(err, HasSubstr("bench.json"));
  EXPECT_THAT(err, HasSubstr("left as it is"));
  std::ifstream kept(Out() / "bench.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "{\"not\": \"rows\"}");

  std::ofstream(dir() / "file") << "x";
  EXPECT_EQ(RunBench({"--out", (dir() / "file" / "out").string()}, nullptr, &err), 1);
  EXPECT_THAT(err, HasSubstr("cannot make"));
}

}  // namespace
}  // namespace sparseditto
