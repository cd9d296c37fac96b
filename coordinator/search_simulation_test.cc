// A simulated search: seeds -> built-in mutator -> fake evaluator -> coordinator, the way the search
// loop will drive it. Proves that it finds a known optimum within budget, never evaluates a duplicate,
// makes the same decisions twice, and continues identically after a save and restore at any step.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status_format.h"
#include "coordinator/coordinator.h"
#include "coordinator/testing/fake_evaluator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "mutators/builtin/builtin_mutator.h"

namespace sparseditto {
namespace {

using testing::FakeEvaluator;
using testing::FakeLandscape;

constexpr char kTiled[] =
    "// sparseditto:seed families=[unstructured] dtypes=[fp16] archs=[sm_90]\n"
    "#define TILE 64    // sparseditto:tunable values=[16, 32, 64, 128, 256]\n"
    "#define WARPS 4    // sparseditto:tunable values=[1, 2, 4, 8]\n"
    "#define UNROLL 2   // sparseditto:tunable values=[1, 2, 4, 8]\n"
    "#define STAGES 2   // sparseditto:tunable values=[2, 3, 4]\n"
    "#define VEC 4      // sparseditto:tunable values=[4, 8, 16]\n"
    "__global__ void tiled() {}\n";
constexpr char kRowwise[] =
    "// sparseditto:seed families=[unstructured, banded] dtypes=[fp16, fp32] archs=[sm_80, sm_90]\n"
    "#define ROWS 1     // sparseditto:tunable values=[1, 2, 4, 8]\n"
    "#define LANES 32   // sparseditto:tunable values=[8, 16, 32]\n"
    "__global__ void rowwise() {}\n";
constexpr char kFixed[] =
    "// sparseditto:seed families=[unstructured] dtypes=[fp16] archs=[sm_90]\n__global__ void fixed() {}\n";
constexpr char kBlocky[] =
    "// sparseditto:seed families=[block] dtypes=[fp16] archs=[sm_90]\n"
    "#define B 16 // sparseditto:tunable values=[16, 32]\n";

std::vector<SeedKernel> Library() {
  std::vector<SeedKernel> out;
  for (auto [name, source] : {std::pair{"blocky", kBlocky}, {"fixed", kFixed}, {"rowwise", kRowwise}, {"tiled", kTiled}}) {
    out.push_back(*ParseSeed(name, source));
  }
  return out;
}

const std::map<std::string, std::string> kTiledOptimum = {
    {"TILE", "128"}, {"WARPS", "8"}, {"UNROLL", "8"}, {"STAGES", "4"}, {"VEC", "16"}};

FakeLandscape Landscape() {
  FakeLandscape l;
  l.optimum["tiled"] = kTiledOptimum;
  l.optimum["rowwise"] = {{"ROWS", "4"}, {"LANES", "16"}};
  l.peak = {{"tiled", 3.0}, {"rowwise", 1.5}, {"fixed", 0.5}};
  l.width = 0.5;
  l.failures = {{{{"TILE", "256"}, {"WARPS", "8"}}, v1::FAILURE_CATEGORY_COMPILE},
                {{{"UNROLL", "1"}, {"VEC", "16"}}, v1::FAILURE_CATEGORY_WRONG},
                {{{"ROWS", "8"}, {"LANES", "8"}}, v1::FAILURE_CATEGORY_CRASH}};
  return l;
}

v1::Task SimTask(int64_t max_evaluations = 300) {
  v1::Task task;
  task.set_name("sim");
  task.set_seed(2024);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.add_arch("sm_90");
  task.mutable_budget()->set_max_evaluations(max_evaluations);
  task.mutable_budget()->set_stagnation_evaluations(150);
  return task;
}

CoordinatorOptions SimOptions() {
  CoordinatorOptions o;
  o.num_islands = 3;
  o.island_capacity = 8;
  o.evaluations_per_generation = 6;
  o.migration_interval = 2;
  o.crossover_probability = 0.25;
  o.max_wasted_in_a_row = 100;
  return o;
}

// The search loop, with maps for the population store. Copyable, so a test can fork it mid-run.
struct Simulation {
  v1::Task task = SimTask();
  CoordinatorOptions options = SimOptions();
  FakeEvaluator evaluator{Landscape()};
  std::optional<Coordinator> coordinator;
  std::map<std::string, v1::Candidate> store;
  std::map<std::string, v1::EvalResult> results;
  std::vector<std::string> log;  // every decision and outcome
  int64_t reused = 0;            // duplicate proposals answered from a stored result
  int64_t failed = 0;

