// The plan composer: refusals (table), every seed composes, real seeds composed (two instantiations of
// one seed among them) pass the evaluator's static screen (spelling and preprocessed) and compile with the real nvcc for sm_80 and sm_90a
// exporting exactly the ABI, and tiny variants loaded on the CPU show each n reaching its variant.
#include "mutators/plan/plan_composer.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "evaluator/compile/exported_symbols.h"
#include "evaluator/compile/host_preprocess.h"
#include "evaluator/compile/nvcc_compiler.h"
#include "evaluator/compile/static_screen.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "kernels/seed_library.h"
#include "kernels/testing/candidate_build.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kMaxN = 1048576;

// A tiny variant that touches no GPU, for the CPU checks. `problem->values` carries the test's log
// (int[48]): log[16 * id] counts prepares, log[16 * id + 1] releases, log[16 * id + 2] is 100 + the
// layout prepare was given. run writes into C (host memory
// here): the variant id, then the n values its prepare was given.
constexpr char kTinyVariant[] = R"(// A test variant.
#include "sparseditto_kernel.h"
#include <cstdio>
#define VARIANT_ID 0    // sparseditto:tunable values=[0, 1, 2]
#define FAIL_PREPARE 0  // sparseditto:tunable values=[0, 1]
#define HELPER(x) ((x) + 0)
namespace {
struct State {
  int* log;
  int64_t n[8];
  int count;
};
}  // namespace
SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  if (FAIL_PREPARE) {
    std::snprintf(error, cap, "variant %d refuses", VARIANT_ID);
    return 7;
  }
  State* s = new State();
  s->log = (int*)(const void*)p->values;
  s->count = p->num_n_values;
  for (int i = 0; i < p->num_n_values && i < 8; ++i) s->n[i] = p->n_values[i];
  s->log[16 * VARIANT_ID] += 1;
  s->log[16 * VARIANT_ID + 2] = 100 + p->layout;
  *state = s;
  return 0;
}
SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void*, void* c, int64_t, cudaStream_t) {
  State* s = (State*)state;
  int64_t* out = (int64_t*)c;
  out[0] = HELPER(VARIANT_ID);
  for (int i = 0; i < s->count; ++i) out[1 + i] = s->n[i];
  return 0;
}
SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = (State*)state;
  s->log[16 * VARIANT_ID + 1] += 1;
  delete s;
}
)";

