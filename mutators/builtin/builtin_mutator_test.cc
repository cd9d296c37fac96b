#include "mutators/builtin/builtin_mutator.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "mutators/builtin/source_hash.h"

namespace sparseditto {
namespace {

constexpr char kSeedSource[] =
    "// sparseditto:seed families=[unstructured] dtypes=[fp16] archs=[sm_80, sm_90]\n"
    "#define TILE 64   // sparseditto:tunable values=[16, 32, 64, 128, 256]\n"
    "#define WARPS 4   // sparseditto:tunable values=[1, 2, 4, 8]\n"
    "#define FIXED 1   // sparseditto:tunable values=[1]\n"
    "#define UNROLL 2  // sparseditto:tunable values=[1, 2, 4]\n"
    "__global__ void k() {}\n";

v1::Task UnstructuredTask() {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.add_arch("sm_90");
  return task;
}

SeedKernel MakeSeed(const std::string& name, const std::string& source) {
  auto seed = ParseSeed(name, source);
  EXPECT_TRUE(seed.ok()) << seed.status();
  return *seed;
}

v1::Candidate Parent() {
  auto seeds = SeedCandidates(UnstructuredTask(), {MakeSeed("tiled", kSeedSource)});
  EXPECT_TRUE(seeds.ok() && seeds->size() == 1);
  v1::Candidate parent = (*seeds)[0];
  parent.set_id("t.000001");
  parent.set_generation(3);
  parent.set_island(2);
  return parent;
}

std::map<std::string, std::string> Values(const v1::Candidate& c) {
  std::map<std::string, std::string> out;
  auto parsed = ParseTunables(c.source());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return out;
  for (const auto& t : *parsed) out[t.name()] = t.value();
  return out;
}

TEST(SeedCandidatesTest, OnePerApplicableSeed) {
  const std::vector<SeedKernel> seeds = {
      MakeSeed("a_tiled", kSeedSource),
      MakeSeed("b_block_only", "// sparseditto:seed families=[block] dtypes=[fp16] archs=[sm_90]\n"),
      MakeSeed("c_plain", "// sparseditto:seed families=[unstructured] dtypes=[fp16, fp32] archs=[sm_90]\n"),
  };
  auto out = SeedCandidates(UnstructuredTask(), seeds, {.mutator_name = "tuner"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  const v1::Candidate& c = (*out)[0];
  EXPECT_EQ(c.seed_name(), "a_tiled");
  EXPECT_EQ(c.task_name(), "t");
  EXPECT_EQ(c.operator_(), v1::MUTATION_OPERATOR_SEED);
  EXPECT_EQ(c.mutator(), "tuner");
  EXPECT_EQ(c.generation(), 0);
  EXPECT_TRUE(c.id().empty()) << "the caller assigns ids";
  EXPECT_EQ(c.source_hash(), SourceHash(kSeedSource));
  ASSERT_EQ(c.tunables_size(), 4);
  EXPECT_EQ(c.tunables(0).name(), "TILE");
  EXPECT_EQ(c.archs_size(), 2);
  EXPECT_EQ((*out)[1].seed_name(), "c_plain");
  EXPECT_EQ((*out)[1].tunables_size(), 0);
}

TEST(SeedCandidatesTest, MalformedTunablesNameTheSeed) {
  auto out = SeedCandidates(
      UnstructuredTask(),
      {MakeSeed("broken", "// sparseditto:seed families=[unstructured] dtypes=[fp16] archs=[sm_90]\n"
                          "#define A 3 // sparseditto:tunable values=[1, 2]\n")});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("seed 'broken'"), std::string::npos) << out.status();
}

TEST(SeedCandidatesTest, RealSeedLibraryParses) {
  const std::string dir = std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no " << dir;
  auto library = LoadSeedLibrary(dir);
  ASSERT_TRUE(library.ok()) << library.status();
  auto out = SeedCandidates(UnstructuredTask(), *library);
  ASSERT_TRUE(out.ok()) << out.status();
  size_t applicable = 0;
  for (const SeedKernel& s : *library) applicable += SeedAppliesTo(s, UnstructuredTask());
  EXPECT_EQ(out->size(), applicable);
  for (const v1::Candidate& c : *out) EXPECT_EQ(c.source_hash(), SourceHash(c.source())) << c.seed_name();
}

TEST(MutateTunablesTest, ChangesOneToKAllowedValues) {
  const v1::Candidate parent = Parent();
  const auto before = Values(parent);
  int neighbour_moves = 0, jumps = 0;
  std::set<size_t> change_counts;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed);
    auto child = MutateTunables(parent, rng, {.max_tunables_changed = 3});
    ASSERT_TRUE(child.ok()) << child.status();
    EXPECT_EQ(child->operator_(), v1::MUTATION_OPERATOR_TUNE);
    EXPECT_EQ(child->generation(), 4);
    EXPECT_EQ(child->island(), 2);
    EXPECT_EQ(child->seed_name(), "tiled");
    ASSERT_EQ(child->parent_ids_size(), 1);
    EXPECT_EQ(child->parent_ids(0), "t.000001");
    EXPECT_EQ(child->source_hash(), SourceHash(child->source()));
    EXPECT_NE(child->source_hash(), parent.source_hash());
    const auto after = Values(*child);
    EXPECT_EQ(after.at("FIXED"), "1");
    size_t changed = 0;
    for (const v1::Tunable& t : child->tunables()) {
      if (t.value() == before.at(t.name())) continue;
      ++changed;
      const auto& allowed = t.allowed_values();
      const auto from = std::find(allowed.begin(), allowed.end(), before.at(t.name())) - allowed.begin();
      const auto to = std::find(allowed.begin(), allowed.end(), t.value()) - allowed.begin();
      (std::abs(from - to) == 1 ? neighbour_moves : jumps)++;
    }
    EXPECT_GE(changed, 1u);
    EXPECT_LE(changed, 3u);
    change_counts.insert(changed);
  }
  EXPECT_EQ(change_counts, (std::set<size_t>{1, 2, 3}));
  EXPECT_GT(neighbour_moves, 2 * jumps) << "neighbours are preferred";
  EXPECT_GT(jumps, 0) << "but jumps happen";
}

TEST(MutateTunablesTest, SameGeneratorStateSameChild) {
  Rng a(42), b(42);
  auto x = MutateTunables(Parent(), a);
  auto y = MutateTunables(Parent(), b);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(x->SerializeAsString(), y->SerializeAsString());
}

TEST(MutateTunablesTest, RefusesWhatCannotChange) {
  struct Case { const char* name; std::string source; absl::StatusCode code; int k; };
  const Case cases[] = {
      {"no_tunables", "__global__ void k() {}\n", absl::StatusCode::kFailedPrecondition, 2},
      {"single_values", "#define A 1 // sparseditto:tunable values=[1]\n", absl::StatusCode::kFailedPrecondition, 2},
      {"malformed", "#define A 5 // sparseditto:tunable values=[1, 2]\n", absl::StatusCode::kInvalidArgument, 2},
      {"bad_k", kSeedSource, absl::StatusCode::kInvalidArgument, 0},
  };
  for (const Case& c : cases) {
    v1::Candidate parent;
    parent.set_source(c.source);
    Rng rng(1);
    auto child = MutateTunables(parent, rng, {.max_tunables_changed = c.k});
    ASSERT_FALSE(child.ok()) << c.name;
    EXPECT_EQ(child.status().code(), c.code) << c.name << ": " << child.status();
  }
}

TEST(CrossoverTunablesTest, MixesValuesAndCopiesNeitherParent) {
  v1::Candidate a = Parent();
  v1::Candidate b = a;
  b.set_id("t.000002");
  b.set_generation(7);
  b.set_source(*ApplyTunables(a.source(), {{"TILE", "16"}, {"WARPS", "8"}, {"UNROLL", "4"}}));
  const auto va = Values(a), vb = Values(b);
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Rng rng(seed);
    auto child = CrossoverTunables(a, b, rng);
    ASSERT_TRUE(child.ok()) << child.status();
    EXPECT_EQ(child->operator_(), v1::MUTATION_OPERATOR_TUNE_CROSSOVER);
    EXPECT_EQ(child->generation(), 8);
    ASSERT_EQ(child->parent_ids_size(), 2);
    EXPECT_EQ(child->parent_ids(1), "t.000002");
    const auto vc = Values(*child);
    EXPECT_NE(vc, va);
    EXPECT_NE(vc, vb);
    std::string key;
    for (const auto& [name, value] : vc) {
      EXPECT_TRUE(value == va.at(name) || value == vb.at(name)) << name;
      key += value + ",";
    }
    seen.insert(key);
  }
  EXPECT_EQ(seen.size(), 6u) << "all 2^3 - 2 mixes occur";
}

TEST(CrossoverTunablesTest, Refusals) {
  const v1::Candidate a = Parent();
  struct Case { const char* name; std::function<void(v1::Candidate&)> edit; absl::StatusCode code; };
  const Case cases[] = {
      {"other_seed", [](v1::Candidate& b) { b.set_seed_name("other"); }, absl::StatusCode::kInvalidArgument},
      {"other_task", [](v1::Candidate& b) { b.set_task_name("u"); }, absl::StatusCode::kInvalidArgument},
      {"identical", [](v1::Candidate&) {}, absl::StatusCode::kFailedPrecondition},
      {"one_difference",
       [](v1::Candidate& b) { b.set_source(*ApplyTunables(b.source(), {{"TILE", "16"}})); },
       absl::StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    v1::Candidate b = a;
    c.edit(b);
    Rng rng(1);
    auto child = CrossoverTunables(a, b, rng);
    ASSERT_FALSE(child.ok()) << c.name;
    EXPECT_EQ(child.status().code(), c.code) << c.name << ": " << child.status();
  }
}

}  // namespace
}  // namespace sparseditto
