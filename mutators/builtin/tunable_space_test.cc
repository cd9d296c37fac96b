#include "mutators/builtin/tunable_space.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "mutators/builtin/builtin_mutator.h"
#include "mutators/builtin/source_hash.h"

namespace sparseditto {
namespace {

// 2 x 3 = 6 points; FIXED does not move.
constexpr char kSmall[] =
    "#define A 1  // sparseditto:tunable values=[1, 2]\n"
    "#define B 8  // sparseditto:tunable values=[8, 16, 32]\n"
    "#define FIXED 0  // sparseditto:tunable values=[0]\n"
    "__global__ void k() {}\n";

int Distance(const std::map<std::string, std::string>& changes) { return static_cast<int>(changes.size()); }

TEST(TunableSpaceTest, SizeIsTheProductOfTheValueCounts) {
  struct Case { std::string source; int64_t want; };
  for (const Case& c : {Case{kSmall, 6}, Case{"int x;\n", 1},
                        Case{"#define A 1 // sparseditto:tunable values=device:sm_count*[1, 2]\n", 1}}) {
    auto t = ParseTunables(c.source);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(TunableSpaceSize(*t), c.want) << c.source;
  }
  std::vector<v1::Tunable> huge(40);
  for (auto& t : huge) {
    for (int v = 0; v < 8; ++v) t.add_allowed_values(std::to_string(v));
  }
  EXPECT_EQ(TunableSpaceSize(huge), std::numeric_limits<int64_t>::max());
}

TEST(TunableSpaceTest, WalksNearestFirstThenSaysExhausted) {
  std::set<std::string> known = {SourceHash(kSmall)};
  const KnownSourcePredicate is_known = [&](const std::string& h) { return known.contains(h); };
  Rng rng(7);
  std::vector<int> distances;
  for (int i = 0; i < 5; ++i) {
    auto point = NearestUnseenPoint(kSmall, {}, is_known, rng);
    ASSERT_TRUE(point.ok()) << i << ": " << point.status();
    auto source = ApplyTunables(kSmall, *point);
    ASSERT_TRUE(source.ok());
    EXPECT_TRUE(known.insert(SourceHash(*source)).second) << "point " << i << " was known";
    distances.push_back(Distance(*point));
  }
  // Three points at distance 1 (A moved, or B to one of two), then the two at distance 2.
  EXPECT_EQ(distances, (std::vector<int>{1, 1, 1, 2, 2}));
  auto done = NearestUnseenPoint(kSmall, {}, is_known, rng);
  EXPECT_EQ(done.status().code(), absl::StatusCode::kResourceExhausted) << done.status();
  EXPECT_NE(done.status().message().find("6 points"), std::string::npos) << done.status();
}

TEST(TunableSpaceTest, ALargeSpaceBeyondTheProbesIsNotCalledExhausted) {
  const KnownSourcePredicate everything = [](const std::string&) { return true; };
  Rng rng(1);
  auto r = NearestUnseenPoint(kSmall, {}, everything, rng, /*max_probes=*/2);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
}

TEST(TunableSpaceTest, KeyIsSharedByThePointsOfOneSpaceOnly) {
  auto moved = ApplyTunables(kSmall, {{"A", "2"}, {"B", "32"}});
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*TunableSpaceKey(kSmall), *TunableSpaceKey(*moved));
  std::string other = kSmall;
  other.replace(other.find("k()"), 3, "k2()");
  EXPECT_NE(*TunableSpaceKey(kSmall), *TunableSpaceKey(other));
}

v1::Candidate Candidate(const std::string& id, const std::string& seed, const std::string& source,
                        const DeviceFacts& device = {}) {
  v1::Candidate c;
  c.set_id(id);
  c.set_task_name("t");
  c.set_seed_name(seed);
  c.set_source(source);
  c.set_source_hash(SourceHash(source));
  auto t = ParseTunables(source, device);
  EXPECT_TRUE(t.ok()) << t.status();
  for (const auto& x : *t) *c.add_tunables() = x;
  return c;
}

TEST(BuiltinMutatorSpaceTest, MutationNeverRepeatsAKnownPointAndEndsExhausted) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const v1::Candidate parent = Candidate("t.1", "small", kSmall);
    std::set<std::string> known = {parent.source_hash()};
    const KnownSourcePredicate is_known = [&](const std::string& h) { return known.contains(h); };
    Rng rng(seed);
    for (int i = 0; i < 5; ++i) {
      auto child = MutateTunables(parent, rng, {}, is_known);
      ASSERT_TRUE(child.ok()) << "seed " << seed << " child " << i << ": " << child.status();
      EXPECT_TRUE(known.insert(child->source_hash()).second) << "a duplicate was proposed";
    }
    auto done = MutateTunables(parent, rng, {}, is_known);
    EXPECT_EQ(done.status().code(), absl::StatusCode::kResourceExhausted) << done.status();
    EXPECT_NE(done.status().message().find("seed 'small'"), std::string::npos) << done.status();
  }
}

TEST(BuiltinMutatorSpaceTest, DeviceRelativeTunablesMoveOnlyWithFacts) {
  constexpr char kGrid[] = "#define GRID 264 // sparseditto:tunable values=device:sm_count*[1, 2, 4]\n";
  const DeviceFacts h200{.sm_count = 132};
  Rng rng(5);
  EXPECT_EQ(MutateTunables(Candidate("t.1", "g", kGrid), rng).status().code(), absl::StatusCode::kFailedPrecondition);
  auto child = MutateTunables(Candidate("t.1", "g", kGrid, h200), rng, {.device = h200});
  ASSERT_TRUE(child.ok()) << child.status();
  const std::string value = child->tunables(0).value();
  EXPECT_TRUE(value == "132" || value == "528") << value;
  EXPECT_EQ(child->tunables(0).allowed_values_size(), 3);
}

