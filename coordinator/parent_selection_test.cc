#include "coordinator/parent_selection.h"

#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "coordinator/testing/test_util.h"

namespace sparseditto {
namespace {

using testing::MakeCandidate;
using testing::MakeResult;

coordinator::IslandMember Member(const std::string& id, double fitness, const std::string& seed = "s",
                                 int movable = 1) {
  coordinator::IslandMember m;
  m.set_candidate_id(id);
  m.set_fitness(fitness);
  m.set_seed_name(seed);
  m.set_movable_tunables(movable);
  return m;
}

// An archive of one elite per seed: "x" (fitness 1), "y" (fitness 2), "z" (fitness 3, no tunables).
MapElitesArchive ThreeCells() {
  MapElitesArchive archive({FeatureDimension{}});
  archive.Insert(MakeCandidate("x1", "x"), MakeResult("x1", 1));
  archive.Insert(MakeCandidate("y1", "y"), MakeResult("y1", 2));
  archive.Insert(MakeCandidate("z1", "z", /*movable=*/0), MakeResult("z1", 3));
  return archive;
}

std::map<std::string, int> CountParents(const MapElitesArchive& archive, const std::vector<coordinator::IslandMember>& island,
                                        const ChildCounts& children, SelectionOptions options, bool movable_only,
                                        int draws = 6000) {
  std::map<std::string, int> counts;
  Rng rng(7);
  for (int i = 0; i < draws; ++i) {
    auto pick = SelectParent(archive, island, children, options, movable_only, rng);
    if (pick) ++counts[pick->member.candidate_id()];
  }
  return counts;
}

TEST(ParentSelectionTest, PenalisedWeight) {
  struct Case { double fitness; int64_t children; double alpha; double want; };
  const Case cases[] = {{2.0, 0, 1.0, 2.0}, {2.0, 1, 1.0, 1.0}, {2.0, 3, 0.5, 1.0}, {2.0, 5, 0.0, 2.0},
                        {-1.0, 0, 1.0, 0.0}, {2.0, -4, 1.0, 2.0}};
  for (const Case& c : cases) EXPECT_DOUBLE_EQ(PenalisedWeight(c.fitness, c.children, c.alpha), c.want);
}

TEST(ParentSelectionTest, ExplorationIsUniformOverCells) {
  auto counts = CountParents(ThreeCells(), {Member("i", 100)}, {}, {.exploration_ratio = 1.0}, false);
  EXPECT_EQ(counts.count("i"), 0u);
  for (const char* id : {"x1", "y1", "z1"}) EXPECT_NEAR(counts[id], 2000, 150) << id;
}

TEST(ParentSelectionTest, ExploitationIsFitnessWeightedOnTheIsland) {
  const std::vector<coordinator::IslandMember> island = {Member("a", 1), Member("b", 3)};
  auto counts = CountParents(ThreeCells(), island, {}, {.exploration_ratio = 0.0}, false);
  EXPECT_NEAR(counts["b"], 4500, 200);
  EXPECT_NEAR(counts["a"], 1500, 200);
  // Three children of b: weight 3/4 against a's 1.
  auto penalised = CountParents(ThreeCells(), island, {{"b", 3}}, {.exploration_ratio = 0.0}, false);
  EXPECT_NEAR(penalised["a"], 6000 * 1 / 1.75, 200);
}

TEST(ParentSelectionTest, EmptyIslandFallsBackToTheArchiveAndFiltersApply) {
  auto counts = CountParents(ThreeCells(), {}, {}, {.exploration_ratio = 0.0}, /*movable_only=*/true);
  EXPECT_EQ(counts.count("z1"), 0u) << "no movable tunables";
  EXPECT_NEAR(counts["y1"], 4000, 200);
  Rng rng(1);
  MapElitesArchive empty({});
  EXPECT_FALSE(SelectParent(empty, {}, {}, {}, false, rng).has_value());
  EXPECT_FALSE(SelectParent(empty, {Member("n", 1, "s", 0)}, {}, {}, true, rng).has_value());
}

TEST(ParentSelectionTest, MateIsOfTheSameSeedAndNotTheParent) {
  MapElitesArchive archive = ThreeCells();
  const std::vector<coordinator::IslandMember> island = {Member("x2", 5, "x"), Member("x3", 1, "x", 0),
                                                         Member("y2", 9, "y")};
  Rng rng(3);
  std::map<std::string, int> counts;
  for (int i = 0; i < 300; ++i) {
    auto mate = SelectMate(archive, island, {}, {}, Member("x2", 5, "x"), /*movable_only=*/true, rng);
    ASSERT_TRUE(mate.has_value());
    ++counts[mate->candidate_id()];
  }
  EXPECT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts["x1"], 300);
  EXPECT_FALSE(SelectMate(archive, {}, {}, {}, Member("z1", 3, "z"), false, rng).has_value());
  EXPECT_FALSE(SelectMate(archive, {}, {}, {}, Member("q", 3, ""), false, rng).has_value()) << "no seed";
}

TEST(ParentSelectionTest, MateIsOfTheSameFamilyAcrossSeeds) {
  struct Case { std::string name, parent_seed, parent_family; std::set<std::string> want; };
  // Candidates: a1 (seed a, family f), b1 (seed b, family f), c1 (seed c, no family), a2 (seed a, family f).
  auto family_member = [](const std::string& id, const std::string& seed, const std::string& family) {
    coordinator::IslandMember m = Member(id, 1, seed);
    m.set_family(family);
    return m;
  };
  const std::vector<coordinator::IslandMember> island = {family_member("a1", "a", "f"), family_member("b1", "b", "f"),
                                                         family_member("c1", "c", "c"), family_member("a2", "a", "f")};
  const MapElitesArchive empty({FeatureDimension{}});
  for (const Case& c : {Case{"family f", "a", "f", {"a1", "a2", "b1"}}, Case{"own seed only", "c", "c", {"c1"}},
                        Case{"state without families: the seed", "a", "", {"a1"}}}) {
    Rng rng(5);
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
      auto mate = SelectMate(empty, island, {}, {}, family_member("p", c.parent_seed, c.parent_family), true, rng);
      if (mate) seen.insert(mate->candidate_id());
    }
    // "state without families": members of the old state carry none, so their seed is the family.
    if (c.parent_family.empty()) {
      std::vector<coordinator::IslandMember> old = {Member("a1", 1, "a"), Member("b1", 1, "b")};
      seen.clear();
      for (int i = 0; i < 50; ++i) {
        auto mate = SelectMate(empty, old, {}, {}, Member("p", 1, "a"), true, rng);
        if (mate) seen.insert(mate->candidate_id());
      }
    }
    EXPECT_EQ(seen, c.want) << c.name;
  }
}

TEST(ParentSelectionTest, InspirationsAreTopThenDiverse) {
  MapElitesArchive archive({ParseFeatureDimension("tunable:T0").value(), FeatureDimension{}});
  for (int i = 0; i < 8; ++i) {
    const std::string id = "c" + std::to_string(i);
    archive.Insert(MakeCandidate(id, "s" + std::to_string(i)), MakeResult(id, 1.0 + i));
  }
  Rng rng(5);
  auto picks = SelectInspirations(archive, "c7", 2, 3, rng);
  ASSERT_EQ(picks.size(), 5u);
  EXPECT_EQ(picks[0], "c6");
  EXPECT_EQ(picks[1], "c5");
  std::set<std::string> distinct(picks.begin(), picks.end());
  EXPECT_EQ(distinct.size(), 5u);
  EXPECT_EQ(distinct.count("c7"), 0u);
  EXPECT_EQ(SelectInspirations(archive, "", 20, 20, rng).size(), 8u);
  Rng a(9), b(9);
  EXPECT_EQ(SelectInspirations(archive, "c0", 1, 4, a), SelectInspirations(archive, "c0", 1, 4, b));
}

}  // namespace
}  // namespace sparseditto