std::string ReplaceAllForTest(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string Tiny(int id, bool fail = false) {
  absl::StatusOr<std::string> source =
      ApplyTunables(kTinyVariant, {{"VARIANT_ID", std::to_string(id)}, {"FAIL_PREPARE", fail ? "1" : "0"}});
  EXPECT_TRUE(source.ok()) << source.status();
  return source.ok() ? *source : "";
}

PlanVariant V(std::string name, std::string source, std::vector<NRange> serves) {
  return {.name = std::move(name), .seed_name = "s", .source = std::move(source), .serves = std::move(serves)};
}

struct RefusalCase {
  std::string what;
  std::vector<PlanVariant> variants;
  std::string message;  // a part of the error
};

TEST(PlanComposerTest, RefusesWhatItCannotComposeSafelyAndSaysWhy) {
  const std::string tiny = Tiny(0);
  const std::string include = "#include \"sparseditto_kernel.h\"\n";
  const std::string abi = tiny.substr(tiny.find("namespace {"));
  const std::vector<RefusalCase> cases = {
      {"include after code", {V("late", include + "int x;\n#include <cstdio>\n" + abi, {{1, 9}})},
       "plan variant late: line 3: an #include after code"},
      {"include after a define", {V("def", "#define FOO 1\n" + include + abi, {{1, 9}})}, "line 2: an #include after"},
      {"include of a macro", {V("mac", include + "#include HEADER\n" + abi, {{1, 9}})}, "does not name a header"},
      {"no run", {V("norun", ReplaceAllForTest(tiny, "sparseditto_run", "other_run"), {{1, 9}})},
       "plan variant norun: no sparseditto_run in its code"},
      {"defines an ABI name", {V("abi", include + "#define sparseditto_run my_run\n" + abi, {{1, 9}})},
       "#define sparseditto_run"},
      {"undefines the export macro", {V("undef", include + "#undef SPARSEDITTO_EXPORT\n" + abi, {{1, 9}})},
       "#undef SPARSEDITTO_EXPORT"},
      {"uses the plan's names", {V("ns", include + "int sd_plan_v0_x;\n" + abi, {{1, 9}})}, "'sd_plan_v0_x'"},
      {"no variant", {}, "at least one variant"},
      {"overlap", {V("a", tiny, {{1, 16}}), V("b", Tiny(1), {{16, 32}})}, "a and b both serve n = 16"},
      {"empty range", {V("a", tiny, {{9, 8}})}, "range 9-8 is empty"},
      {"range from 0", {V("a", tiny, {{0, 8}})}, "starts below 1"},
      {"no range", {V("a", tiny, {})}, "serves no n"},
      {"a bad name", {V("a b", tiny, {{1, 8}})}, "names are"},
      {"the same name twice", {V("a", tiny, {{1, 8}}), V("a", Tiny(1), {{9, 10}})}, "plan variant a twice"},
  };
  for (const RefusalCase& c : cases) {
    absl::StatusOr<std::string> plan = ComposePlanSource(c.variants);
    ASSERT_FALSE(plan.ok()) << c.what;
    EXPECT_TRUE(absl::IsInvalidArgument(plan.status())) << c.what;
    EXPECT_THAT(plan.status().message(), HasSubstr(c.message)) << c.what;
  }
  // A plan is not a variant of another plan.
  absl::StatusOr<std::string> plan = ComposePlanSource({V("a", tiny, {{1, 8}})});
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<std::string> nested = ComposePlanSource({V("p", *plan, {{1, 8}})});
  EXPECT_THAT(nested.status().message(), HasSubstr("plan variant p: its source is itself a plan"));
}

std::vector<SeedKernel> Seeds() {
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  return seeds.ok() ? *seeds : std::vector<SeedKernel>{};
}

const SeedKernel& Seed(const std::vector<SeedKernel>& seeds, const std::string& name) {
  for (const SeedKernel& s : seeds) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no seed " << name;
  static const SeedKernel none;
  return none;
}

TEST(PlanComposerTest, EverySeedComposesAndReadsBack) {
  const std::vector<SeedKernel> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  for (const SeedKernel& seed : seeds) {
    absl::StatusOr<std::string> plan = ComposePlanSource({V(seed.name, seed.source, {{1, 8}, {100, kMaxN}})});
    ASSERT_TRUE(plan.ok()) << seed.name << ": " << plan.status();
    absl::StatusOr<std::vector<ParsedPlanVariant>> parsed = ParsePlanSource(*plan);
    ASSERT_TRUE(parsed.ok()) << seed.name << ": " << parsed.status();
    ASSERT_EQ(parsed->size(), 1u);
    EXPECT_EQ((*parsed)[0].name, seed.name);
    EXPECT_EQ((*parsed)[0].serves, (std::vector<NRange>{{1, 8}, {100, kMaxN}}));
    absl::StatusOr<std::vector<v1::Tunable>> own = ParseTunables(seed.source);
    absl::StatusOr<std::vector<v1::Tunable>> back = ParseTunables((*parsed)[0].body);
    ASSERT_TRUE(own.ok() && back.ok()) << seed.name;
    ASSERT_EQ(own->size(), back->size()) << seed.name;
    for (size_t i = 0; i < own->size(); ++i) EXPECT_EQ((*own)[i].DebugString(), (*back)[i].DebugString());
    EXPECT_TRUE(ScreenCandidateSource(*plan).ok()) << seed.name << ": " << ScreenCandidateSource(*plan);
  }
  EXPECT_TRUE(absl::IsNotFound(ParsePlanSource(seeds[0].source).status()));
}

// Three real seeds, two of them one seed with other tunables (the same names, other values).
TEST(PlanComposerTest, RealSeedsComposeIntoOneCandidateThatCompilesAndExportsExactlyTheAbi) {
  const std::vector<SeedKernel> seeds = Seeds();
  const SeedKernel& warp = Seed(seeds, "csr_warp_per_row");
  absl::StatusOr<std::string> retuned = ApplyTunables(warp.source, {{"BLOCK_THREADS", "256"}, {"UNROLL", "2"}});
  ASSERT_TRUE(retuned.ok()) << retuned.status();
  const std::vector<PlanVariant> variants = {
      {.name = "t.000001", .seed_name = "csr_warp_per_row", .source = warp.source, .serves = {{1, 16}}},
      {.name = "t.000002", .seed_name = "dense_cublas", .source = Seed(seeds, "dense_cublas").source,
       .serves = {{17, 128}}},
      {.name = "t.000003", .seed_name = "csr_warp_per_row", .source = *retuned, .serves = {{129, kMaxN}}}};
  absl::StatusOr<std::string> plan = ComposePlanSource(variants);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(*plan);
  ASSERT_TRUE(tunables.ok()) << tunables.status();
  EXPECT_TRUE(tunables->empty()) << "a plan declares no tunables of its own";
  EXPECT_TRUE(ScreenCandidateSource(*plan).ok()) << ScreenCandidateSource(*plan);
  absl::StatusOr<std::vector<ParsedPlanVariant>> parsed = ParsePlanSource(*plan);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_THAT((*parsed)[2].body, HasSubstr("#define BLOCK_THREADS 256        // sparseditto:tunable"));

  testing_support::TempFolder scratch("plan_composer_test");
  ASSERT_TRUE(scratch.ok());
  absl::StatusOr<std::unique_ptr<NvccCompiler>> nvcc =
      NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = (scratch.path() / "cache").string()});
  ASSERT_TRUE(nvcc.ok()) << nvcc.status();
  CompileOptions options;
  options.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.archs = {"sm_80", "sm_90a"};
  options.timeout_seconds = 600;
  // The evaluator's screen: the spelling, then the host unit nvcc -E makes of it.
  EXPECT_TRUE(ScreenCandidate(**nvcc, *plan, options).ok()) << ScreenCandidate(**nvcc, *plan, options);
  absl::StatusOr<CompileResult> compiled = (*nvcc)->Compile(*plan, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->ok) << compiled->failure << "\n" << compiled->log;
  std::set<std::string> archs_with_kernels;
  for (const v1::KernelResources& r : compiled->resources) archs_with_kernels.insert(r.arch());
  EXPECT_EQ(archs_with_kernels, (std::set<std::string>{"sm_80", "sm_90a"})) << compiled->log;
  absl::StatusOr<std::vector<ExportedSymbol>> exported = ReadExportedSymbols(compiled->library_path);
  ASSERT_TRUE(exported.ok()) << exported.status();
  // C++ names may show (nvcc names anonymous namespaces, and a lone seed exports the same explicit
  // specialisations); the C names are the ABI's and nothing else: no variant's renamed entry.
  std::set<std::string> c_names;
  for (const ExportedSymbol& s : *exported) {
    if (!s.name.starts_with("_Z")) c_names.insert(s.name);
  }
  EXPECT_EQ(c_names, (std::set<std::string>{"sparseditto_abi_version", "sparseditto_layouts", "sparseditto_prepare",
                                            "sparseditto_release", "sparseditto_run"}));
}

