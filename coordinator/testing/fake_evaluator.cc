#include "coordinator/testing/fake_evaluator.h"

#include <algorithm>
#include <cmath>

#include "common/fitness.h"
#include "kernel_abi/tunables.h"
#include "mutators/plan/plan_composer.h"

namespace sparseditto::testing {
namespace {

void AddTiming(int64_t n, double ms, v1::EvalResult* r) {
  v1::TimingStats* t = r->add_timings();
  t->set_n(n);
  t->set_median_ms(ms);
  v1::BaselineTime* b = (*r->mutable_baselines())[n].add_baselines();
  b->set_name("fake_baseline");
  b->set_available(true);
  b->mutable_timing()->set_median_ms(1.0);
}

void SetFitness(double fitness, double slower_below, v1::EvalResult* r) {
  r->set_fitness(fitness);
  r->set_stage_reached(v1::EVAL_STAGE_DONE);
  r->set_failure(fitness < slower_below ? v1::FAILURE_CATEGORY_SLOWER : v1::FAILURE_CATEGORY_NONE);
}

}  // namespace

v1::EvalResult FakeEvaluator::ScorePlan(const v1::Candidate& plan) const {
  v1::EvalResult r;
  r.set_candidate_id(plan.id());
  r.set_task_name(plan.task_name());
  auto variants = ParsePlanSource(plan.source());
  if (!variants.ok() || landscape_.n_values.empty()) {
    r.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    r.set_failure_detail(variants.ok() ? "the fake times plans only over n_values" : std::string(variants.status().message()));
    return r;
  }
  std::vector<v1::EvalResult> scored;
  int registers = 0;
  for (const ParsedPlanVariant& v : *variants) {
    v1::Candidate variant;
    variant.set_source(v.body);
    variant.set_seed_name(v.seed_name);
    scored.push_back(Score(variant));
    if (scored.back().failure() != v1::FAILURE_CATEGORY_NONE && scored.back().failure() != v1::FAILURE_CATEGORY_SLOWER) {
      r.set_stage_reached(scored.back().stage_reached());
      r.set_failure(scored.back().failure());
      r.set_failure_detail("plan variant " + v.name + ": " + scored.back().failure_detail());
      return r;
    }
    registers = std::max(registers, scored.back().resources(0).registers());
  }
  for (int64_t n : landscape_.n_values) {
    for (size_t i = 0; i < variants->size(); ++i) {
      for (const NRange& range : (*variants)[i].serves) {
        if (n < range.min_n || n > range.max_n) continue;
        for (const v1::TimingStats& t : scored[i].timings()) {
          if (t.n() == n) AddTiming(n, t.median_ms(), &r);
        }
      }
    }
  }
  v1::KernelResources* resources = r.add_resources();
  resources->set_arch("sm_90");
  resources->set_kernel_name("fake");
  resources->set_registers(registers);
  const std::vector<v1::TimingStats> timings(r.timings().begin(), r.timings().end());
  const std::map<int64_t, v1::BaselineList> baselines(r.baselines().begin(), r.baselines().end());
  SetFitness(timings.size() == landscape_.n_values.size() ? SpeedupFitness(timings, baselines) : 0,
             landscape_.slower_below, &r);
  return r;
}

v1::EvalResult FakeEvaluator::Score(const v1::Candidate& candidate) const {
  if (candidate.source().find(kPlanManifestMarker) != std::string::npos) return ScorePlan(candidate);
  v1::EvalResult r;
  r.set_candidate_id(candidate.id());
  r.set_task_name(candidate.task_name());
  auto tunables = ParseTunables(candidate.source());
  if (!tunables.ok()) {
    r.set_stage_reached(v1::EVAL_STAGE_COMPILE);
    r.set_failure(v1::FAILURE_CATEGORY_COMPILE);
    r.set_failure_detail(std::string(tunables.status().message()));
    return r;
  }
  std::map<std::string, std::string> values;
  int index_sum = 0;
  for (const v1::Tunable& t : *tunables) {
    values[t.name()] = t.value();
    const auto& allowed = t.allowed_values();
    index_sum += static_cast<int>(std::find(allowed.begin(), allowed.end(), t.value()) - allowed.begin());
  }
  for (const FakeFailureRule& rule : landscape_.failures) {
    const bool matches = std::all_of(rule.when.begin(), rule.when.end(), [&](const auto& kv) {
      auto it = values.find(kv.first);
      return it != values.end() && it->second == kv.second;
    });
    if (matches) {
      r.set_failure(rule.category);
      r.set_stage_reached(rule.category == v1::FAILURE_CATEGORY_COMPILE ? v1::EVAL_STAGE_COMPILE
                                                                         : v1::EVAL_STAGE_FULL_CORRECTNESS);
      r.set_failure_detail("fake failure rule");
      return r;
    }
  }
  v1::KernelResources* resources = r.add_resources();
  resources->set_arch("sm_90");
  resources->set_kernel_name("fake");
  resources->set_registers(24 + 8 * index_sum);
  double distance2 = 0;
  auto optimum = landscape_.optimum.find(candidate.seed_name());
  if (optimum != landscape_.optimum.end()) {
    for (const v1::Tunable& t : *tunables) {
      auto best = optimum->second.find(t.name());
      if (best == optimum->second.end() || t.allowed_values_size() < 2) continue;
      const auto& allowed = t.allowed_values();
      const double at = std::find(allowed.begin(), allowed.end(), t.value()) - allowed.begin();
      const double want = std::find(allowed.begin(), allowed.end(), best->second) - allowed.begin();
      const double d = (at - want) / (allowed.size() - 1);
      distance2 += d * d;
    }
  }
  auto peak = landscape_.peak.find(candidate.seed_name());
  const double fitness = (peak == landscape_.peak.end() ? 1.0 : peak->second) *
                         std::exp(-distance2 / (2 * landscape_.width * landscape_.width));
  if (landscape_.n_values.empty()) {
    SetFitness(fitness, landscape_.slower_below, &r);
    return r;
  }
  const auto factors = landscape_.speed_at_n.find(candidate.seed_name());
  for (int64_t n : landscape_.n_values) {
    double factor = 1;
    if (factors != landscape_.speed_at_n.end() && factors->second.contains(n)) factor = factors->second.at(n);
    AddTiming(n, 1.0 / (fitness * factor), &r);
  }
  const std::vector<v1::TimingStats> timings(r.timings().begin(), r.timings().end());
  const std::map<int64_t, v1::BaselineList> baselines(r.baselines().begin(), r.baselines().end());
  SetFitness(SpeedupFitness(timings, baselines), landscape_.slower_below, &r);
  return r;
}

v1::EvalResult FakeEvaluator::ScoreFinalist(const v1::Candidate& candidate) const {
  v1::EvalResult r = Score(candidate);
  if (r.stage_reached() != v1::EVAL_STAGE_DONE) return r;
  if (landscape_.finalist_failing_seeds.contains(candidate.seed_name())) {
    r.set_stage_reached(v1::EVAL_STAGE_FINALIST);
    r.set_failure(v1::FAILURE_CATEGORY_CRASH);
    r.set_failure_detail("compute-sanitizer racecheck reported errors (exited with code 97)");
    r.set_fitness(0);
    return r;
  }
  for (const char* verdict : {"[compute-sanitizer memcheck: exited with code 0]",
                              "[compute-sanitizer racecheck: exited with code 0]"}) {  // as the evaluator records them
    r.add_sanitizer_verdicts(verdict);
    r.set_run_log(r.run_log() + verdict + "\n");
  }
  r.set_sanitizer_verdicts_recorded(true);
  return r;
}

v1::EvalResult FakeEvaluator::Evaluate(const v1::Candidate& candidate) {
  ++calls_;
  ++calls_by_hash_[candidate.source_hash()];
  return Score(candidate);
}

double FakeEvaluator::BestPossible() const {
  double best = 0;
  for (const auto& [seed, peak] : landscape_.peak) best = std::max(best, peak);
  return best;
}

}  // namespace sparseditto::testing
