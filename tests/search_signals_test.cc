// `sparseditto search` (the real binary) on SIGTERM and SIGINT, its events file, its budget overrides
// and its log file. No GPU here: SPARSEDITTO_FAKE_EVALUATOR_MS (cli/fake_search_backend.h) puts the
// coordinator tests' fake evaluator behind the command, each evaluation taking that long; the store,
// the loop, the events, the signals and the exit codes are the command's own.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "fmt/format.h"
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

class SearchSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    std::ofstream(dir() / "tiny.yaml") << "name: tiny\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
                                          "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_90]\n"
                                          "budget: {max_evaluations: 200}\nseed: 5\n";
  }
  const fs::path& dir() const { return folder_.path(); }
  fs::path Events() const { return dir() / "runs" / "tiny" / "events.jsonl"; }

  // `sparseditto search tiny.yaml` with the fake evaluator taking `ms` per evaluation, and `extra`.
  std::unique_ptr<ChildProcess> StartSearch(int ms, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {SPARSEDITTO_BINARY, "search", (dir() / "tiny.yaml").string(), "--runs-dir",
                                     (dir() / "runs").string(), "--cache", (dir() / "cache").string(), "--finalists",
                                     "1", "--confirm-rounds", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing_support::StartWithFakeEvaluator(std::move(argv), ms);
  }

  // Every line of the events file, parsed; one that does not parse fails the test.
  std::vector<json> ReadEvents() const {
    std::vector<json> events;
    std::ifstream in(Events());
    std::string line;
    while (std::getline(in, line)) {
      json e = json::parse(line, nullptr, false);
      EXPECT_FALSE(e.is_discarded()) << line;
      if (!e.is_discarded()) events.push_back(std::move(e));
    }
    return events;
  }
  int Count(const std::vector<json>& events, const std::string& type) const {
    int n = 0;
    for (const json& e : events) n += e.value("type", "") == type ? 1 : 0;
    return n;
  }

  testing_support::TempFolder folder_{"search_signals_test"};
};

// A signal mid-run: the search stops at the next safe point, exits 128 + the signal, the events file
// ends with the stop; the same command then finishes the run with every candidate evaluated once,
// after dropping a last line cut as by a crash (every line of the file parses).
TEST_F(SearchSignalsTest, ASignalStopsTheSearchAtASafePointAndTheSameCommandResumesIt) {
  const struct {
    int signal_number;
    int exit_code;
    const char* name;
  } cases[] = {{SIGTERM, 143, "SIGTERM"}, {SIGINT, 130, "SIGINT"}};
  const std::vector<std::string> args = {"--max-evaluations", "30", "--log-file", (dir() / "search.log").string()};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(dir() / "runs");
    auto search = StartSearch(40, args);
    ASSERT_NE(search, nullptr);
    // Some evaluations in, not all.
    const Deadline by = DeadlineAfter(60);
    while (Clock::now() < by && Count(ReadEvents(), "evaluation") < 8 && !search->outcome().has_value()) {
      (void)search->Pump(DeadlineAfter(0.05));
    }
    ASSERT_FALSE(search->outcome().has_value()) << search->captured_stderr().bytes;
    ASSERT_EQ(::kill(search->pid(), c.signal_number), 0);
    absl::StatusOr<ExitOutcome> ended = search->WaitFor(DeadlineAfter(60));
    ASSERT_TRUE(ended.ok()) << ended.status();
    EXPECT_EQ(ended->kind, ExitOutcome::Kind::kExited) << ended->ToString();
    EXPECT_EQ(ended->exit_code, c.exit_code) << search->captured_stderr().bytes;
    EXPECT_THAT(search->captured_stderr().bytes, HasSubstr(std::string(c.name) + ": stopping at the next safe point"));
    EXPECT_THAT(search->captured_stdout().bytes, HasSubstr("run the same command to resume it"));
    std::vector<json> events = ReadEvents();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().value("type", ""), "stop");
    EXPECT_EQ(events.back().value("signal", ""), c.name);
    const int before = Count(events, "evaluation");
    EXPECT_LT(before, 30) << "stopped before the budget";

    // As if a crash had cut a last line: the resumed command drops it before appending.
    std::ofstream(Events(), std::ios::app) << R"({"schema":1,"type":"evalu)";

    auto resumed = StartSearch(0, args);
    ASSERT_NE(resumed, nullptr);
    ended = resumed->WaitFor(DeadlineAfter(120));
    ASSERT_TRUE(ended.ok()) << ended.status();
    EXPECT_EQ(ended->exit_code, 0) << resumed->captured_stderr().bytes;
    EXPECT_THAT(resumed->captured_stdout().bytes, HasSubstr("tiny: 30 evaluations"));
    EXPECT_THAT(resumed->captured_stdout().bytes, HasSubstr("resumed"));
    events = ReadEvents();
    std::set<std::string> evaluated;
    for (const json& e : events) {
      if (e.value("type", "") != "evaluation") continue;
      EXPECT_TRUE(evaluated.insert(e.value("candidate", "")).second) << "evaluated twice: " << e;
    }
    EXPECT_EQ(Count(events, "start"), 2);
    EXPECT_EQ(Count(events, "resumed"), 1) << "the cut line was dropped, and said so";
    EXPECT_EQ(events.back().value("type", ""), "stop");
    EXPECT_GE(evaluated.size(), 30u);
    EXPECT_EQ(static_cast<int64_t>(evaluated.size()), events.back().value("evaluations", int64_t{0}))
        << "every candidate the store counts evaluated once, across both commands";
    EXPECT_EQ(events.back().value("reason", ""), "evaluations");
  }
  // The log file has the stop warning, stamped with its level.
  std::ifstream log(dir() / "search.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("warning search: SIGTERM: stopping at the next safe point"));
  EXPECT_THAT(text, HasSubstr("warning search: SIGINT: stopping at the next safe point"));
}

