#include "coordinator/search/finalist_stage.h"

#include <algorithm>

#include "common/eval_outcome.h"
#include "fmt/format.h"

namespace sparseditto {

std::vector<std::string> FinalistOrder(const MapElitesArchive& archive, int max_count) {
  std::vector<const coordinator::Elite*> elites;
  for (const auto& [cell, elite] : archive.cells()) elites.push_back(&elite);
  std::sort(elites.begin(), elites.end(), [](const coordinator::Elite* a, const coordinator::Elite* b) {
    return a->fitness() != b->fitness() ? a->fitness() > b->fitness() : a->candidate_id() < b->candidate_id();
  });
  std::vector<std::string> order;
  for (const coordinator::Elite* e : elites) {
    if (static_cast<int>(order.size()) >= max_count) break;
    order.push_back(e->candidate_id());
  }
  return order;
}

v1::EvalResult EvaluateFinalistById(const std::function<v1::EvalResult(const v1::Candidate&)>& evaluate_finalist,
                                    const std::map<std::string, v1::Candidate>& candidates, const std::string& id) {
  auto it = candidates.find(id);
  if (it != candidates.end()) return evaluate_finalist(it->second);
  v1::EvalResult missing;
  missing.set_candidate_id(id);
  missing.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
  missing.set_failure_detail("the candidate is not loaded");
  return missing;
}

bool PassedFinalistChecks(const v1::EvalResult& result) {
  return result.stage_reached() == v1::EVAL_STAGE_DONE && IsCorrect(result);
}

const store::FinalistAttempt* PassedAttempt(const FinalistAttempts& attempts) {
  for (const store::FinalistAttempt& a : attempts) {
    if (a.passed()) return &a;
  }
  return nullptr;
}

absl::Status RunFinalistStage(const std::vector<std::string>& order,
                              const std::function<v1::EvalResult(const std::string& id)>& evaluate_finalist,
                              const std::function<absl::Status()>& store_attempts,
                              FinalistAttempts* attempts) {
  if (PassedAttempt(*attempts) != nullptr) return absl::OkStatus();
  for (const std::string& id : order) {
    const bool tried = std::any_of(attempts->begin(), attempts->end(),
                                   [&](const store::FinalistAttempt& a) { return a.candidate_id() == id; });
    if (tried) continue;
    const v1::EvalResult result = evaluate_finalist(id);
    store::FinalistAttempt* attempt = attempts->Add();
    attempt->set_candidate_id(id);
    attempt->set_result(result.SerializeAsString());
    attempt->set_passed(PassedFinalistChecks(result));
    if (absl::Status s = store_attempts(); !s.ok()) return s;
    if (attempt->passed()) return absl::OkStatus();
  }
  return absl::OkStatus();
}

std::string DescribeFinalists(const FinalistAttempts& attempts) {
  if (attempts.empty()) return "";
  std::string failures;
  int failed = 0;
  for (const store::FinalistAttempt& a : attempts) {
    if (a.passed()) continue;
    v1::EvalResult result;
    const bool parsed = result.ParseFromString(a.result());
    if (failed++ > 0) failures += "; ";
    failures += parsed ? fmt::format("{}: {}: {}", a.candidate_id(), v1::FailureCategory_Name(result.failure()),
                                     result.failure_detail().substr(0, 160))
                       : fmt::format("{}: unreadable result", a.candidate_id());
  }
  if (const store::FinalistAttempt* passed = PassedAttempt(attempts); passed != nullptr) {
    return failed == 0 ? fmt::format("{} passed the finalist checks", passed->candidate_id())
                       : fmt::format("{} passed the finalist checks; {} before it failed ({})", passed->candidate_id(),
                                     failed, failures);
  }
  return fmt::format("none of {} passed the finalist checks ({})", failed, failures);
}

}  // namespace sparseditto
