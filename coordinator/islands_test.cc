#include "coordinator/islands.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

coordinator::IslandMember Member(const std::string& id, double fitness) {
  coordinator::IslandMember m;
  m.set_candidate_id(id);
  m.set_fitness(fitness);
  m.set_seed_name("s");
  return m;
}

std::vector<std::string> Ids(const IslandModel& model, int island) {
  std::vector<std::string> ids;
  for (const auto& m : model.members(island)) ids.push_back(m.candidate_id());
  return ids;
}

TEST(IslandModelTest, KeepsTheBestUpToCapacity) {
  IslandModel model(2, 3);
  struct Step { const char* id; double fitness; bool stays; std::vector<std::string> after; };
  const Step steps[] = {
      {"a", 1.0, true, {"a"}},
      {"b", 2.0, true, {"b", "a"}},
      {"c", 1.0, true, {"b", "a", "c"}},   // tie: after the earlier one
      {"d", 0.5, false, {"b", "a", "c"}},  // full and worse than all
      {"e", 1.5, true, {"b", "e", "a"}},   // c drops out
      {"b", 9.0, false, {"b", "e", "a"}},  // already there
  };
  for (const Step& s : steps) {
    EXPECT_EQ(model.Add(0, Member(s.id, s.fitness)), s.stays) << s.id;
    EXPECT_EQ(Ids(model, 0), s.after) << s.id;
  }
  EXPECT_TRUE(model.members(1).empty());
}

TEST(IslandModelTest, RingMigrationOfTheTopFraction) {
  IslandModel model(3, 10);
  for (int i = 0; i < 4; ++i) model.Add(0, Member("a" + std::to_string(i), 4 - i));
  model.Add(1, Member("b0", 1.0));
  // island 2 empty
  const std::vector<Migration> moved = model.Migrate(0.5);
  const std::vector<Migration> want = {{0, 1, "a0"}, {0, 1, "a1"}, {1, 2, "b0"}};
  EXPECT_EQ(moved, want);
  EXPECT_EQ(Ids(model, 1), (std::vector<std::string>{"a0", "a1", "b0"}));
  EXPECT_EQ(Ids(model, 2), (std::vector<std::string>{"b0"})) << "from the snapshot, not the migrants";
  // Again: the copies already there are not added twice; fraction rounds up to at least one.
  const std::vector<Migration> second = model.Migrate(0.01);
  const std::vector<Migration> want2 = {{1, 2, "a0"}, {2, 0, "b0"}};  // 0 -> 1: a0 is there
  EXPECT_EQ(second, want2);
}

TEST(IslandModelTest, OneIslandNeverMigrates) {
  IslandModel model(1, 4);
  model.Add(0, Member("a", 1));
  EXPECT_TRUE(model.Migrate(1.0).empty());
}

TEST(IslandModelTest, SaveLoadAndRefusals) {
  IslandModel model(2, 3);
  model.Add(0, Member("a", 1));
  model.Add(1, Member("b", 2));
  model.Add(1, Member("c", 3));
  coordinator::SearchState state;
  model.SaveTo(&state);
  IslandModel restored(2, 3);
  ASSERT_TRUE(restored.LoadFrom(state).ok());
  EXPECT_EQ(Ids(restored, 1), (std::vector<std::string>{"c", "b"}));

  EXPECT_FALSE(IslandModel(3, 3).LoadFrom(state).ok()) << "other island count";
  EXPECT_FALSE(IslandModel(2, 1).LoadFrom(state).ok()) << "above capacity";
  coordinator::SearchState unordered = state;
  unordered.mutable_islands(1)->mutable_members(1)->set_fitness(10);
  EXPECT_FALSE(IslandModel(2, 3).LoadFrom(unordered).ok()) << "not best first";
}

}  // namespace
}  // namespace sparseditto
