#include "coordinator/search/plan_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/eval_outcome.h"
#include "common/fitness.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

const v1::TimingStats* TimingAt(const v1::EvalResult& result, int64_t n) {
  for (const v1::TimingStats& t : result.timings()) {
    if (t.n() == n && t.median_ms() > 0) return &t;
  }
  return nullptr;
}

// True when `a` beats `b` at n (both timed there).
bool Faster(const v1::EvalResult& a, const v1::TimingStats& ta, const v1::EvalResult& b, const v1::TimingStats& tb) {
  if (ta.median_ms() != tb.median_ms()) return ta.median_ms() < tb.median_ms();
  if (a.fitness() != b.fitness()) return a.fitness() > b.fitness();
  return a.candidate_id() < b.candidate_id();
}

}  // namespace

std::optional<PlanChoice> ChoosePlan(const std::vector<int64_t>& task_n, const std::vector<v1::EvalResult>& results) {
  const std::set<int64_t> ns(task_n.begin(), task_n.end());
  if (ns.empty()) return std::nullopt;
  PlanChoice plan;
  std::vector<std::string> winners;  // per n, ascending
  for (int64_t n : ns) {
    const v1::EvalResult* best = nullptr;
    const v1::TimingStats* best_time = nullptr;
    for (const v1::EvalResult& r : results) {
      const v1::TimingStats* t = TimingAt(r, n);
      if (!IsCorrect(r) || t == nullptr) continue;
      const std::map<int64_t, v1::BaselineList> own(r.baselines().begin(), r.baselines().end());
      if (!std::isfinite(FastestBaselineMs(own, n))) continue;
      if (best == nullptr || Faster(r, *t, *best, *best_time)) {
        best = &r;
        best_time = t;
      }
    }
    if (best == nullptr) return std::nullopt;
    winners.push_back(best->candidate_id());
    plan.timings.push_back(*best_time);
    plan.baselines[n] = best->baselines().at(n);
  }
  if (std::all_of(winners.begin(), winners.end(), [&](const std::string& id) { return id == winners[0]; })) {
    return std::nullopt;
  }
  int64_t from = 1;
  size_t i = 0;
  for (auto n = ns.begin(); n != ns.end(); ++n, ++i) {
    const int64_t to = std::next(n) == ns.end() ? std::numeric_limits<int64_t>::max() : *n;
    auto variant = std::find_if(plan.variants.begin(), plan.variants.end(),
                                [&](const PlanVariantChoice& v) { return v.candidate_id == winners[i]; });
    if (variant == plan.variants.end()) {
      plan.variants.push_back({.candidate_id = winners[i], .serves = {}});
      variant = std::prev(plan.variants.end());
    }
    if (!variant->serves.empty() && variant->serves.back().max_n + 1 == from) {
      variant->serves.back().max_n = to;
    } else {
      variant->serves.push_back({.min_n = from, .max_n = to});
    }
    from = to == std::numeric_limits<int64_t>::max() ? to : to + 1;
  }
  plan.predicted_fitness = SpeedupFitness(plan.timings, plan.baselines);
  return plan;
}

std::string DescribePlan(const PlanChoice& plan) {
  // For people: "17 and up", not the marker's "17-9223372036854775807" (FormatRanges).
  auto ranges = [](const std::vector<NRange>& serves) {
    std::string text;
    for (const NRange& r : serves) {
      text += fmt::format("{}{}", text.empty() ? "" : ",",
                          r.max_n == std::numeric_limits<int64_t>::max() ? fmt::format("{} and up", r.min_n)
                                                                        : fmt::format("{}-{}", r.min_n, r.max_n));
    }
    return text;
  };
  std::string out;
  for (const PlanVariantChoice& v : plan.variants) {
    out += fmt::format("{}{} n {}", out.empty() ? "" : ", ", v.candidate_id, ranges(v.serves));
  }
  return fmt::format("{} (predicted fitness {:.3f})", out, plan.predicted_fitness);
}

}  // namespace sparseditto
