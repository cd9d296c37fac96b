// Comparing mutators (LLMs, or the built-in one as a baseline) on one task: the same task, seed and
// budget searched once per model, each alone as the task's only mutator, each in its own run
// (<out_dir>/<model>/: its store and run files, as `sparseditto search` writes them), then one row per
// model read back from its store (`sparseditto bench-mutators`).
//
// A row's rates are over the model's PROPOSALS, the mutations asked of it: the children it made
// (stored and evaluated), its failed mutations (coordinator.proto FailedMutation: no usable answer,
// diff did not apply, the call failed) and its duplicates (a child repeating an earlier source).
// compile rate = children that compiled / proposals; correct rate = correct children (common/
// eval_outcome.h) / proposals; improvement rate = correct children better than their first parent
// (a higher fitness, or the parent was not correct) / proposals. The built-in mutator's refused plans are not recorded, so its proposals
// are its children and duplicates. best fitness is the run's best (the seeds' included), tokens and
// cost the run's spend, wall seconds measured around the model's run (this call only).
//
// A model's folder that already holds its run is resumed, as `sparseditto search` would.
// Errors: InvalidArgument (no models, two of one name, a name unfit for a folder, no out_dir); a
// model's run that fails is a row with ok = false and its error, and the bench goes on.
// Thread-safety: none.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/search/batch_search.h"
#include "coordinator/search/candidate_evaluator.h"
#include "kernels/seed_library.h"
#include "task.pb.h"

namespace sparseditto {

struct MutatorBenchOptions {
  std::string out_dir;              // required
  int64_t budget_evaluations = 0;   // > 0: replaces the task's budget.max_evaluations for every model
  SearchLoopOptions loop;           // as for a search
  // The LLM mutators of a model's task (BatchSearchOptions::make_llm); empty: LLM plans are served by
  // the built-in mutator, which defeats the comparison.
  std::function<absl::StatusOr<std::unique_ptr<LlmMutation>>(const v1::Task&)> make_llm;
  std::function<void(const std::string& model)> on_model_start;  // may be empty
  std::function<void(const SearchProgress&)> on_progress;         // may be empty
};

struct MutatorBenchRow {
  std::string model;  // MutatorSpec.name
  std::string kind;   // "openai", "anthropic", "command", "builtin"
  bool ok = false;
  std::string error;  // when !ok
  int64_t proposals = 0;
  int64_t children = 0;
  int64_t failed_mutations = 0;
  int64_t duplicates = 0;
  int64_t compiled = 0;
  int64_t correct = 0;
  int64_t improved = 0;
  double compile_rate = 0;
  double correct_rate = 0;
  double improvement_rate = 0;
  double best_fitness = 0;
  std::string best_candidate_id;
  int64_t evaluations = 0;
  int64_t tokens = 0;
  double cost_usd = 0;
  double wall_seconds = 0;
  std::string stop;  // the coordinator's explanation ("max_evaluations 3 reached")
};

absl::StatusOr<std::vector<MutatorBenchRow>> RunMutatorBench(const v1::Task& task,
                                                             const std::vector<v1::MutatorSpec>& models,
                                                             const std::vector<SeedKernel>& seeds,
                                                             CandidateEvaluator& evaluator,
                                                             const MutatorBenchOptions& options);

// The table as aligned text, a JSON array of objects (the row's fields by name), and CSV with a header.
std::string MutatorBenchText(const std::vector<MutatorBenchRow>& rows);
std::string MutatorBenchJson(const std::vector<MutatorBenchRow>& rows);
std::string MutatorBenchCsv(const std::vector<MutatorBenchRow>& rows);
// <out_dir>/bench-mutators.txt, .json, .csv, each written atomically. Unavailable naming the file.
absl::Status WriteMutatorBench(const std::vector<MutatorBenchRow>& rows, const std::string& out_dir);

}  // namespace sparseditto
