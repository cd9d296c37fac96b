#include "coordinator/search/confirmation.h"

#include <algorithm>

#include "common/eval_outcome.h"
#include "common/shared_gpu.h"
#include "common/spread.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

// Leaves the three untouched when `values` is empty.
void Summarise(const std::vector<double>& values, double* median, double* low, double* high) {
  if (values.empty()) return;
  const Spread s = SpreadOf(values);
  *median = s.median, *low = s.low, *high = s.high;
}

}  // namespace

absl::StatusOr<std::vector<ConfirmationSubject>> ConfirmationSubjects(const PopulationStore& store,
                                                                      const std::string& run_id,
                                                                      const std::string& task_name) {
  auto candidates = store.ListCandidates(run_id, task_name);
  if (!candidates.ok()) return candidates.status();
  const v1::Candidate* best = nullptr;
  const v1::Candidate* best_seed = nullptr;
  double best_fitness = 0, best_seed_fitness = 0;
  for (const v1::Candidate& candidate : *candidates) {
    auto result = store.GetEvaluation(run_id, candidate.id());
    if (absl::IsNotFound(result.status())) continue;  // stored, never evaluated
    if (!result.ok()) return result.status();
    if (!IsCorrect(*result)) continue;
    const double fitness = result->fitness();
    // Ties keep the earlier (smaller) id: ListCandidates is in id order.
    if (best == nullptr || fitness > best_fitness) best = &candidate, best_fitness = fitness;
    if (candidate.operator_() == v1::MUTATION_OPERATOR_SEED && (best_seed == nullptr || fitness > best_seed_fitness)) {
      best_seed = &candidate, best_seed_fitness = fitness;
    }
  }
  std::vector<ConfirmationSubject> subjects;
  if (best != nullptr) subjects.push_back({"result", *best});
  if (best_seed != nullptr && best_seed != best) subjects.push_back({"best seed", *best_seed});
  return subjects;
}

absl::StatusOr<Confirmation> ConfirmSubjects(CandidateEvaluator& evaluator, const v1::Task& task,
                                             const std::vector<ConfirmationSubject>& subjects,
                                             const ConfirmationOptions& options, uint64_t seed) {
  if (subjects.empty()) return absl::InvalidArgumentError("confirmation: no candidate to confirm");
  if (options.rounds < 1) return absl::InvalidArgumentError(fmt::format("confirmation: {} rounds", options.rounds));
  const size_t count = subjects.size();
  std::vector<std::vector<double>> fitness(count);
  std::vector<std::vector<double>> by_round(options.rounds, std::vector<double>(count, 0));
  Confirmation out;
  out.rounds = options.rounds;
  for (const ConfirmationSubject& s : subjects) {
    ConfirmedCandidate& c = out.subjects.emplace_back();
    c.role = s.role;
    c.candidate_id = s.candidate.id();
  }
  for (int round = 0; round < options.rounds; ++round) {
    if (absl::Status s = evaluator.RetimeBaselines(task); !s.ok()) {
      return absl::Status(s.code(), fmt::format("confirmation round {}: baselines: {}", round + 1, s.message()));
    }
    for (size_t k = 0; k < count; ++k) {
      const size_t i = (k + round) % count;
      const v1::EvalResult result = evaluator.Evaluate(task, subjects[i].candidate, seed + round);
      ConfirmedCandidate& c = out.subjects[i];
      c.shared_gpu = c.shared_gpu || SharedGpuIdleTrialMs(result) > 0;
      if (IsCorrect(result)) {
        ++c.rounds_correct;
        fitness[i].push_back(result.fitness());
        by_round[round][i] = result.fitness();
      } else if (c.failure.empty()) {
        c.failure = fmt::format("round {}: {}: {}", round + 1, v1::FailureCategory_Name(result.failure()),
                                result.failure_detail());
      }
    }
  }
  for (size_t i = 0; i < count; ++i) {
    ConfirmedCandidate& c = out.subjects[i];
    Summarise(fitness[i], &c.fitness_median, &c.fitness_low, &c.fitness_high);
  }
  if (count >= 2) {
    std::vector<double> ratios;
    for (const auto& round : by_round) {
      if (round[0] > 0 && round[1] > 0) ratios.push_back(round[0] / round[1]);
    }
    out.ratio_rounds = static_cast<int>(ratios.size());
    Summarise(ratios, &out.ratio_median, &out.ratio_low, &out.ratio_high);
  }
  return out;
}

