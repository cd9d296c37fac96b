// What a run's store says about a run, read once and shared by every reader that shows it to a person
// or a program: `sparseditto status` (text), `status --json` (status_json.h) and `sparseditto report`
// (html_report.h). Each task's state, budget and spending, outcomes by category, best, finalist checks
// and GPUs, and every candidate with its evaluation (source included: the report diffs them).
// Thread-safety: ReadRunFacts is a pure function of the store (read-only, safe alongside a search).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator.pb.h"
#include "coordinator/search/confirmation.h"
#include "coordinator/search/stored_search.h"
#include "population_store/population_store.h"
#include "store.pb.h"
#include "task.pb.h"

namespace sparseditto::report {

// "correct" for FAILURE_CATEGORY_NONE, else the category's name in lower case ("compile", "slower").
std::string OutcomeName(v1::FailureCategory failure);

// A task's state as one word: "pending", "running", "done", "failed", "budget_exhausted".
std::string StateWord(const std::optional<store::RunState>& state);

struct CandidateFacts {
  v1::Candidate candidate;               // as stored, source included
  std::optional<v1::EvalResult> result;  // nullopt: not evaluated (yet)
  // 1-based position among the task's evaluations in the order they were stored (by committed_unix_ms
  // when every result has it, else in store order); 0 when not evaluated.
  int64_t evaluation_number = 0;
  // Seconds of search wall time when its result was stored (EvalResult.search_wall_seconds; for older
  // results the time since the run began, from committed_unix_ms or else the candidate's creation).
  double wall_seconds = 0;
};

struct FinalistFacts {
  std::string candidate_id;
  bool passed = false;
  std::string outcome;  // OutcomeName of its finalist evaluation; "unreadable" when it does not parse
  std::string detail;   // its failure_detail (untrusted text)
};

struct TaskFacts {
  v1::Task task;
  std::string population_arch;  // "sm_90" for task "gemm@sm_90" (task/arch_populations.h); else empty
  std::string population_of;    // "gemm" then; else empty
  std::string state;            // StateWord
  std::string state_detail;     // RunState.status_detail
  int32_t attempts = 0;
  std::string in_flight;        // the candidate in flight; empty: none
  coordinator::Spent spent;     // what the search spent (its coordinator state)
  std::vector<GpuEvaluations> gpus;
  std::map<std::string, int64_t> outcomes;  // OutcomeName (or "not evaluated") -> candidates
  std::string best_id;                      // empty: none correct yet
  double best_fitness = 0;
  std::vector<FinalistFacts> finalists;     // in the order they were tried
  bool finalist_done = false;
  std::string finalists_text;               // DescribeFinalists; empty when none was tried
  // <run>/<task>.confirmation.txt (the confirmation stage's words, which only that file holds); empty
  // when the stage has not run.
  std::string confirmation_text;
  // <run>/<task>.confirmation.json: the same as numbers; nullopt when the stage has not run, the run
  // predates the file, or the file is not a confirmation (named in RunFacts::errors).
  std::optional<Confirmation> confirmation;
  std::vector<CandidateFacts> candidates;   // in store order

  // The candidate with this id, or null.
  const CandidateFacts* Find(const std::string& id) const;
};

struct RunFacts {
  std::string dir;                 // the run's folder
  std::string run_id;
  std::string revision;            // the project revision that made the run; "unknown" when not recorded
  int64_t created_unix_ms = 0;
  std::string provenance_json;     // RunRecord.provenance_json as stored (may not parse)
  std::vector<TaskFacts> tasks;    // in the order given
  std::vector<std::string> errors;  // "task NAME: why" for each task that could not be read
};

// Reads every task of `tasks` from `store` (run `record`); `run_dir` is where the run's artifacts
// are (for the confirmation files). A task that cannot be read is left out and named in `errors`; the
// others are still read. Errors: none of its own (the store's go into `errors`).
RunFacts ReadRunFacts(const PopulationStore& store, const store::RunRecord& record, const std::vector<v1::Task>& tasks,
                      const std::string& run_dir);

}  // namespace sparseditto::report
