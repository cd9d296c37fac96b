// The search loop with the built-in mutator over seeds of small tunable spaces: it never plans a
// duplicate, says which seed's space is exhausted, stops with "exhausted" once every space is, uses
// the evaluator's device facts for device-relative tunables (and keeps them on resume), and a run
// interrupted and resumed ends exactly like an uninterrupted one.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/search/search_loop.h"
#include "coordinator/testing/search_fixture.h"
#include "coordinator/testing/store_test.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using testing::CountingEvaluator;

// 2 x 3 = 6 points.
constexpr char kSeedA[] =
    "// sparseditto:seed families=[unstructured] dtypes=[fp16] archs=[sm_90]\n"
    "#define A 1  // sparseditto:tunable values=[1, 2]\n"
    "#define B 8  // sparseditto:tunable values=[8, 16, 32]\n"
    "__global__ void a() {}\n";
// GRID follows the device: with 132 SMs {132, 264} x {1, 2} = 4 points; without facts 1 x 2 = 2.
constexpr char kSeedB[] =
    "// sparseditto:seed families=[unstructured] dtypes=[fp16] archs=[sm_90]\n"
    "#define GRID 132 // sparseditto:tunable values=device:sm_count*[1, 2]\n"
    "#define X 1      // sparseditto:tunable values=[1, 2]\n"
    "__global__ void b() {}\n";

class DeviceEvaluator : public CountingEvaluator {
 public:
  DeviceEvaluator(testing::FakeLandscape l, DeviceFacts facts) : CountingEvaluator(std::move(l)), facts_(facts) {}
  DeviceFacts Device() const override { return facts_; }

 private:
  DeviceFacts facts_;
};

class SearchSpaceTest : public testing::StoreTest {
 protected:
  SearchSpaceTest() : StoreTest("search_space_test") {}
  void SetUp() override {
    StoreTest::SetUp();
    for (const auto& [name, source] : {std::pair{"small_a", kSeedA}, std::pair{"small_b", kSeedB}}) {
      auto seed = ParseSeed(name, source);
      ASSERT_TRUE(seed.ok()) << seed.status();
      seeds_.push_back(*seed);
    }
    options_ = testing::TestLoopOptions();
    options_.plan_stage = false;
    options_.max_finalists = 0;
  }
  std::vector<SeedKernel> seeds_;
  SearchLoopOptions options_;
};

TEST_F(SearchSpaceTest, EveryPointOnceThenExhausted) {
  struct Case { std::string name; DeviceFacts facts; int64_t points; };
  for (const Case& c : {Case{"H200 facts", {.sm_count = 132, .arch = 90}, 6 + 4},
                        Case{"no facts", {}, 6 + 2}}) {
    SCOPED_TRACE(c.name);
    const v1::Task task = testing::SmallTask(50);
    DeviceEvaluator evaluator(testing::Landscape(task, seeds_), c.facts);
    auto store = OpenStore(c.name == "no facts" ? "none" : "h200");
    auto summary = RunTaskSearch(*store, "run", task, seeds_, evaluator, options_);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->stop_reason, "exhausted") << summary->stop_detail;
    EXPECT_NE(summary->stop_detail.find("every tunable space"), std::string::npos) << summary->stop_detail;
    EXPECT_EQ(summary->evaluations, c.points) << "each point of both spaces, once";
    EXPECT_EQ(summary->duplicates, 0);
    for (const auto& [id, n] : evaluator.calls_by_id) EXPECT_EQ(n, 1) << id;
    for (const auto& [hash, n] : evaluator.fake.calls_by_hash()) EXPECT_EQ(n, 1) << hash;
    ASSERT_EQ(summary->exhausted_spaces.size(), 2u);
    for (const std::string& line : summary->exhausted_spaces) {
      EXPECT_NE(line.find("points of its tunable space proposed"), std::string::npos) << line;
    }
  }
}

TEST_F(SearchSpaceTest, ResumedRunEndsLikeAnUninterruptedOne) {
  for (int ahead : {1, 3}) {
    SCOPED_TRACE(fmt::format("compile_ahead {}", ahead));
    options_.compile_ahead = ahead;
    const v1::Task task = testing::SmallTask(50);
    const DeviceFacts h200{.sm_count = 132, .arch = 90};
    DeviceEvaluator straight(testing::Landscape(task, seeds_), h200);
    auto store = OpenStore(fmt::format("straight{}", ahead));
    auto expected = RunTaskSearch(*store, "run", task, seeds_, straight, options_);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int64_t k : {1, 4, 7}) {
      SCOPED_TRACE(fmt::format("interrupted after {}", k));
      const std::string name = fmt::format("a{}k{}", ahead, k);
      DeviceEvaluator first_device(testing::Landscape(task, seeds_), h200);
      {
        auto s = OpenStore(name);
        SearchLoopOptions interrupted = options_;
        interrupted.stop_after_evaluations = k;
        auto first = RunTaskSearch(*s, "run", task, seeds_, first_device, interrupted);
        ASSERT_TRUE(first.ok()) << first.status();
        EXPECT_EQ(first->stop_reason, "interrupted");
      }
      // The resumed attempt runs where the device reports nothing: the facts of the first attempt hold.
      DeviceEvaluator other(testing::Landscape(task, seeds_), {});
      auto s = OpenStore(name);
      auto second = RunTaskSearch(*s, "run", task, seeds_, other, options_);
      ASSERT_TRUE(second.ok()) << second.status();
      EXPECT_EQ(second->stop_reason, expected->stop_reason);
      EXPECT_EQ(second->evaluations, expected->evaluations);
      EXPECT_EQ(second->best_candidate_id, expected->best_candidate_id);
      EXPECT_EQ(second->exhausted_spaces, expected->exhausted_spaces);
      auto a = store->ListCandidates("run", task.name());
      auto b = s->ListCandidates("run", task.name());
      ASSERT_TRUE(a.ok() && b.ok());
      ASSERT_EQ(a->size(), b->size());
      for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].source_hash(), (*b)[i].source_hash()) << (*a)[i].id();
    }
  }
}

// The issue-24 observation (half the children of a 2:4 run were duplicates) with the real seed library
// over the fake evaluator: no planned duplicate, every evaluation a new source, small spaces said
// exhausted while the budget lasts.
TEST_F(SearchSpaceTest, RealSeedsOnATwoFourTaskPlanNoDuplicate) {
  auto library = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  ASSERT_TRUE(library.ok()) << library.status();
  v1::Task task = testing::SmallTask(262, "nm24");
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_N_M);
  task.mutable_pattern()->set_n(2);
  task.mutable_pattern()->set_m(4);
  DeviceEvaluator evaluator(testing::Landscape(task, *library), {.sm_count = 132, .arch = 90});
  auto store = OpenStore("nm24");
  auto summary = RunTaskSearch(*store, "run", task, *library, evaluator, options_);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->evaluations, 262);
  EXPECT_EQ(summary->duplicates, 0);
  for (const auto& [hash, n] : evaluator.fake.calls_by_hash()) EXPECT_EQ(n, 1) << hash;
  bool cublas_exhausted = false;  // dense_cublas has 3 points
  for (const std::string& line : summary->exhausted_spaces) cublas_exhausted |= line.starts_with("seed dense_cublas:");
  EXPECT_TRUE(cublas_exhausted) << ::testing::PrintToString(summary->exhausted_spaces);
}

}  // namespace
}  // namespace sparseditto
