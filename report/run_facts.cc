#include "report/run_facts.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "coordinator/search/finalist_stage.h"
#include "fmt/format.h"
#include "task/arch_populations.h"

namespace sparseditto::report {
namespace {

// The confirmation file of a task, at most 64 KiB of it (it is a few lines; more is not ours).
std::string ReadConfirmation(const std::string& run_dir, const std::string& task_name) {
  std::ifstream in(std::filesystem::path(run_dir) / (task_name + ".confirmation.txt"), std::ios::binary);
  if (!in) return "";
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// <run>/<task>.confirmation.json, at most 64 KiB; nullopt when absent. A file that is not a confirmation
// is said in `errors` (the rest of the facts stand).
std::optional<Confirmation> ReadConfirmationNumbers(const std::string& run_dir, const std::string& task_name,
                                                    std::vector<std::string>* errors) {
  const std::filesystem::path path = std::filesystem::path(run_dir) / (task_name + ".confirmation.json");
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  absl::StatusOr<Confirmation> numbers = ConfirmationFromJson(text);
  if (!numbers.ok()) {
    errors->push_back(fmt::format("task {}: {}: {}", task_name, path.string(), std::string(numbers.status().message())));
    return std::nullopt;
  }
  return *std::move(numbers);
}

// Numbers the evaluated candidates in the order their results were stored and sets their wall time.
void OrderEvaluations(int64_t run_created_unix_ms, std::vector<CandidateFacts>& candidates) {
  std::vector<CandidateFacts*> evaluated;
  for (CandidateFacts& c : candidates) {
    if (c.result) evaluated.push_back(&c);
  }
  // By the time each was stored when every result says it; else (results stored before the field
  // existed) in store order, the order the search made them in.
  const bool all_timed = std::all_of(evaluated.begin(), evaluated.end(),
                                     [](const CandidateFacts* c) { return c->result->committed_unix_ms() != 0; });
  if (all_timed) {
    std::stable_sort(evaluated.begin(), evaluated.end(), [](const CandidateFacts* a, const CandidateFacts* b) {
      return a->result->committed_unix_ms() < b->result->committed_unix_ms();
    });
  }
  int64_t number = 0;
  for (CandidateFacts* c : evaluated) {
    c->evaluation_number = ++number;
    const v1::EvalResult& r = *c->result;
    if (r.search_wall_seconds() > 0) {
      c->wall_seconds = r.search_wall_seconds();
    } else {
      const int64_t at = r.committed_unix_ms() != 0 ? r.committed_unix_ms() : c->candidate.created_unix_ms();
      c->wall_seconds = run_created_unix_ms > 0 && at > run_created_unix_ms ? (at - run_created_unix_ms) / 1000.0 : 0;
    }
  }
}

absl::StatusOr<TaskFacts> ReadTask(const PopulationStore& store, const store::RunRecord& record,
                                   const std::string& task_name, const std::string& run_dir) {
  absl::StatusOr<StoredSearch> s = ReadStoredSearch(store, record.run_id(), task_name);
  if (!s.ok()) return s.status();
  absl::StatusOr<std::vector<v1::Candidate>> candidates = store.ListCandidates(record.run_id(), task_name);
  if (!candidates.ok()) return candidates.status();
  TaskFacts t;
  t.task = s->task;
  if (const size_t at = task_name.rfind(kPopulationSeparator); at != std::string::npos) {
    t.population_of = task_name.substr(0, at);
    t.population_arch = task_name.substr(at + 1);
  }
  t.state = StateWord(s->state);
  if (s->state) {
    t.state_detail = s->state->status_detail();
    t.attempts = s->state->attempts();
    t.in_flight = s->state->in_flight_candidate_id();
    t.finalist_done = s->state->finalist_done();
    t.finalists_text = DescribeFinalists(s->state->finalist_attempts());
    for (const store::FinalistAttempt& a : s->state->finalist_attempts()) {
      FinalistFacts f{.candidate_id = a.candidate_id(), .passed = a.passed()};
      v1::EvalResult r;
      if (r.ParseFromString(a.result())) {
        f.outcome = OutcomeName(r.failure());
        f.detail = r.failure_detail();
      } else {
        f.outcome = "unreadable";
      }
      t.finalists.push_back(std::move(f));
    }
  }
  t.spent = s->search.spent();
  t.best_id = s->search.best_candidate_id();
  t.best_fitness = s->search.best_fitness();
  std::vector<const v1::EvalResult*> results;
  t.candidates.reserve(candidates->size());
  for (v1::Candidate& c : *candidates) {
    CandidateFacts facts{.candidate = std::move(c)};
    absl::StatusOr<v1::EvalResult> result = store.GetEvaluation(record.run_id(), facts.candidate.id());
    if (absl::IsNotFound(result.status())) {
      ++t.outcomes["not evaluated"];
    } else if (!result.ok()) {
      return result.status();
    } else {
      ++t.outcomes[OutcomeName(result->failure())];
      facts.result = *std::move(result);
    }
    t.candidates.push_back(std::move(facts));
  }
  for (const CandidateFacts& c : t.candidates) {
    if (c.result) results.push_back(&*c.result);
  }
  t.gpus = GpusOf(results);
  OrderEvaluations(record.created_unix_ms(), t.candidates);
  t.confirmation_text = ReadConfirmation(run_dir, task_name);
  return t;
}

}  // namespace

std::string OutcomeName(v1::FailureCategory failure) {
  if (failure == v1::FAILURE_CATEGORY_NONE) return "correct";
  const std::string full = v1::FailureCategory_Name(failure);
  const std::string prefix = "FAILURE_CATEGORY_";
  std::string name = full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : fmt::format("category_{}", static_cast<int>(failure));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::string StateWord(const std::optional<store::RunState>& state) {
  if (!state) return "pending";
  switch (state->status()) {
    case store::TASK_RUN_STATUS_RUNNING: return "running";
    case store::TASK_RUN_STATUS_DONE: return "done";
    case store::TASK_RUN_STATUS_FAILED: return "failed";
    case store::TASK_RUN_STATUS_BUDGET_EXHAUSTED: return "budget_exhausted";
    default: return "pending";
  }
}

const CandidateFacts* TaskFacts::Find(const std::string& id) const {
  for (const CandidateFacts& c : candidates) {
    if (c.candidate.id() == id) return &c;
  }
  return nullptr;
}

RunFacts ReadRunFacts(const PopulationStore& store, const store::RunRecord& record, const std::vector<v1::Task>& tasks,
                      const std::string& run_dir) {
  RunFacts run;
  run.dir = run_dir;
  run.run_id = record.run_id();
  run.revision = record.project_revision().empty() ? "unknown" : record.project_revision();
  run.created_unix_ms = record.created_unix_ms();
  run.provenance_json = record.provenance_json();
  for (const v1::Task& task : tasks) {
    absl::StatusOr<TaskFacts> t = ReadTask(store, record, task.name(), run_dir);
    if (!t.ok()) {
      run.errors.push_back(fmt::format("task {}: {}", task.name(), std::string(t.status().message())));
      continue;
    }
    t->confirmation = ReadConfirmationNumbers(run_dir, task.name(), &run.errors);
    run.tasks.push_back(*std::move(t));
  }
  return run;
}

}  // namespace sparseditto::report
