// Which model answers the next mutation: by fixed weights, or by a cost-aware UCB bandit rewarded by
// the children's improvement over their parents.
//
// Weighted: model i with probability weight_i / sum of the enabled models' weights; draw k uses
// Rng(seed, k) only, so the sequence depends on the seed and the number of draws, nothing else.
// Cost-aware UCB1: every enabled model not yet tried is chosen first (in the order given); then the
// one with the largest  mean_reward - cost_weight * mean_cost_usd + exploration * sqrt(2 ln N / n_i)
// (N choices recorded in all, n_i of model i; ties go to the earlier model). No randomness.
// Rewards come from Record (ImprovementReward gives the usual one). A model the caller disabled
// (401/403) is skipped by both policies.
//
// State: SaveState() is JSON text holding the policy, the draw count and each model's pulls, reward
// and cost sums; RestoreState on a chooser built with the same models and options continues exactly
// as the saved one would have. Thread-safety: none (LlmMutator guards its chooser with a mutex).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"

namespace sparseditto::llm {

enum class ChoicePolicy { kWeighted, kCostAwareUcb };

struct ChooserOptions {
  ChoicePolicy policy = ChoicePolicy::kWeighted;
  uint64_t seed = 1;
  double exploration = 1.0;  // UCB's c
  double cost_weight = 1.0;  // reward units per USD of mean cost per call
};

// The reward of a child, in [0, 1]: 0 when the child is not correct (common/eval_outcome.h); 1 when
// it is and the parent was not (or had no fitness); otherwise min(1, max(0, log2(child fitness /
// parent fitness))) (doubling the fitness is the full reward).
double ImprovementReward(const v1::EvalResult& parent, const v1::EvalResult& child);

class ModelChooser {
 public:
  struct Arm {
    std::string name;
    double weight = 1;  // > 0
    int64_t pulls = 0;
    double reward_sum = 0;
    double cost_sum = 0;
  };

  // InvalidArgument: no models, a duplicate name, a weight <= 0.
  static absl::StatusOr<ModelChooser> Create(std::vector<Arm> arms, ChooserOptions options);

  // The next model among those not in `disabled`. FailedPrecondition when every model is disabled.
  absl::StatusOr<std::string> Choose(const std::set<std::string>& disabled);

  // A finished mutation of `model`: its reward in [0, 1] and its cost. NotFound for an unknown model.
  absl::Status Record(const std::string& model, double reward, double cost_usd);

  std::string SaveState() const;
  // InvalidArgument for text that is not a state of this chooser's policy and models.
  absl::Status RestoreState(const std::string& state);

  const std::vector<Arm>& arms() const { return arms_; }

 private:
  ModelChooser(std::vector<Arm> arms, ChooserOptions options) : arms_(std::move(arms)), options_(options) {}

  std::vector<Arm> arms_;
  ChooserOptions options_;
  uint64_t draws_ = 0;
};

}  // namespace sparseditto::llm
