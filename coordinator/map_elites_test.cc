#include "coordinator/map_elites.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "coordinator/testing/test_util.h"

namespace sparseditto {
namespace {

using testing::MakeCandidate;
using testing::MakeResult;

TEST(FeatureDimensionTest, ParsesAndPrintsSpecs) {
  for (const char* spec : {"seed", "tunable:UNROLL", "registers:32,64,128", "shared_bytes:16384,49152", "spill_bytes:0"}) {
    auto dim = ParseFeatureDimension(spec);
    ASSERT_TRUE(dim.ok()) << spec << ": " << dim.status();
    EXPECT_EQ(dim->Spec(), spec);
  }
  for (const char* spec : {"", "seeds", "tunable:", "tunable:A|B", "registers:", "registers:64,32", "registers:1,x",
                           "registers:1,,2", "flops:1"}) {
    auto dim = ParseFeatureDimension(spec);
    ASSERT_FALSE(dim.ok()) << spec;
    EXPECT_NE(dim.status().message().find("feature dimension"), std::string::npos) << dim.status();
  }
}

TEST(FeatureDimensionTest, Buckets) {
  struct Case { const char* spec; int registers; const char* seed; const char* want; };
  const Case cases[] = {
      {"registers:32,64,128", 32, "s", "<=32"},   {"registers:32,64,128", 33, "s", "<=64"},
      {"registers:32,64,128", 200, "s", ">128"},  {"registers:32,64,128", -1, "s", "?"},
      {"seed", 40, "csr", "csr"},                 {"seed", 40, "", "-"},
      {"tunable:T0", 40, "s", "1"},               {"tunable:NOPE", 40, "s", "-"},
  };
  for (const Case& c : cases) {
    auto dim = ParseFeatureDimension(c.spec);
    ASSERT_TRUE(dim.ok());
    EXPECT_EQ(dim->Bucket(MakeCandidate("a", c.seed), MakeResult("a", 1, v1::FAILURE_CATEGORY_NONE, c.registers)),
              c.want)
        << c.spec << " " << c.registers;
  }
}

TEST(MapElitesTest, WhatCountsAsCorrect) {
  struct Case { v1::FailureCategory failure; double fitness; bool implausible; bool want; };
  const Case cases[] = {
      {v1::FAILURE_CATEGORY_NONE, 1.5, false, true},
      {v1::FAILURE_CATEGORY_SLOWER, 0.4, false, true},
      {v1::FAILURE_CATEGORY_NONE, 0.0, false, false},
      {v1::FAILURE_CATEGORY_NONE, std::numeric_limits<double>::infinity(), false, false},
      {v1::FAILURE_CATEGORY_NONE, std::nan(""), false, false},
      {v1::FAILURE_CATEGORY_NONE, 50.0, true, false},
      {v1::FAILURE_CATEGORY_WRONG, 2.0, false, false},
      {v1::FAILURE_CATEGORY_COMPILE, 0.0, false, false},
      {v1::FAILURE_CATEGORY_INTERNAL, 1.0, false, false},
  };
  for (const Case& c : cases) {
    v1::EvalResult r = MakeResult("a", c.fitness, c.failure);
    r.set_flagged_implausible(c.implausible);
    EXPECT_EQ(IsCorrectResult(r), c.want) << c.failure << " " << c.fitness;
  }
}

TEST(MapElitesTest, InsertKeepsTheBestPerCellAndTracksTheGlobalBest) {
  MapElitesArchive archive(DefaultFeatureDimensions());
  struct Step {
    const char* id; const char* seed; double fitness; v1::FailureCategory failure; int registers;
    bool accepted, new_cell, improved_cell, improved_best; const char* replaced; const char* cell;
  };
  const auto kOk = v1::FAILURE_CATEGORY_NONE;
  const Step steps[] = {
      {"a", "csr", 1.0, kOk, 40, true, true, true, true, "", "seed=csr|registers=<=64"},
      {"b", "csr", 0.8, kOk, 50, true, false, false, false, "", "seed=csr|registers=<=64"},
      {"c", "csr", 1.0, kOk, 60, true, false, false, false, "", "seed=csr|registers=<=64"},  // tie keeps a
      {"d", "csr", 1.2, kOk, 64, true, false, true, true, "a", "seed=csr|registers=<=64"},
      {"e", "bsr", 0.5, v1::FAILURE_CATEGORY_SLOWER, 100, true, true, true, false, "", "seed=bsr|registers=<=128"},
      {"f", "bsr", 9.0, v1::FAILURE_CATEGORY_WRONG, 100, false, false, false, false, "", "seed=bsr|registers=<=128"},
      {"g", "bsr", 2.0, kOk, -1, true, true, true, true, "", "seed=bsr|registers=?"},
  };
  for (const Step& s : steps) {
    InsertOutcome out = archive.Insert(MakeCandidate(s.id, s.seed), MakeResult(s.id, s.fitness, s.failure, s.registers));
    EXPECT_EQ(out.cell, s.cell) << s.id;
    EXPECT_EQ(out.accepted, s.accepted) << s.id;
    EXPECT_EQ(out.new_cell, s.new_cell) << s.id;
    EXPECT_EQ(out.improved_cell, s.improved_cell) << s.id;
    EXPECT_EQ(out.improved_best, s.improved_best) << s.id;
    EXPECT_EQ(out.replaced_id, s.replaced) << s.id;
  }
  EXPECT_EQ(archive.cells().size(), 3u);
  ASSERT_NE(archive.best(), nullptr);
  EXPECT_EQ(archive.best()->candidate_id(), "g");
  EXPECT_EQ(archive.cells().at("seed=csr|registers=<=64").candidate_id(), "d");
}

TEST(MapElitesTest, SaveAndLoadRoundTrip) {
  MapElitesArchive archive(DefaultFeatureDimensions());
  archive.Insert(MakeCandidate("a", "csr"), MakeResult("a", 1.0, v1::FAILURE_CATEGORY_NONE, 40));
  archive.Insert(MakeCandidate("b", "bsr"), MakeResult("b", 2.0, v1::FAILURE_CATEGORY_NONE, 40));
  archive.Insert(MakeCandidate("c", "dense"), MakeResult("c", 2.0, v1::FAILURE_CATEGORY_NONE, 40));
  coordinator::SearchState state;
  archive.SaveTo(&state);
  EXPECT_EQ(state.best_candidate_id(), "b") << "ties keep the first best";
  MapElitesArchive restored(DefaultFeatureDimensions());
  ASSERT_TRUE(restored.LoadFrom(state).ok());
  coordinator::SearchState again;
  restored.SaveTo(&again);
  EXPECT_EQ(state.SerializeAsString(), again.SerializeAsString());

  MapElitesArchive empty({});
  EXPECT_EQ(empty.best(), nullptr);
  empty.Insert(MakeCandidate("a", "csr"), MakeResult("a", 1.0));
  ASSERT_NE(empty.best(), nullptr) << "no dimensions: one cell";
  coordinator::SearchState one;
  empty.SaveTo(&one);
  MapElitesArchive empty_restored({});
  EXPECT_TRUE(empty_restored.LoadFrom(one).ok());
  EXPECT_EQ(empty_restored.best()->candidate_id(), "a");
}

TEST(MapElitesTest, LoadRefusesInconsistentStates) {
  struct Case { const char* name; std::function<void(coordinator::SearchState&)> edit; };
  const Case cases[] = {
      {"foreign_cell", [](auto& s) { s.mutable_archive(0)->set_cell("tile=4"); }},
      {"duplicate_cell", [](auto& s) { *s.add_archive() = s.archive(0); }},
      {"best_missing", [](auto& s) { s.set_best_candidate_id("zzz"); }},
  };
  for (const Case& c : cases) {
    MapElitesArchive archive(DefaultFeatureDimensions());
    archive.Insert(MakeCandidate("a", "csr"), MakeResult("a", 1.0, v1::FAILURE_CATEGORY_NONE, 40));
    coordinator::SearchState state;
    archive.SaveTo(&state);
    c.edit(state);
    MapElitesArchive restored(DefaultFeatureDimensions());
    absl::Status s = restored.LoadFrom(state);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(restored.cells().empty()) << c.name << ": nothing loaded";
  }
}

}  // namespace
}  // namespace sparseditto