  void Start(const std::vector<SeedKernel>& library) {
    auto created = Coordinator::Create(task, options);
    ASSERT_TRUE(created.ok()) << created.status();
    coordinator.emplace(*std::move(created));
    auto seeds = SeedCandidates(task, library);
    ASSERT_TRUE(seeds.ok()) << seeds.status();
    for (size_t i = 0; i < seeds->size(); ++i) {
      v1::Candidate seed = (*seeds)[i];
      coordinator->StampSeed(i, &seed);
      Offer(seed);
    }
  }

  void Offer(const v1::Candidate& c) {
    auto earlier = coordinator->RegisterCandidate(c);
    ASSERT_TRUE(earlier.ok()) << earlier.status();
    if (earlier->has_value()) {
      ASSERT_EQ(results.count(**earlier), 1u) << "a duplicate's original has a stored result";
      ++reused;
      log.push_back(fmt::format("duplicate {} of {}", c.id(), **earlier));
      return;
    }
    store[c.id()] = c;
    const v1::EvalResult r = evaluator.Evaluate(c);
    results[c.id()] = r;
    failed += !IsCorrectResult(r);
    auto out = coordinator->ReportResult(c, r, {.wall_seconds = 1.5, .tokens = 0, .money_usd = 0});
    ASSERT_TRUE(out.ok()) << out.status();
    std::string moved;
    for (const Migration& m : out->migrations) moved += fmt::format(" {}>{}:{}", m.from, m.to, m.candidate_id);
    log.push_back(fmt::format("eval {} {} {:.17g} cell={} new={} improved={} best={} island={} migrations=[{}] stop={}",
                              c.id(), c.source_hash(), r.fitness(), out->archive.cell, out->archive.new_cell,
                              out->archive.improved_cell, out->archive.improved_best, out->joined_island, moved,
                              StopReasonName(out->stop)));
  }

  // One turn of the loop; false once the coordinator says stop.
  bool Step() {
    if (coordinator->CheckStop() != StopReason::kNone) return false;
    auto plan = coordinator->PlanMutation();
    if (!plan.ok()) {
      log.push_back(fmt::format("no plan: {}", plan.status().message()));
      return true;
    }
    log.push_back(fmt::format("plan {} island={} {} op={} parent={} mate={} explored={} seed={:016x}", plan->step,
                              plan->island, plan->mutator, v1::MutationOperator_Name(plan->op), plan->parent_id,
                              plan->mate_id, plan->explored, plan->mutator_seed));
    Rng rng(plan->mutator_seed);
    absl::StatusOr<v1::Candidate> child =
        plan->op == v1::MUTATION_OPERATOR_TUNE_CROSSOVER
            ? CrossoverTunables(store.at(plan->parent_id), store.at(plan->mate_id), rng)
            : MutateTunables(store.at(plan->parent_id), rng);
    if (!child.ok()) {
      coordinator->RecordFailedMutation();
      log.push_back(fmt::format("refused: {}", child.status().message()));
      return true;
    }
    coordinator->StampChild(*plan, &*child);
    Offer(*child);
    return true;
  }

  void RunToEnd() {
    for (int guard = 0; guard < 20000 && Step();) ++guard;
    ASSERT_NE(coordinator->CheckStop(), StopReason::kNone) << "the loop guard ran out";
  }

