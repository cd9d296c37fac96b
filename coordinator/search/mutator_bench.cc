#include "coordinator/search/mutator_bench.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>

#include "common/eval_outcome.h"
#include "common/status_format.h"
#include "coordinator/search/llm_search_mutator.h"
#include "coordinator/search/run_artifacts.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "population_store/population_store.h"
#include "task/run_paths.h"
#include "task/task_names.h"

namespace sparseditto {
namespace {

bool Compiled(const v1::EvalResult& r) {
  return r.failure() != v1::FAILURE_CATEGORY_COMPILE && r.failure() != v1::FAILURE_CATEGORY_REJECTED &&
         r.failure() != v1::FAILURE_CATEGORY_INTERNAL;
}

double Rate(int64_t count, int64_t of) { return of > 0 ? static_cast<double>(count) / static_cast<double>(of) : 0; }

// The row's counts from the model's store.
absl::Status ReadRow(const PopulationStore& store, const std::string& run, const std::string& task,
                     MutatorBenchRow* row) {
  absl::StatusOr<std::vector<v1::Candidate>> candidates = store.ListCandidates(run, task);
  if (!candidates.ok()) return candidates.status();
  for (const v1::Candidate& c : *candidates) {
    if (c.operator_() == v1::MUTATION_OPERATOR_SEED) continue;
    absl::StatusOr<v1::EvalResult> result = store.GetEvaluation(run, c.id());
    if (absl::IsNotFound(result.status())) continue;  // stored, never evaluated (budget ended first)
    if (!result.ok()) return result.status();
    ++row->children;
    if (Compiled(*result)) ++row->compiled;
    if (!IsCorrect(*result)) continue;
    ++row->correct;
    if (c.parent_ids().empty()) continue;
    absl::StatusOr<v1::EvalResult> parent = store.GetEvaluation(run, c.parent_ids(0));
    if (!parent.ok() && !absl::IsNotFound(parent.status())) return parent.status();
    if (!parent.ok() || !IsCorrect(*parent) || result->fitness() > parent->fitness()) ++row->improved;
  }
  absl::StatusOr<store::RunState> state = store.GetRunState(run, task);
  if (!state.ok()) return state.status();
  absl::StatusOr<coordinator::SearchState> search = ParseSearchState(state->search_state());
  if (!search.ok()) return search.status();
  if (!state->mutator_state().empty()) {
    absl::StatusOr<coordinator::LlmSearchState> llm = ParseLlmSearchState(state->mutator_state());
    if (!llm.ok()) return llm.status();
    row->failed_mutations = llm->failed_size();
  }
  row->duplicates = search->spent().duplicates();
  row->tokens = search->spent().tokens();
  row->cost_usd = search->spent().money_usd();
  row->evaluations = search->spent().evaluations();
  row->best_fitness = search->best_fitness();
  row->best_candidate_id = search->best_candidate_id();
  row->proposals = row->children + row->failed_mutations + row->duplicates;
  row->compile_rate = Rate(row->compiled, row->proposals);
  row->correct_rate = Rate(row->correct, row->proposals);
  row->improvement_rate = Rate(row->improved, row->proposals);
  return absl::OkStatus();
}

absl::Status CheckModels(const std::vector<v1::MutatorSpec>& models, const MutatorBenchOptions& options) {
  if (models.empty()) return absl::InvalidArgumentError("no models to compare");
  if (options.out_dir.empty()) return absl::InvalidArgumentError("no output folder");
  std::set<std::string> names;
  for (const v1::MutatorSpec& m : models) {
    const std::string name = m.name().empty() ? std::string(MutatorKindName(m.kind())) : m.name();
    if (std::optional<std::string> problem = RunNameProblem(name)) {
      return absl::InvalidArgumentError(fmt::format("model name '{}' cannot name a folder: {}", name, *problem));
    }
    if (!names.insert(name).second) return absl::InvalidArgumentError(fmt::format("two models named {}", name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<MutatorBenchRow>> RunMutatorBench(const v1::Task& task,
                                                             const std::vector<v1::MutatorSpec>& models,
                                                             const std::vector<SeedKernel>& seeds,
                                                             CandidateEvaluator& evaluator,
                                                             const MutatorBenchOptions& options) {
  if (absl::Status s = CheckModels(models, options); !s.ok()) return s;
  std::vector<MutatorBenchRow> rows;
  for (const v1::MutatorSpec& model : models) {
    MutatorBenchRow& row = rows.emplace_back();
    row.model = model.name().empty() ? std::string(MutatorKindName(model.kind())) : model.name();
    row.kind = std::string(MutatorKindName(model.kind()));
    if (options.on_model_start) options.on_model_start(row.model);
    v1::Task one = task;
    one.clear_mutators();
    *one.add_mutators() = model;
    one.mutable_mutators(0)->set_name(row.model);
    if (options.budget_evaluations > 0) one.mutable_budget()->set_max_evaluations(options.budget_evaluations);
    absl::StatusOr<std::filesystem::path> run_path = PathInside(options.out_dir, {row.model});
    if (!run_path.ok()) {
      row.error = std::string(run_path.status().message());
      continue;
    }
    const std::string run_dir = run_path->string();
    PopulationStoreOptions store_options;
    store_options.create_if_missing = true;
    absl::StatusOr<std::unique_ptr<PopulationStore>> store = OpenRunStore(run_dir, store_options);
    if (!store.ok()) {
      row.error = std::string(store.status().message());
      continue;
    }
    BatchSearchOptions batch;
    batch.loop = options.loop;
    batch.loop.max_finalists = 0;  // what is compared is the search; sanitizer runs would only add wall time
    batch.run_dir = run_dir;
    batch.make_llm = options.make_llm;
    batch.on_progress = options.on_progress;
    batch.provenance_json = nlohmann::json{{"bench_mutators", row.model}}.dump();
    const auto started = std::chrono::steady_clock::now();
    absl::StatusOr<BatchOutcome> outcome = RunBatchSearch(**store, row.model, {one}, seeds, evaluator, batch);
    row.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!outcome.ok()) {
      row.error = std::string(outcome.status().message());
      continue;
    }
    const TaskOutcome& t = outcome->tasks.at(0);
    if (!t.ok) {
      row.error = t.errors.empty() ? "failed" : t.errors.back();
      continue;
    }
    row.stop = t.summary.stop_detail.empty() ? t.summary.stop_reason : t.summary.stop_detail;
    if (absl::Status s = ReadRow(**store, row.model, one.name(), &row); !s.ok()) {
      row.error = std::string(s.message());
      continue;
    }
    row.ok = true;
  }
  return rows;
}

std::string MutatorBenchText(const std::vector<MutatorBenchRow>& rows) {
  std::string out = fmt::format("{:<20} {:<9} {:>9} {:>8} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>8}  {}\n", "model",
                                "kind", "proposals", "compile", "correct", "improve", "best", "tokens", "cost_usd",
                                "wall_s", "evals", "stop");
  for (const MutatorBenchRow& r : rows) {
    if (!r.ok) {
      out += fmt::format("{:<20} {:<9} FAILED: {}\n", r.model, r.kind, r.error);
      continue;
    }
    out += fmt::format("{:<20} {:<9} {:>9} {:>8.3f} {:>8.3f} {:>8.3f} {:>10.4f} {:>10} {:>10.4f} {:>8.1f} {:>8}  {}\n",
                       r.model, r.kind, r.proposals, r.compile_rate, r.correct_rate, r.improvement_rate,
                       r.best_fitness, r.tokens, r.cost_usd, r.wall_seconds, r.evaluations, r.stop);
  }
  return out;
}

namespace {

nlohmann::ordered_json RowJson(const MutatorBenchRow& r) {
  return {{"model", r.model},
          {"kind", r.kind},
          {"ok", r.ok},
          {"error", r.error},
          {"proposals", r.proposals},
          {"children", r.children},
          {"failed_mutations", r.failed_mutations},
          {"duplicates", r.duplicates},
          {"compiled", r.compiled},
          {"correct", r.correct},
          {"improved", r.improved},
          {"compile_rate", r.compile_rate},
          {"correct_rate", r.correct_rate},
          {"improvement_rate", r.improvement_rate},
          {"best_fitness", r.best_fitness},
          {"best_candidate_id", r.best_candidate_id},
          {"evaluations", r.evaluations},
          {"tokens", r.tokens},
          {"cost_usd", r.cost_usd},
          {"wall_seconds", r.wall_seconds},
          {"stop", r.stop}};
}

std::string CsvField(const nlohmann::ordered_json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string MutatorBenchJson(const std::vector<MutatorBenchRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const MutatorBenchRow& r : rows) out.push_back(RowJson(r));
  return out.dump(2) + "\n";
}

std::string MutatorBenchCsv(const std::vector<MutatorBenchRow>& rows) {
  std::string out;
  const nlohmann::ordered_json header = RowJson(MutatorBenchRow());
  for (auto it = header.begin(); it != header.end(); ++it) out += (it == header.begin() ? "" : ",") + it.key();
  out += "\n";
  for (const MutatorBenchRow& r : rows) {
    const nlohmann::ordered_json row = RowJson(r);
    for (auto it = row.begin(); it != row.end(); ++it) out += (it == row.begin() ? "" : ",") + CsvField(*it);
    out += "\n";
  }
  return out;
}

absl::Status WriteMutatorBench(const std::vector<MutatorBenchRow>& rows, const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) return absl::UnavailableError(fmt::format("{}: {}", out_dir, error.message()));
  const std::filesystem::path dir(out_dir);
  if (absl::Status s = WriteFileAtomically((dir / "bench-mutators.txt").string(), MutatorBenchText(rows)); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFileAtomically((dir / "bench-mutators.json").string(), MutatorBenchJson(rows)); !s.ok()) {
    return s;
  }
  return WriteFileAtomically((dir / "bench-mutators.csv").string(), MutatorBenchCsv(rows));
}

}  // namespace sparseditto