std::string DescribeConfirmation(const Confirmation& c) {
  std::string out = fmt::format("confirmed over {} round{} (baselines re-timed each round):", c.rounds,
                                c.rounds == 1 ? "" : "s");
  for (const ConfirmedCandidate& s : c.subjects) {
    out += fmt::format("\n  {} {}: ", s.role, s.candidate_id);
    if (s.rounds_correct == 0) {
      out += "not correct in any round";
    } else {
      out += fmt::format("fitness {:.3f} [{:.3f}, {:.3f}]", s.fitness_median, s.fitness_low, s.fitness_high);
      if (s.rounds_correct < c.rounds) out += fmt::format(", correct in {} of {} rounds", s.rounds_correct, c.rounds);
    }
    if (!s.failure.empty()) out += fmt::format(" ({})", s.failure);
    if (s.shared_gpu) out += " [timed while the GPU was shared: not comparable with a quiet GPU]";
  }
  if (c.subjects.size() >= 2) {
    if (c.ratio_rounds > 0) {
      out += fmt::format("\n  {} / {}: {:.3f} [{:.3f}, {:.3f}] over {} round{}", c.subjects[0].role,
                         c.subjects[1].role, c.ratio_median, c.ratio_low, c.ratio_high, c.ratio_rounds,
                         c.ratio_rounds == 1 ? "" : "s");
    } else {
      out += fmt::format("\n  {} / {}: no round where both were correct", c.subjects[0].role, c.subjects[1].role);
    }
  }
  return out;
}

std::string ConfirmationToJson(const Confirmation& c) {
  nlohmann::json subjects = nlohmann::json::array();
  for (const ConfirmedCandidate& s : c.subjects) {
    subjects.push_back({{"role", s.role}, {"candidate_id", s.candidate_id}, {"rounds_correct", s.rounds_correct},
                        {"fitness_median", s.fitness_median}, {"fitness_low", s.fitness_low},
                        {"fitness_high", s.fitness_high}, {"failure", s.failure}, {"shared_gpu", s.shared_gpu}});
  }
  const nlohmann::json doc = {
      {"rounds", c.rounds},
      {"subjects", subjects},
      {"ratio", {{"rounds", c.ratio_rounds}, {"median", c.ratio_median}, {"low", c.ratio_low}, {"high", c.ratio_high}}}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<Confirmation> ConfirmationFromJson(const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return absl::InvalidArgumentError("confirmation: not a JSON object");
  std::string field;  // the one being read, for the error
  try {
    Confirmation c;
    field = "rounds";
    c.rounds = doc.at("rounds").get<int>();
    field = "subjects";
    for (const nlohmann::json& s : doc.at("subjects")) {
      ConfirmedCandidate one;
      field = "subjects[].role";
      one.role = s.at("role").get<std::string>();
      field = "subjects[].candidate_id";
      one.candidate_id = s.at("candidate_id").get<std::string>();
      field = "subjects[].rounds_correct";
      one.rounds_correct = s.at("rounds_correct").get<int>();
      field = "subjects[].fitness_median/low/high";
      one.fitness_median = s.at("fitness_median").get<double>();
      one.fitness_low = s.at("fitness_low").get<double>();
      one.fitness_high = s.at("fitness_high").get<double>();
      field = "subjects[].failure";
      one.failure = s.at("failure").get<std::string>();
      field = "subjects[].shared_gpu";
      one.shared_gpu = s.at("shared_gpu").get<bool>();
      c.subjects.push_back(std::move(one));
    }
    field = "ratio";
    const nlohmann::json& r = doc.at("ratio");
    c.ratio_rounds = r.at("rounds").get<int>();
    c.ratio_median = r.at("median").get<double>();
    c.ratio_low = r.at("low").get<double>();
    c.ratio_high = r.at("high").get<double>();
    return c;
  } catch (const nlohmann::json::exception&) {  // missing or of the wrong type; not thrown past here
    return absl::InvalidArgumentError(fmt::format("confirmation: field {} missing or of the wrong type", field));
  }
}

}  // namespace sparseditto
