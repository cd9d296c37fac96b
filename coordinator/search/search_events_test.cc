// The search's events (search_events.h) over a real RocksDB store in a temp folder, the real seed
// library and the deterministic fake evaluator: every line parses with the fields its type needs, the
// counts match the store, a partial last line (a crash mid-write) is dropped before appending, a stop
// asked for (a signal's) ends at a safe point and resumes with each candidate evaluated once, and a
// target fitness stops the search with its reason.
#include "coordinator/search/search_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "coordinator/search/search_loop.h"
#include "coordinator/testing/events_file.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/store_test.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using nlohmann::json;
using testing::CountByType;
using testing::CountingEvaluator;
using testing::Landscape;
using testing::ReadEvents;
using testing::SmallTask;

// The fields every event of each type must have.
void ExpectWellFormed(const std::vector<json>& events) {
  const std::map<std::string, std::vector<std::string>> required = {
      {"start", {"task", "resumed", "max_evaluations", "target_fitness"}},
      {"evaluation",
       {"task", "candidate", "parents", "outcome", "stage", "fitness", "times", "seconds", "evaluations"}},
      {"mutation", {"task", "parents", "child", "mutator", "outcome"}},
      {"failure", {"task", "candidate", "category", "stage", "detail"}},
      {"finalist", {"task", "candidate", "attempt", "passed"}},
      {"stop", {"reason", "detail"}},
      {"resumed", {"dropped_partial_line_bytes"}}};
  for (const json& e : events) {
    ASSERT_TRUE(e.is_object()) << e;
    EXPECT_EQ(e.value("schema", 0), kEventSchemaVersion) << e;
    EXPECT_TRUE(e.contains("time") && e["time"].is_string()) << e;
    EXPECT_GT(e.value("unix_ms", int64_t{0}), 0) << e;
    const std::string type = e.value("type", "");
    auto fields = required.find(type);
    ASSERT_NE(fields, required.end()) << "unknown type: " << e;
    for (const std::string& f : fields->second) EXPECT_TRUE(e.contains(f)) << type << " lacks " << f << ": " << e;
  }
}

class SearchEventsTest : public testing::StoreTest {
 protected:
  SearchEventsTest() : StoreTest("search_events_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    std::filesystem::create_directories(root_);
    auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    seeds_ = *seeds;
  }
  std::filesystem::path EventsPath() const { return root_ / "events.jsonl"; }
  std::vector<SeedKernel> seeds_;
};

TEST_F(SearchEventsTest, ASearchWritesOneParsableEventPerThingAndTheCountsMatchTheStore) {
  const v1::Task task = SmallTask(40);
  testing::FakeLandscape landscape = Landscape(task, seeds_);
  landscape.finalist_failing_seeds = {"csr_warp_per_row"};
  // Children with one value of a tunable (neither the seed's nor the optimum) fail to compile, so the
  // loop has failures to tell.
  for (const SeedKernel& seed : seeds_) {
    if (seed.name != "csr_warp_per_row") continue;
    auto tunables = ParseTunables(seed.source);
    ASSERT_TRUE(tunables.ok() && !tunables->empty());
    const v1::Tunable& t = tunables->front();
    for (const std::string& v : t.allowed_values()) {
      if (v != t.value() && v != landscape.optimum[seed.name][t.name()]) {
        landscape.failures.push_back({.when = {{t.name(), v}}, .category = v1::FAILURE_CATEGORY_COMPILE});
        break;
      }
    }
  }
  ASSERT_EQ(landscape.failures.size(), 1u);
  CountingEvaluator evaluator(landscape);
  auto store = OpenStore("store");
  auto events = JsonlEventFile::Open(EventsPath().string());
  ASSERT_TRUE(events.ok()) << events.status();
  SearchLoopOptions options = testing::TestLoopOptions();
  options.events = events->get();
  auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ((*events)->first_error(), "");

  const std::vector<json> read = ReadEvents(EventsPath());
  ExpectWellFormed(read);
  std::map<std::string, int> counts = CountByType(read);
  EXPECT_EQ(counts["start"], 1);
  EXPECT_EQ(counts["evaluation"], summary->evaluations) << "one event per evaluation the store holds";
  // Every evaluation event names a candidate whose evaluation is stored, once.
  std::set<std::string> evaluated;
  int failed = 0;
  for (const json& e : read) {
    if (e["type"] != "evaluation") continue;
    const std::string id = e["candidate"];
    EXPECT_TRUE(evaluated.insert(id).second) << id << " twice";
    auto stored = store->GetEvaluation("run", id);
    ASSERT_TRUE(stored.ok()) << id << ": " << stored.status();
    EXPECT_DOUBLE_EQ(e["fitness"].get<double>(), stored->fitness()) << id;
    EXPECT_EQ(e["outcome"], OutcomeName(*stored)) << id;
    if (stored->failure() != v1::FAILURE_CATEGORY_NONE && stored->failure() != v1::FAILURE_CATEGORY_SLOWER) ++failed;
  }
  EXPECT_GT(failed, 0);
  EXPECT_EQ(counts["failure"], failed);
  // Mutations: each new child is evaluated (the plan and seeds are not mutations); duplicates are counted.
  int new_children = 0;
  int duplicates = 0;
  for (const json& e : read) {
    if (e["type"] != "mutation") continue;
    EXPECT_FALSE(e["parents"].empty()) << e;
    if (e["outcome"] == "new") {
      ++new_children;
      EXPECT_TRUE(evaluated.contains(e["child"].get<std::string>())) << e;
    }
    if (e["outcome"] == "duplicate") ++duplicates;
  }
  EXPECT_GT(new_children, 0);
  EXPECT_EQ(duplicates, summary->duplicates);
  EXPECT_GE(counts["finalist"], 1);
  ASSERT_FALSE(read.empty());
  EXPECT_EQ(read.back()["type"], "stop");
  EXPECT_EQ(read.back()["reason"], summary->stop_reason);
  EXPECT_EQ(read.back()["evaluations"], summary->evaluations);
}