  std::string StateBytes() const { return coordinator->SaveState().SerializeAsString(); }
};

TEST(SearchSimulationTest, FindsTheOptimumWithinBudgetAndNeverEvaluatesADuplicate) {
  Simulation sim;
  sim.Start(Library());
  sim.RunToEnd();
  const Coordinator& c = *sim.coordinator;
  const coordinator::Elite* best = c.archive().best();
  ASSERT_NE(best, nullptr);
  EXPECT_DOUBLE_EQ(best->fitness(), sim.evaluator.BestPossible()) << c.ExplainStop();
  std::map<std::string, std::string> values;
  for (const v1::Tunable& t : sim.store.at(best->candidate_id()).tunables()) values[t.name()] = t.value();
  EXPECT_EQ(values, kTiledOptimum);
  EXPECT_LE(c.spent().evaluations(), sim.task.budget().max_evaluations());
  EXPECT_EQ(sim.evaluator.calls(), c.spent().evaluations());
  for (const auto& [hash, calls] : sim.evaluator.calls_by_hash()) EXPECT_EQ(calls, 1) << hash;
  EXPECT_GT(sim.reused, 0) << "the dedup path ran";
  EXPECT_EQ(sim.reused, c.spent().duplicates());
  EXPECT_GT(sim.failed, 0) << "failure rules were hit and survived";
  EXPECT_GT(c.archive().cells().size(), 3u);
  EXPECT_DOUBLE_EQ(c.spent().wall_seconds(), 1.5 * c.spent().evaluations());
  RecordProperty("evaluations", static_cast<int>(c.spent().evaluations()));
  std::printf("stopped: %s after %lld evaluations, %lld duplicates, %zu cells\n", c.ExplainStop().c_str(),
              static_cast<long long>(c.spent().evaluations()), static_cast<long long>(c.spent().duplicates()),
              c.archive().cells().size());
}

TEST(SearchSimulationTest, SameSeedSameDecisions) {
  Simulation a, b;
  a.Start(Library());
  a.RunToEnd();
  b.Start(Library());
  b.RunToEnd();
  ASSERT_EQ(a.log.size(), b.log.size());
  for (size_t i = 0; i < a.log.size(); ++i) ASSERT_EQ(a.log[i], b.log[i]) << "decision " << i;
  EXPECT_EQ(a.StateBytes(), b.StateBytes());

  Simulation other;
  other.task.set_seed(7);
  other.Start(Library());
  other.RunToEnd();
  EXPECT_NE(other.log, a.log) << "another seed, another search";
}

TEST(SearchSimulationTest, RestoreMidwayContinuesExactly) {
  Simulation full;
  full.Start(Library());
  full.RunToEnd();
  for (int stop_after : {0, 1, 37, 120, 201}) {
    Simulation first;
    first.Start(Library());
    for (int i = 0; i < stop_after && first.Step(); ++i) {
    }
    const std::string bytes = first.StateBytes();
    // A new process: the store (maps) survives, the coordinator is rebuilt from the saved bytes.
    Simulation resumed = first;
    resumed.coordinator.reset();
    auto state = ParseSearchState(bytes);
    ASSERT_TRUE(state.ok()) << state.status();
    auto restored = Coordinator::Restore(resumed.task, resumed.options, *state);
    ASSERT_TRUE(restored.ok()) << restored.status();
    resumed.coordinator.emplace(*std::move(restored));
    EXPECT_EQ(resumed.StateBytes(), bytes) << "restore is lossless";
    resumed.RunToEnd();
    ASSERT_EQ(resumed.log.size(), full.log.size()) << "stopped after " << stop_after;
    for (size_t i = 0; i < full.log.size(); ++i) {
      ASSERT_EQ(resumed.log[i], full.log[i]) << "decision " << i << " after a restore at step " << stop_after;
    }
    EXPECT_EQ(resumed.StateBytes(), full.StateBytes());
  }
}

// The real seed library (kernels/seeds), mutated through its real tunable declarations, against a
// landscape whose optimum is each seed's last allowed value of every tunable.
TEST(SearchSimulationTest, RealSeedLibrary) {
  const std::string dir = std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no " << dir;
  auto library = LoadSeedLibrary(dir);
  ASSERT_TRUE(library.ok()) << library.status();
  Simulation sim;
  sim.task = SimTask(/*max_evaluations=*/800);
  // The best seed's optimum lies many tunables from its defaults (u24_stream_sp: 8 of them at width 0.3, its defaults
  // scoring ~1e-10), so long stretches of its climb improve no global best: only the budget ends this search (the
  // stagnation stop has tests of its own).
  sim.task.mutable_budget()->set_stagnation_evaluations(800);
  FakeLandscape landscape;
  double peak = 1.0;
  std::string best_seed;
  for (const SeedKernel& seed : *library) {
    if (!SeedAppliesTo(seed, sim.task)) continue;
    auto tunables = ParseTunables(seed.source);
    ASSERT_TRUE(tunables.ok()) << seed.name;
    for (const v1::Tunable& t : *tunables) landscape.optimum[seed.name][t.name()] = t.allowed_values().rbegin()[0];
    landscape.peak[seed.name] = peak += 0.25;
    if (!tunables->empty()) best_seed = seed.name;
  }
  if (best_seed.empty()) GTEST_SKIP() << "no applicable seed with tunables";
  landscape.peak[best_seed] = 10.0;
  sim.evaluator = FakeEvaluator(landscape);
  sim.Start(*library);
  sim.RunToEnd();
  const coordinator::Elite* best = sim.coordinator->archive().best();
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->seed_name(), best_seed);
  EXPECT_DOUBLE_EQ(best->fitness(), 10.0) << sim.coordinator->ExplainStop();
  for (const auto& [hash, calls] : sim.evaluator.calls_by_hash()) EXPECT_EQ(calls, 1) << hash;
}

}  // namespace
}  // namespace sparseditto