// Compiles `source` (host code only matters) and loads it.
testing::CandidateLibrary Load(const std::string& source, const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path cu = dir / (name + ".cu"), so = dir / (name + ".so");
  std::ofstream(cu) << source;
  absl::StatusOr<std::string> log = testing::CompileCandidate(SPARSEDITTO_NVCC, cu.string(), {"sm_80"}, so.string());
  EXPECT_TRUE(log.ok()) << log.status();
  absl::StatusOr<testing::CandidateLibrary> lib = testing::LoadCandidate(so.string());
  EXPECT_TRUE(lib.ok()) << lib.status();
  return lib.ok() ? *lib : testing::CandidateLibrary{};
}

TEST(PlanComposerTest, OnTheCpuEachNReachesItsVariantAndAFailedPrepareReleasesTheOthers) {
  testing_support::TempFolder scratch("plan_composer_cpu");
  ASSERT_TRUE(scratch.ok());
  // Variant 0 serves two ranges; variant 1 one; no variant serves 2048 < n < 4096.
  absl::StatusOr<std::string> plan = ComposePlanSource({V("small-and-huge", Tiny(0), {{1, 16}, {4096, kMaxN}}),
                                                        V("mid", Tiny(1), {{17, 2048}})});
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<std::string> failing =
      ComposePlanSource({V("ok", Tiny(0), {{1, 16}}), V("refuses", Tiny(1, /*fail=*/true), {{17, kMaxN}})});
  ASSERT_TRUE(failing.ok()) << failing.status();
  testing::CandidateLibrary lib = Load(*plan, scratch.path(), "plan");
  testing::CandidateLibrary bad = Load(*failing, scratch.path(), "failing");
  ASSERT_NE(lib.prepare, nullptr);
  ASSERT_NE(bad.prepare, nullptr);

  int log[48] = {0};
  const std::vector<int64_t> n_values = {1, 16, 17, 128, 2048, 4096};
  sd_problem problem{};
  problem.abi_version = SPARSEDITTO_ABI_VERSION;
  problem.values = reinterpret_cast<const float*>(log);
  problem.n_values = n_values.data();
  problem.num_n_values = static_cast<int32_t>(n_values.size());
  void* state = nullptr;
  char error[256] = {0};
  ASSERT_EQ(lib.prepare(&problem, &state, error, sizeof error), 0) << error;
  EXPECT_EQ(log[0], 1);
  EXPECT_EQ(log[16], 1);
  struct Want {
    int64_t n;
    int64_t variant;
    std::vector<int64_t> prepared_with;
  };
  for (const Want& want : {Want{1, 0, {1, 16, 4096}}, Want{16, 0, {1, 16, 4096}}, Want{4096, 0, {1, 16, 4096}},
                           Want{kMaxN, 0, {1, 16, 4096}}, Want{17, 1, {17, 128, 2048}}, Want{2048, 1, {17, 128, 2048}}}) {
    int64_t out[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    ASSERT_EQ(lib.run(state, nullptr, out, want.n, nullptr), 0) << "n " << want.n;
    EXPECT_EQ(out[0], want.variant) << "n " << want.n;
    EXPECT_EQ(std::vector<int64_t>(out + 1, out + 1 + want.prepared_with.size()), want.prepared_with) << "n " << want.n;
  }
  for (int64_t unserved : {int64_t{0}, int64_t{2049}, int64_t{4095}, kMaxN + 1}) {
    EXPECT_NE(lib.run(state, nullptr, nullptr, unserved, nullptr), 0) << "n " << unserved;
  }
  lib.release(state);
  EXPECT_EQ(log[1], 1);
  EXPECT_EQ(log[17], 1);

  // Only the n of variant 0 in the problem: variant 1 is not prepared, and its n fail.
  int small_log[48] = {0};
  const std::vector<int64_t> small = {16};
  problem.values = reinterpret_cast<const float*>(small_log);
  problem.n_values = small.data();
  problem.num_n_values = 1;
  ASSERT_EQ(lib.prepare(&problem, &state, error, sizeof error), 0) << error;
  EXPECT_EQ(small_log[16], 0);
  int64_t out[8] = {0};
  EXPECT_NE(lib.run(state, nullptr, out, 128, nullptr), 0);
  lib.release(state);
  EXPECT_EQ(small_log[1], 1);
  EXPECT_EQ(small_log[17], 0);

  // A variant that fails: its code and reason come back, the variant prepared before it is released.
  int bad_log[48] = {0};
  problem.values = reinterpret_cast<const float*>(bad_log);
  problem.n_values = n_values.data();
  problem.num_n_values = static_cast<int32_t>(n_values.size());
  EXPECT_EQ(bad.prepare(&problem, &state, error, sizeof error), 7);
  EXPECT_THAT(std::string(error), StartsWith("plan variant 1 (refuses): variant 1 refuses"));
  EXPECT_EQ(bad_log[0], 1);
  EXPECT_EQ(bad_log[1], 1);
}

// The plan's mask is the intersection of its variants' (a variant without one is KN only), and the
// layout reaches every variant's prepare.
TEST(PlanComposerTest, ThePlansLayoutsAreWhatEveryVariantServes) {
  testing_support::TempFolder scratch("plan_composer_layouts");
  ASSERT_TRUE(scratch.ok());
  auto masked = [](int id, const std::string& mask) {
    return Tiny(id) + "SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) { return " + mask + "; }\n";
  };
  const std::string both = "SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)";
  const std::string nk_only = "SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)";
  struct Case {
    std::string label;
    std::vector<PlanVariant> variants;
    uint32_t mask;
  };
  const Case cases[] = {
      {"both_serve_nk", {V("a", masked(0, both), {{1, 16}}), V("b", masked(1, both), {{17, kMaxN}})}, 3u},
      {"one_without_a_mask", {V("a", masked(0, both), {{1, 16}}), V("b", Tiny(1), {{17, kMaxN}})}, 1u},
      {"nk_only_and_both", {V("a", masked(0, nk_only), {{1, 16}}), V("b", masked(1, both), {{17, kMaxN}})}, 2u},
      {"no_masks", {V("a", Tiny(0), {{1, 16}}), V("b", Tiny(1), {{17, kMaxN}})}, 1u},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    absl::StatusOr<std::string> plan = ComposePlanSource(c.variants);
    ASSERT_TRUE(plan.ok()) << plan.status();
    testing::CandidateLibrary lib = Load(*plan, scratch.path(), c.label);
    ASSERT_NE(lib.layouts, nullptr) << "a plan always exports its mask";
    EXPECT_EQ(lib.layouts(), c.mask);
    if (c.mask != 3u) continue;
    int log[48] = {0};
    const std::vector<int64_t> n_values = {8, 64};
    sd_problem problem{};
    problem.abi_version = SPARSEDITTO_ABI_VERSION;
    problem.values = reinterpret_cast<const float*>(log);
    problem.n_values = n_values.data();
    problem.num_n_values = static_cast<int32_t>(n_values.size());
    problem.layout = SD_LAYOUT_NK;
    void* state = nullptr;
    char error[256] = {0};
    ASSERT_EQ(lib.prepare(&problem, &state, error, sizeof error), 0) << error;
    EXPECT_EQ(log[2], 100 + SD_LAYOUT_NK);
    EXPECT_EQ(log[16 + 2], 100 + SD_LAYOUT_NK);
    lib.release(state);
  }
}

}  // namespace
}  // namespace sparseditto