TEST_F(SearchEventsTest, APartialLastLineIsDroppedBeforeAppending) {
  const std::string whole = R"({"schema":1,"time":"t","unix_ms":1,"type":"stop","reason":"r","detail":""})" "\n";
  const struct {
    std::string name;
    std::string content;
    int64_t dropped;
  } cases[] = {
      {"ends whole", whole, 0},
      {"cut mid-line", whole + R"({"schema":1,"type":"evalua)", 26},
      {"only a partial line", R"({"sche)", 6},
      {"empty", "", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    { std::ofstream(EventsPath(), std::ios::trunc) << c.content; }
    auto events = JsonlEventFile::Open(EventsPath().string());
    ASSERT_TRUE(events.ok()) << events.status();
    EXPECT_EQ((*events)->dropped_bytes(), c.dropped);
    (*events)->Emit({{"type", "stop"}, {"reason", "test"}, {"detail", ""}});
    events->reset();
    const std::vector<json> read = ReadEvents(EventsPath());
    ExpectWellFormed(read);
    ASSERT_FALSE(read.empty());
    EXPECT_EQ(read.back()["reason"], "test");
    EXPECT_EQ(CountByType(read)["resumed"], c.dropped > 0 ? 1 : 0);
  }
  EXPECT_FALSE(JsonlEventFile::Open((root_ / "no" / "such" / "folder" / "events.jsonl").string()).ok());
}

// A stop asked for after k evaluations (as the signal watcher asks) ends at a safe point; the next call
// resumes and ends as the uninterrupted search, each candidate evaluated once; both calls' events
// append to one file.
TEST_F(SearchEventsTest, AStopRequestedEndsAtASafePointAndTheResumedSearchEvaluatesEachCandidateOnce) {
  const v1::Task task = SmallTask(40);
  CountingEvaluator straight(Landscape(task, seeds_));
  auto straight_store = OpenStore("straight");
  auto expected = RunTaskSearch(*straight_store, "run", task, seeds_, straight, testing::TestLoopOptions());
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int compile_ahead : {1, 4}) {
    SCOPED_TRACE(fmt::format("compile_ahead {}", compile_ahead));
    CountingEvaluator evaluator(Landscape(task, seeds_));
    std::filesystem::remove(EventsPath());
    const std::string name = fmt::format("stopped{}", compile_ahead);
    SearchLoopOptions options = testing::TestLoopOptions();
    options.compile_ahead = compile_ahead;
    {
      auto store = OpenStore(name);
      auto events = JsonlEventFile::Open(EventsPath().string());
      ASSERT_TRUE(events.ok());
      options.events = events->get();
      options.stop_requested = [&evaluator] { return evaluator.fake.calls() >= 17; };
      auto first = RunTaskSearch(*store, "run", task, seeds_, evaluator, options);
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_EQ(first->stop_reason, "interrupted");
    }
    auto store = OpenStore(name);
    auto events = JsonlEventFile::Open(EventsPath().string());
    ASSERT_TRUE(events.ok());
    options.events = events->get();
    options.stop_requested = nullptr;
    auto second = RunTaskSearch(*store, "run", task, seeds_, evaluator, options);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_TRUE(second->resumed);
    if (compile_ahead == 1) {
      EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
      EXPECT_EQ(second->evaluations, expected->evaluations);
    }
    for (const auto& [id, n] : evaluator.calls_by_id) EXPECT_EQ(n, 1) << id;
    const std::vector<json> read = ReadEvents(EventsPath());
    ExpectWellFormed(read);
    std::map<std::string, int> counts = CountByType(read);
    EXPECT_EQ(counts["start"], 2);
    EXPECT_EQ(counts["stop"], 2);
    EXPECT_EQ(counts["evaluation"], second->evaluations) << "with one taker, no evaluation is made twice";
  }
}

TEST_F(SearchEventsTest, ATargetFitnessStopsTheSearchWithItsReason) {
  v1::Task task = SmallTask(200);
  task.mutable_budget()->set_target_fitness(1.0);  // the best seed of the fake scores 3 at its optimum
  CountingEvaluator evaluator(Landscape(task, seeds_));
  auto store = OpenStore("target");
  auto events = JsonlEventFile::Open(EventsPath().string());
  ASSERT_TRUE(events.ok());
  SearchLoopOptions options = testing::TestLoopOptions();
  options.events = events->get();
  auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason, "target_fitness");
  EXPECT_GE(summary->best_fitness, 1.0);
  EXPECT_LT(summary->evaluations, 200);
  EXPECT_NE(summary->stop_detail.find("target_fitness 1 reached"), std::string::npos) << summary->stop_detail;
  const std::vector<json> read = ReadEvents(EventsPath());
  ASSERT_FALSE(read.empty());
  EXPECT_EQ(read.back()["reason"], "target_fitness");
  EXPECT_EQ(read.front()["target_fitness"], 1.0);
}

}  // namespace
}  // namespace sparseditto
