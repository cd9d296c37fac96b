#include "kernels/seed_library.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {
namespace {

v1::Task MakeTask(v1::PatternFamily family, v1::Dtype dtype, std::vector<std::string> archs) {
  v1::Task task;
  task.mutable_pattern()->set_family(family);
  task.set_dtype(dtype);
  for (auto& a : archs) task.add_arch(a);
  return task;
}

TEST(SeedLibraryTest, ParsesMetadataAndMatchesTasks) {
  auto seed = ParseSeed("bsr", "// x\n// sparseditto:seed families=[block] dtypes=[fp16, bf16] archs=[sm_80, sm_90] "
                               "block_sizes=[16, 32]\n__global__ void k() {}\n");
  ASSERT_TRUE(seed.ok()) << seed.status();
  v1::Task task = MakeTask(v1::PATTERN_FAMILY_BLOCK, v1::DTYPE_FP16, {"sm_90"});
  task.mutable_pattern()->set_block_rows(32);
  task.mutable_pattern()->set_block_cols(32);
  EXPECT_TRUE(SeedAppliesTo(*seed, task));
  task.mutable_pattern()->set_block_cols(16);
  EXPECT_FALSE(SeedAppliesTo(*seed, task)) << "rectangular blocks";
  task.mutable_pattern()->set_block_rows(64);
  task.mutable_pattern()->set_block_cols(64);
  EXPECT_FALSE(SeedAppliesTo(*seed, task)) << "block size not declared";
  EXPECT_FALSE(SeedAppliesTo(*seed, MakeTask(v1::PATTERN_FAMILY_BLOCK, v1::DTYPE_FP32, {"sm_90"})));
  EXPECT_FALSE(SeedAppliesTo(*seed, MakeTask(v1::PATTERN_FAMILY_UNSTRUCTURED, v1::DTYPE_FP16, {"sm_90"})));
  v1::Task hopper = MakeTask(v1::PATTERN_FAMILY_BLOCK, v1::DTYPE_BF16, {"sm_90a"});
  hopper.mutable_pattern()->set_block_rows(16);
  hopper.mutable_pattern()->set_block_cols(16);
  EXPECT_TRUE(SeedAppliesTo(*seed, hopper)) << "sm_90a builds whatever sm_90 builds";
  auto ampere_only = ParseSeed("a", "// sparseditto:seed families=[block] dtypes=[bf16] archs=[sm_80] block_sizes=[16]\n");
  ASSERT_TRUE(ampere_only.ok()) << ampere_only.status();
  EXPECT_FALSE(SeedAppliesTo(*ampere_only, hopper)) << "arch not declared";
  auto wgmma = ParseSeed("w", "// sparseditto:seed families=[block] dtypes=[bf16] archs=[sm_90a] block_sizes=[16]\n");
  ASSERT_TRUE(wgmma.ok()) << wgmma.status();
  EXPECT_TRUE(SeedAppliesTo(*wgmma, hopper));
  v1::Task plain = hopper;
  plain.set_arch(0, "sm_90");
  EXPECT_FALSE(SeedAppliesTo(*wgmma, plain)) << "an sm_90a-only seed does not build for plain sm_90";
}

TEST(SeedLibraryTest, NmSeedsMatchOnlyTheirRatio) {
  auto seed = ParseSeed("sp", "// sparseditto:seed families=[n_m] dtypes=[fp16] archs=[sm_90] nm=[2:4]\n");
  ASSERT_TRUE(seed.ok()) << seed.status();
  v1::Task task = MakeTask(v1::PATTERN_FAMILY_N_M, v1::DTYPE_FP16, {"sm_90"});
  task.mutable_pattern()->set_n(2);
  task.mutable_pattern()->set_m(4);
  EXPECT_TRUE(SeedAppliesTo(*seed, task));
  task.mutable_pattern()->set_m(8);
  EXPECT_FALSE(SeedAppliesTo(*seed, task));
}

TEST(SeedLibraryTest, LayoutsAreReadFromTheSourcesMask) {
  struct Case {
    const char* label;
    std::string code;
    bool nk;
  };
  const Case cases[] = {
      {"no_mask", "", false},
      {"kn_and_nk",
       "SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) {\n"
       "  return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK);\n}\n",
       true},
      {"spaced_no_void", "uint32_t sparseditto_layouts ( ) { return SPARSEDITTO_LAYOUT_BIT( SD_LAYOUT_NK ); }", true},
      {"kn_only_mask", "SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) { return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN); }",
       false},
      // NK named after the function's body ends is not the mask's.
      {"nk_outside_the_body",
       "uint32_t sparseditto_layouts(void) { return 1u; }\nstatic const int x = SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK);",
       false},
      {"declaration_only", "SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void);\n// SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)", false},
  };
  v1::Task task = MakeTask(v1::PATTERN_FAMILY_DENSE, v1::DTYPE_FP16, {"sm_90"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    auto seed = ParseSeed("s", "// sparseditto:seed families=[dense] dtypes=[fp16] archs=[sm_90]\n" + c.code);
    ASSERT_TRUE(seed.ok()) << seed.status();
    EXPECT_EQ(seed->layouts.size(), c.nk ? 2u : 1u);
    task.set_layout(v1::LAYOUT_KN);
    EXPECT_TRUE(SeedAppliesTo(*seed, task)) << "every seed serves KN";
    task.set_layout(v1::LAYOUT_NK);
    EXPECT_EQ(SeedAppliesTo(*seed, task), c.nk);
  }
}

// The seeds this project ships for NK tasks (the dense ones and the reference's family members); a
// seed that gains the mask joins by itself.
TEST(SeedLibraryTest, TheShippedDenseSeedsServeNk) {
  auto seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  std::vector<std::string> nk;
  for (const SeedKernel& seed : *seeds) {
    if (seed.layouts.size() == 2) nk.push_back(seed.name);
  }
  for (const char* name : {"dense_cublas", "dense_cublaslt"}) {
    EXPECT_NE(std::find(nk.begin(), nk.end(), name), nk.end()) << name;
  }
  EXPECT_EQ(std::find(nk.begin(), nk.end(), "bsr_mma"), nk.end()) << "bsr_mma is KN only";
}

TEST(SeedLibraryTest, BadMetadataNamesTheSeedAndLine) {
  struct Case { const char* source; const char* want; };
  for (const Case& c : {Case{"int x;\n", "no '// sparseditto:seed"},
                        Case{"\n// sparseditto:seed families=[block] dtypes=[fp16]\n", "line 2: 'archs' is required"},
                        Case{"// sparseditto:seed families=[blocky] dtypes=[fp16] archs=[sm_90]\n", "unknown family"},
                        Case{"// sparseditto:seed families=[block] dtypes=[fp8] archs=[sm_90]\n", "fp8"},
                        Case{"// sparseditto:seed families=[block] dtypes=[fp16] archs=[sm_90] colour=[red]\n",
                             "unknown key 'colour'"},
                        Case{"// sparseditto:seed families=[block dtypes=[fp16] archs=[sm_90]\n", "key=[v1, v2]"},
                        Case{"// sparseditto:seed families=[n_m] dtypes=[fp16] archs=[sm_90] nm=[4:2]\n", "bad n:m"},
                        Case{"// sparseditto:seed families=[dense] dtypes=[fp16] archs=[sm_90]\n"
                             "// sparseditto:seed families=[dense] dtypes=[fp16] archs=[sm_90]\n",
                             "line 2: second"}}) {
    auto seed = ParseSeed("s", c.source);
    ASSERT_FALSE(seed.ok()) << c.source;
    EXPECT_NE(seed.status().message().find("seed s"), std::string::npos);
    EXPECT_NE(seed.status().message().find(c.want), std::string::npos) << seed.status();
  }
}

TEST(SeedLibraryTest, TheShippedLibraryParses) {
  auto seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  for (const auto& seed : *seeds) EXPECT_FALSE(seed.families.empty()) << seed.name;
}

// Every shipped seed declares tunables, and every value each one lists can be applied: the rewritten source
// parses back with that value current and differs from the seed in that one line only.
TEST(SeedLibraryTest, EveryShippedSeedsTunablesApplyForEveryListedValue) {
  auto seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  for (const auto& seed : *seeds) {
    SCOPED_TRACE(seed.name);
    auto tunables = ParseTunables(seed.source);
    ASSERT_TRUE(tunables.ok()) << tunables.status();
    EXPECT_FALSE(tunables->empty()) << "a seed with nothing for the built-in mutator to tune";
    for (const v1::Tunable& t : *tunables) {
      for (const std::string& value : t.allowed_values()) {
        auto applied = ApplyTunables(seed.source, {{t.name(), value}});
        ASSERT_TRUE(applied.ok()) << t.name() << "=" << value << ": " << applied.status();
        auto back = ParseTunables(*applied);
        ASSERT_TRUE(back.ok()) << back.status();
        for (const v1::Tunable& u : *back) {
          if (u.name() == t.name()) EXPECT_EQ(u.value(), value) << t.name();
        }
        size_t differing = 0, a = 0, b = 0;  // lines that differ between the seed and the rewrite
        const std::string& x = seed.source;
        const std::string& y = *applied;
        while (a < x.size() || b < y.size()) {
          const size_t ea = std::min(x.find('\n', a), x.size()), eb = std::min(y.find('\n', b), y.size());
          differing += x.compare(a, ea - a, y, b, eb - b) != 0;
          a = ea + 1, b = eb + 1;
        }
        EXPECT_LE(differing, 1u) << t.name() << "=" << value;
      }
    }
  }
}

}  // namespace
}  // namespace sparseditto
