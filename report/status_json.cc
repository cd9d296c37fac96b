#include "report/status_json.h"

namespace sparseditto::report {
namespace {

using nlohmann::json;

json TaskJson(const TaskFacts& t) {
  const v1::Budget& budget = t.task.budget();
  json j;
  j["name"] = t.task.name();
  j["population"] = t.population_arch.empty() ? json(nullptr) : json{{"of", t.population_of}, {"arch", t.population_arch}};
  j["state"] = t.state;
  j["state_detail"] = t.state_detail;
  j["attempts"] = t.attempts;
  j["in_flight"] = t.in_flight.empty() ? json(nullptr) : json(t.in_flight);
  j["candidates"] = t.candidates.size();
  j["evaluations"] = {{"done", t.spent.evaluations()}, {"max", budget.max_evaluations()}};
  j["wall_seconds"] = {{"spent", t.spent.wall_seconds()}, {"max", budget.max_wall_seconds()}};
  j["duplicates"] = t.spent.duplicates();
  j["tokens"] = {{"spent", t.spent.tokens()}, {"max", budget.max_tokens()}};
  j["money_usd"] = {{"spent", t.spent.money_usd()}, {"max", budget.max_money_usd()}};
  j["over_budget"] = t.spent.over_budget();
  j["arch"] = json::array();
  for (const std::string& a : t.task.arch()) j["arch"].push_back(a);
  j["gpus"] = json::array();
  for (const GpuEvaluations& g : t.gpus) j["gpus"].push_back({{"gpu", g.gpu}, {"evaluations", g.evaluations}});
  j["outcomes"] = json::object();
  for (const auto& [name, count] : t.outcomes) j["outcomes"][name] = count;
  j["best"] = t.best_id.empty() ? json(nullptr) : json{{"candidate_id", t.best_id}, {"fitness", t.best_fitness}};
  json attempts = json::array();
  for (const FinalistFacts& f : t.finalists) {
    attempts.push_back({{"candidate_id", f.candidate_id}, {"passed", f.passed}, {"outcome", f.outcome}, {"detail", f.detail}});
  }
  j["finalists"] = {{"done", t.finalist_done}, {"text", t.finalists_text}, {"attempts", attempts}};
  j["confirmation"] = t.confirmation_text.empty() ? json(nullptr) : json{{"text", t.confirmation_text}};
  if (t.confirmation.has_value()) {  // the numbers, when the run kept them (report/run_facts.h)
    if (j["confirmation"].is_null()) j["confirmation"] = json::object();
    j["confirmation"]["numbers"] = json::parse(ConfirmationToJson(*t.confirmation));
  }
  return j;
}

}  // namespace

json StatusJson(const RunFacts& run) {
  json j;
  j["schema"] = kStatusSchema;
  json provenance = json::parse(run.provenance_json, nullptr, /*allow_exceptions=*/false);
  const bool parsed = !provenance.is_discarded() && provenance.is_object();
  j["run"] = {{"id", run.run_id},
              {"dir", run.dir},
              {"revision", run.revision},
              {"created_unix_ms", run.created_unix_ms},
              {"provenance", parsed ? provenance : json(nullptr)},
              {"provenance_text", parsed ? "" : run.provenance_json}};
  j["tasks"] = json::array();
  for (const TaskFacts& t : run.tasks) j["tasks"].push_back(TaskJson(t));
  j["errors"] = run.errors;
  return j;
}

std::string DumpJson(const json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sparseditto::report
