#include "llm_mutator/model_chooser.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/eval_outcome.h"
#include "common/rng.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace sparseditto::llm {

double ImprovementReward(const v1::EvalResult& parent, const v1::EvalResult& child) {
  if (!IsCorrect(child)) return 0;
  if (!IsCorrect(parent) || !(parent.fitness() > 0)) return 1;
  if (!(child.fitness() > 0)) return 0;
  return std::clamp(std::log2(child.fitness() / parent.fitness()), 0.0, 1.0);
}

absl::StatusOr<ModelChooser> ModelChooser::Create(std::vector<Arm> arms, ChooserOptions options) {
  if (arms.empty()) return absl::InvalidArgumentError("model chooser: no models");
  for (size_t i = 0; i < arms.size(); ++i) {
    if (!(arms[i].weight > 0) || !std::isfinite(arms[i].weight)) {
      return absl::InvalidArgumentError(fmt::format("model chooser: {}: weight must be > 0", arms[i].name));
    }
    for (size_t j = 0; j < i; ++j) {
      if (arms[j].name == arms[i].name) {
        return absl::InvalidArgumentError(fmt::format("model chooser: model '{}' given twice", arms[i].name));
      }
    }
  }
  return ModelChooser(std::move(arms), options);
}

absl::StatusOr<std::string> ModelChooser::Choose(const std::set<std::string>& disabled) {
  std::vector<size_t> enabled;
  for (size_t i = 0; i < arms_.size(); ++i) {
    if (!disabled.contains(arms_[i].name)) enabled.push_back(i);
  }
  if (enabled.empty()) return absl::FailedPreconditionError("every model is disabled");
  const uint64_t draw = draws_++;
  if (options_.policy == ChoicePolicy::kWeighted) {
    double total = 0;
    for (size_t i : enabled) total += arms_[i].weight;
    Rng rng(options_.seed ^ (0x9e3779b97f4a7c15ULL * (draw + 1)));
    double x = rng.Uniform() * total;
    for (size_t i : enabled) {
      if (x < arms_[i].weight) return arms_[i].name;
      x -= arms_[i].weight;
    }
    return arms_[enabled.back()].name;
  }
  int64_t total_pulls = 0;
  for (size_t i : enabled) {
    if (arms_[i].pulls == 0) return arms_[i].name;
    total_pulls += arms_[i].pulls;
  }
  size_t best = enabled.front();
  double best_score = -std::numeric_limits<double>::infinity();
  for (size_t i : enabled) {
    const Arm& a = arms_[i];
    const double n = static_cast<double>(a.pulls);
    const double score = a.reward_sum / n - options_.cost_weight * a.cost_sum / n +
                         options_.exploration * std::sqrt(2.0 * std::log(static_cast<double>(total_pulls)) / n);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return arms_[best].name;
}

absl::Status ModelChooser::Record(const std::string& model, double reward, double cost_usd) {
  for (Arm& a : arms_) {
    if (a.name != model) continue;
    ++a.pulls;
    a.reward_sum += std::clamp(reward, 0.0, 1.0);
    a.cost_sum += std::max(0.0, cost_usd);
    return absl::OkStatus();
  }
  return absl::NotFoundError(fmt::format("model chooser: no model '{}'", model));
}

namespace {
const char* PolicyName(ChoicePolicy p) { return p == ChoicePolicy::kWeighted ? "weighted" : "cost_aware_ucb"; }
}  // namespace

std::string ModelChooser::SaveState() const {
  nlohmann::json arms = nlohmann::json::array();
  for (const Arm& a : arms_) {
    arms.push_back({{"name", a.name}, {"pulls", a.pulls}, {"reward_sum", a.reward_sum}, {"cost_sum", a.cost_sum}});
  }
  return nlohmann::json{{"policy", PolicyName(options_.policy)}, {"draws", draws_}, {"arms", arms}}.dump();
}

absl::Status ModelChooser::RestoreState(const std::string& state) {
  const nlohmann::json j = nlohmann::json::parse(state, nullptr, /*allow_exceptions=*/false);
  auto bad = [](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("model chooser state: {}", why));
  };
  if (!j.is_object() || !j.contains("policy") || !j.contains("draws") || !j.contains("arms")) return bad("not a state");
  if (!j["policy"].is_string() || j["policy"].get<std::string>() != PolicyName(options_.policy)) {
    return bad("saved under another policy");
  }
  if (!j["draws"].is_number_unsigned() || !j["arms"].is_array() || j["arms"].size() != arms_.size()) {
    return bad("draws or models do not match");
  }
  std::vector<Arm> arms = arms_;
  for (size_t i = 0; i < arms.size(); ++i) {
    const nlohmann::json& a = j["arms"][i];
    if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || a["name"].get<std::string>() != arms[i].name ||
        !a.contains("pulls") || !a["pulls"].is_number_integer() || !a.contains("reward_sum") ||
        !a["reward_sum"].is_number() || !a.contains("cost_sum") || !a["cost_sum"].is_number()) {
      return bad(fmt::format("model {} does not match", i));
    }
    arms[i].pulls = a["pulls"].get<int64_t>();
    arms[i].reward_sum = a["reward_sum"].get<double>();
    arms[i].cost_sum = a["cost_sum"].get<double>();
  }
  arms_ = std::move(arms);
  draws_ = j["draws"].get<uint64_t>();
  return absl::OkStatus();
}

}  // namespace sparseditto::llm