constexpr char kFamilyA[] =
    "// sparseditto:family stream\n"
    "#define WARPS 4  // sparseditto:tunable values=[4, 8]\n"
    "#define UNROLL 2 // sparseditto:tunable values=[1, 2, 4]\n"
    "#define TILE (64,64) // sparseditto:tunable values=[(64,64), (128,64)]\n"
    "__global__ void a() {}\n";
constexpr char kFamilyB[] =
    "// sparseditto:family stream\n"
    "#define WARPS 8  // sparseditto:tunable values=[4, 8, 16]\n"
    "#define UNROLL 4 // sparseditto:tunable values=[2, 4, 6]\n"
    "#define TILE (128,64) // sparseditto:tunable values=[(128,64), (256,64)]\n"
    "#define ONLY_B 1 // sparseditto:tunable values=[1, 2]\n"
    "__global__ void b() {}\n";

TEST(BuiltinMutatorSpaceTest, CrossoverAcrossSeedsOfOneFamily) {
  const v1::Candidate a = Candidate("t.1", "seed_a", kFamilyA);
  const v1::Candidate b = Candidate("t.2", "seed_b", kFamilyB);
  EXPECT_EQ(CrossoverFamily(a), "stream");
  EXPECT_EQ(CrossoverFamily(Candidate("t.3", "plain", kSmall)), "plain");
  std::set<std::string> known = {a.source_hash(), b.source_hash()};
  const KnownSourcePredicate is_known = [&](const std::string& h) { return known.contains(h); };
  Rng rng(3);
  // WARPS, UNROLL and TILE line up: 2^3 - 2 = 6 mixes built on a's source, then none is left.
  for (int i = 0; i < 6; ++i) {
    auto child = CrossoverTunables(a, b, rng, {}, is_known);
    ASSERT_TRUE(child.ok()) << i << ": " << child.status();
    EXPECT_EQ(child->seed_name(), "seed_a");
    EXPECT_EQ(child->parent_ids_size(), 2);
    EXPECT_NE(child->source().find("void a()"), std::string::npos);
    EXPECT_TRUE(known.insert(child->source_hash()).second) << "a known mix was proposed";
  }
  EXPECT_EQ(CrossoverTunables(a, b, rng, {}, is_known).status().code(), absl::StatusCode::kFailedPrecondition);
  struct Case { std::string name, source_b; absl::StatusCode want; };
  for (const Case& c : {Case{"other family", std::string(kFamilyB).replace(22, 6, "tiles"), absl::StatusCode::kInvalidArgument},
                        Case{"no family", kSmall, absl::StatusCode::kInvalidArgument}}) {
    auto r = CrossoverTunables(a, Candidate("t.9", "seed_c", c.source_b), rng);
    EXPECT_EQ(r.status().code(), c.want) << c.name << ": " << r.status();
  }
}

TEST(BuiltinMutatorSpaceTest, RealSeedsDeclareFamiliesAndAStructuralChoice) {
  auto library = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  ASSERT_TRUE(library.ok()) << library.status();
  std::map<std::string, v1::Candidate> by_name;
  for (const SeedKernel& seed : *library) by_name[seed.name] = Candidate("t." + seed.name, seed.name, seed.source);
  struct Case { std::string seed, family; };
  for (const Case& c : {Case{"dense_stream", "stream"}, Case{"nm24_stream_sp", "stream"}, Case{"u14_stream_sp", "stream"},
                        Case{"csr_warp_per_row", "csr_rows"}, Case{"csr_merge_path", "csr_rows"},
                        Case{"csr_packed_rows", "csr_packed_rows"}}) {
    ASSERT_TRUE(by_name.contains(c.seed)) << c.seed;
    EXPECT_EQ(CrossoverFamily(by_name[c.seed]), c.family) << c.seed;
  }
  // Two seeds of the stream family that serve a 2:4 task cross: the child is nm24_stream_sp's code
  // with some of dense_stream's values (those nm24_stream_sp allows).
  Rng rng(11);
  auto child = CrossoverTunables(by_name["nm24_stream_sp"], by_name["dense_stream"], rng);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(child->seed_name(), "nm24_stream_sp");
  EXPECT_NE(child->source_hash(), by_name["nm24_stream_sp"].source_hash());
  // csr_packed_rows's B path is a named choice between two code paths it has.
  const v1::Candidate& packed = by_name["csr_packed_rows"];
  auto shared_b = std::find_if(packed.tunables().begin(), packed.tunables().end(),
                               [](const v1::Tunable& t) { return t.name() == "SHARED_B"; });
  ASSERT_NE(shared_b, packed.tunables().end());
  EXPECT_EQ(std::vector<std::string>(shared_b->allowed_values().begin(), shared_b->allowed_values().end()),
            (std::vector<std::string>{"B_FROM_GLOBAL", "B_FROM_SHARED"}));
  auto staged = ApplyTunables(packed.source(), {{"SHARED_B", "B_FROM_SHARED"}});
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_NE(staged->find("#define SHARED_B B_FROM_SHARED  //"), std::string::npos);
}

}  // namespace
}  // namespace sparseditto
