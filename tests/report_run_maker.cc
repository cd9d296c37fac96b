// Makes a run for the report's tests (tests/report_browser_test.cc): a batch search of two tasks over the
// real seed library and the deterministic fake evaluator (coordinator/testing/fake_evaluator.h), as
// `sparseditto search` runs it, with per-n times, a second baseline, compile and crash failures, and
// hostile text where a real run could hold some: failure logs with markup, "</script>", control
// characters and a megabyte of noise, and a candidate whose source is an injection attempt.
//
//   report_run_maker RUN_DIR      (the run is named after RUN_DIR's last component)
//
// Exits 0 when the run was made, 1 when the search failed, 2 for bad arguments or a store that does not
// open.
#include <cstdio>
#include <filesystem>
#include <string>

#include "coordinator/search/batch_search.h"
#include "coordinator/testing/search_fixture.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {
namespace {

// (Valid UTF-8: proto3 strings must be, and the evaluator scrubs untrusted text before it is stored; the
// unit tests of report/html_text.h cover bytes that are not UTF-8.)
const char kHostile[] = "</script><script>alert('pwned')</script><img src=x onerror=alert(1)>&amp; \x01\x1b[31m <!--";

// The fake's verdicts, dressed as a GPU's: a named GPU, a second baseline (slower than the fake's, so the
// fitness stays right) and, on failures, the logs a hostile candidate could make.
class DressedEvaluator : public testing::CountingEvaluator {
 public:
  using CountingEvaluator::CountingEvaluator;
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t seed) override {
    v1::EvalResult r = CountingEvaluator::Evaluate(task, candidate, seed);
    r.set_gpu_name("Fake GPU");
    r.set_arch("sm_90");
    for (auto& [n, list] : *r.mutable_baselines()) {
      v1::BaselineTime* b = list.add_baselines();
      b->set_name("cusparse_csr");
      b->set_available(true);
      b->mutable_timing()->set_median_ms(1.5 + 0.001 * static_cast<double>(n));
    }
    if (r.failure() != v1::FAILURE_CATEGORY_NONE && r.failure() != v1::FAILURE_CATEGORY_SLOWER) {
      r.set_failure_detail(std::string("fake failure ") + kHostile);
      r.set_compile_log(std::string(kHostile) + "\n" + std::string(1 << 20, 'x') + "\nlast line of the log");
      r.set_run_log(std::string("run log ") + kHostile);
    }
    return r;
  }
};

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s RUN_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path run_dir = argv[1];
  absl::Status error;
  std::unique_ptr<PopulationStore> store = testing::OpenTestStore(run_dir / "store", &error);
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  if (store == nullptr || !seeds.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store == nullptr ? error.message() : seeds.status().message()).c_str());
    return 2;
  }
  std::vector<v1::Task> tasks = {testing::SmallTask(30, "alpha", 77), testing::SmallTask(12, "beta", 78)};
  for (v1::Task& t : tasks) {
    for (int64_t n : {16, 128, 2048}) t.add_n(n);
  }
  testing::FakeLandscape landscape = testing::Landscape(tasks[0], *seeds);
  landscape.n_values = {16, 128, 2048};
  // The first tunable of two seeds fails at one of its values: one compile failure, one crash.
  int rules = 0;
  for (const SeedKernel& seed : *seeds) {
    if (rules == 2 || !SeedAppliesTo(seed, tasks[0])) continue;
    auto tunables = ParseTunables(seed.source);
    if (!tunables.ok() || tunables->empty() || (*tunables)[0].allowed_values_size() < 2) continue;
    const v1::Tunable& t = (*tunables)[0];
    for (const std::string& value : t.allowed_values()) {
      if (value == t.value()) continue;
      landscape.failures.push_back({.when = {{t.name(), value}},
                                    .category = rules == 0 ? v1::FAILURE_CATEGORY_COMPILE : v1::FAILURE_CATEGORY_CRASH});
    }
    ++rules;
  }
  DressedEvaluator evaluator(landscape);
  BatchSearchOptions options;
  options.loop = testing::TestLoopOptions();
  options.run_dir = run_dir.string();
  options.provenance_json = std::string(R"({"gpu": "Fake GPU", "host": "</script><b>host</b>", "mutator_models": []})");
  const std::string run = run_dir.filename().string();
  auto outcome = RunBatchSearch(*store, run, tasks, *seeds, evaluator, options);
  if (!outcome.ok() || outcome->failed() != 0) {
    std::fprintf(stderr, "search failed: %s\n", outcome.ok() ? "a task failed" : std::string(outcome.status().message()).c_str());
    return 1;
  }
  // A candidate whose source is an injection attempt, a child of alpha's best, judged WRONG.
  auto state = store->GetRunState(run, "alpha");
  auto best = store->GetCandidate(run, outcome->tasks[0].summary.best_candidate_id);
  if (!state.ok() || !best.ok()) return 1;
  v1::Candidate hostile = *best;
  hostile.set_id("alpha.hostile");
  hostile.clear_parent_ids();
  hostile.add_parent_ids(best->id());
  hostile.set_operator_(v1::MUTATION_OPERATOR_LLM_DIFF);
  hostile.set_source_hash("hostile");
  hostile.set_source(best->source() + "\n// " + kHostile + "\n");
  v1::EvalResult wrong;
  wrong.set_candidate_id(hostile.id());
  wrong.set_task_name("alpha");
  wrong.set_stage_reached(v1::EVAL_STAGE_FULL_CORRECTNESS);
  wrong.set_failure(v1::FAILURE_CATEGORY_WRONG);
  wrong.set_failure_detail(std::string("C[0,0] expected 1 got 2 ") + kHostile);
  if (absl::Status s = store->CommitCandidates(run, {hostile}, std::nullopt); !s.ok()) return 1;
  if (absl::Status s = store->CommitEvaluation(run, wrong, *state); !s.ok()) return 1;
  std::printf("made run %s\n", run.c_str());
  return 0;
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