// --target-fitness stops the search once reached; the budget in force is the start event's and is
// kept with the run, so the same command resumes and another budget is refused with what differs.
TEST_F(SearchSignalsTest, CommandLineBudgetsOverrideTheTaskFileAndAreKeptWithTheRun) {
  auto search = StartSearch(0, {"--target-fitness", "1.0", "--log-level", "warn"});
  ASSERT_NE(search, nullptr);
  absl::StatusOr<ExitOutcome> ended = search->WaitFor(DeadlineAfter(120));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->exit_code, 0) << search->captured_stderr().bytes;
  EXPECT_THAT(search->captured_stdout().bytes, HasSubstr("stopped: target_fitness 1 reached"));
  EXPECT_THAT(search->captured_stderr().bytes, ::testing::Not(HasSubstr("finalist checks 1 of")))
      << "info lines are below --log-level warn";
  const std::vector<json> events = ReadEvents();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().value("type", ""), "start");
  EXPECT_EQ(events.front().value("target_fitness", 0.0), 1.0);
  EXPECT_EQ(events.back().value("reason", ""), "target_fitness");
  // A run the test seam scored says so in its provenance, so it cannot pass for a measured one.
  std::ifstream provenance_file(dir() / "runs" / "tiny" / "provenance.json");
  const json provenance = json::parse(provenance_file, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(provenance.is_object());
  EXPECT_THAT(provenance.value("fake_evaluator", ""), HasSubstr("nothing ran on a GPU")) << provenance;

  auto other = StartSearch(0, {"--target-fitness", "2.0"});
  ASSERT_NE(other, nullptr);
  ended = other->WaitFor(DeadlineAfter(60));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->exit_code, 1);
  EXPECT_THAT(other->captured_stderr().bytes, HasSubstr("holds task tiny with another budget"));
  EXPECT_THAT(other->captured_stderr().bytes, HasSubstr("target_fitness: 2"));

  for (const char* bad : {"--log-level=loud", "--max-evaluations=0", "--target-fitness=-1"}) {
    auto refused = StartSearch(0, {bad});
    ASSERT_NE(refused, nullptr);
    ended = refused->WaitFor(DeadlineAfter(30));
    ASSERT_TRUE(ended.ok());
    EXPECT_EQ(ended->exit_code, 2) << bad << ": " << refused->captured_stderr().bytes;
  }
}

}  // namespace
}  // namespace sparseditto
