// The search tests' common ground (test code only): a small unstructured task, a fake landscape over
// the real seed library with optima away from the seeds' defaults, loop options, and the evaluator seam
// over the fake evaluator that counts calls by candidate id. Shared by the in-process tests and the
// child process of the kill test, so both search the same thing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/screen_bar.h"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/search_loop.h"
#include "coordinator/testing/fake_evaluator.h"
#include "kernel_abi/tunables.h"
#include "kernels/seed_library.h"

namespace sparseditto::testing {

inline v1::Task SmallTask(int64_t max_evaluations, const std::string& name = "small", uint64_t seed = 77) {
  v1::Task task;
  task.set_name(name);
  task.set_seed(seed);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.add_arch("sm_90");
  task.mutable_budget()->set_max_evaluations(max_evaluations);
  task.mutable_budget()->set_stagnation_evaluations(1000);
  return task;
}

// Every applicable seed gets an optimum away from its defaults (half the list further on), so that
// the seeds score low and the search has somewhere to go. Seeds whose tunables do not parse are left
// out (the tests that care check ParseTunables themselves).
inline FakeLandscape Landscape(const v1::Task& task, const std::vector<SeedKernel>& seeds) {
  FakeLandscape l;
  for (const SeedKernel& seed : seeds) {
    if (!SeedAppliesTo(seed, task)) continue;
    auto tunables = ParseTunables(seed.source);
    if (!tunables.ok()) continue;
    for (const v1::Tunable& t : *tunables) {
      const int n = t.allowed_values_size();
      int at = 0;
      for (int i = 0; i < n; ++i) at = t.allowed_values(i) == t.value() ? i : at;
      l.optimum[seed.name][t.name()] = t.allowed_values((at + n / 2) % n);
    }
    l.peak[seed.name] = seed.name == "csr_warp_per_row" ? 3.0 : 1.0;
  }
  l.width = 0.5;
  return l;
}

// A store in `folder`, created when missing; null when it does not open (`error` says why).
inline std::unique_ptr<PopulationStore> OpenTestStore(const std::filesystem::path& folder, absl::Status* error) {
  PopulationStoreOptions o;
  o.create_if_missing = true;
  auto store = PopulationStore::Open(folder.string(), o);
  *error = store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

inline SearchLoopOptions TestLoopOptions() {
  SearchLoopOptions o;
  o.coordinator.num_islands = 2;
  o.coordinator.island_capacity = 8;
  o.coordinator.evaluations_per_generation = 6;
  o.coordinator.migration_interval = 2;
  o.coordinator.crossover_probability = 0.25;
  return o;
}

// A set-up reply for `task` as the fake's world has it (what `sparseditto bench`'s table is made of):
// a 256 x 256 matrix with 6554 nonzeros, and at every n of the task the baselines cublas_dense (1 ms,
// the fake's own baseline time) and cusparse_csr (2 ms); no device limits.
inline v1::SetupTaskReply FakeSetupReply(const v1::Task& task) {
  v1::SetupTaskReply reply;
  reply.set_matrix_rows(256);
  reply.set_matrix_cols(256);
  reply.set_matrix_nnz(6554);
  for (int64_t n : task.n()) {
    v1::BaselineList& list = (*reply.mutable_baselines())[n];
    for (const auto& [name, ms] : {std::pair<std::string, double>{"cublas_dense", 1.0}, {"cusparse_csr", 2.0}}) {
      v1::BaselineTime* b = list.add_baselines();
      b->set_name(name);
      b->set_available(true);
      b->mutable_timing()->set_median_ms(ms);
    }
  }
  return reply;
}

// The seam over the fake: counts calls by candidate id (and by source hash, in the fake); tells
// `on_call` before scoring, when set; records the batches it is told to prefetch.
class CountingEvaluator : public CandidateEvaluator {
 public:
  explicit CountingEvaluator(FakeLandscape landscape) : fake(std::move(landscape)) {}
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    ++calls_by_id[candidate.id()];
    if (on_call) on_call(candidate);
    return fake.Evaluate(candidate);
  }
  v1::EvalResult EvaluateFinalist(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    finalist_ids.push_back(candidate.id());
    return fake.ScoreFinalist(candidate);
  }
  void Prefetch(const v1::Task&, const std::vector<v1::Candidate>& candidates) override {
    prefetched.emplace_back();
    for (const v1::Candidate& c : candidates) prefetched.back().push_back(c.id());
  }
  FakeEvaluator fake;
  std::map<std::string, int> calls_by_id;
  std::vector<std::string> finalist_ids;  // EvaluateFinalist's candidates, in call order
  std::vector<std::vector<std::string>> prefetched;  // the batches Prefetch was told, in order
  std::function<void(const v1::Candidate&)> on_call;
};

// The fake's screen: the same verdict with timing_screen set and its times off by a fixed,
// candidate-dependent factor (within +-6%, as a short screen's noise), so the screen's choice is
// deterministic and sometimes wrong in both directions. With continues_itself it goes on to the full
// timing when the screen is near the bar, as the GPU evaluator does in the same host. `on_screen`,
// when set, is told each screen's candidate and bar (a pipeline's takers share one, so it must be
// thread-safe then).
class ScreeningEvaluator : public CountingEvaluator {
 public:
  using CountingEvaluator::CountingEvaluator;
  v1::EvalResult EvaluateScreened(const v1::Task&, const v1::Candidate& candidate, uint64_t,
                                  const v1::ScreenBar& bar) override {
    ++screened_by_id[candidate.id()];
    if (on_screen) on_screen(candidate.id(), bar);
    v1::EvalResult r = fake.Score(candidate);
    r.set_timing_screen(true);
    const double noise = 1.0 + 0.06 * std::sin(static_cast<double>(std::hash<std::string>{}(candidate.id()) % 1000));
    r.set_fitness(r.fitness() / noise);
    for (v1::TimingStats& t : *r.mutable_timings()) t.set_median_ms(t.median_ms() * noise);
    if (continues_itself && NearScreenBar(r.fitness(), {r.timings().begin(), r.timings().end()}, bar)) {
      ++full_after_screen_by_id[candidate.id()];
      r = fake.Score(candidate);
      r.set_timed_in_full_after_screen(true);
    }
    return r;
  }
  bool continues_itself = false;
  std::map<std::string, int> screened_by_id;
  std::map<std::string, int> full_after_screen_by_id;
  std::function<void(const std::string& id, const v1::ScreenBar& bar)> on_screen;
};

}  // namespace sparseditto::testing
