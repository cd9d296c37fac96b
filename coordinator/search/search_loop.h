// The search loop for ONE task over a PopulationStore: seeds -> evaluate -> (plan -> mutate -> dedup ->
// commit -> evaluate -> report -> commit evaluation + coordinator state) until the coordinator stops; then
// the plan stage (plan_stage.h) and the finalist stage (finalist_stage.h).
//
// Budget: the coordinator's budget is checked before every evaluation, seeds included, so a budget of
// max_evaluations N ends at exactly N evaluations (seeds beyond it stay stored, unevaluated), then the
// plan stage may add one: the dispatch plan (SearchLoopOptions::plan_stage), before the finalists. Wall time
// (Budget.max_wall_seconds) is measured around this call's work and added at each report; time between
// the last commit and a crash is not counted.
//
// Durability and resume: every record is written through TaskRecords (run_records.h). The coordinator's
// serialised SearchState, the one record of what the search
// has spent, its best and its RNG position, is stored in RunState.search_state. Before a candidate is
// evaluated it is recorded as IN FLIGHT (RunState.in_flight_candidate_id, written together with the
// coordinator state after registering it, in the same write as a new child); the commit of its
// evaluation clears it. Calling RunTaskSearch again on the same store, run and task restores the
// coordinator from the last write. A candidate in flight then (the process died while evaluating it,
// or before its evaluation was committed) is evaluated again, once, and counted once
// (SearchSummary::reevaluated_in_flight names it); the search then continues. Otherwise the plan after
// the restored state is drawn again and gives the same child (the mutator is a pure function of the
// plan). Nothing with a committed evaluation is evaluated again, and a resumed search ends as an
// uninterrupted one. Duplicates (RegisterCandidate names an earlier id) reuse the stored evaluation and
// never reach the evaluator; they are not stored.
//
// Mutators (mutator.h): the loop holds the built-in mutator (made from SearchLoopOptions::mutator, the
// fallback that serves every plan no other takes) and SearchLoopOptions::mutators in a MutatorSet, and
// treats them all alike: a plan goes to the mutator of its kind; a proposal's tokens, cost and the wall
// time since the last charge are charged to the budget (a run stops cleanly at max_tokens /
// max_money_usd: CheckStop before the next plan). A failed mutation is recorded (the coordinator's
// failed-mutation count; an LLM's FailedMutation with its reason) and, for a mutator that is not
// replayable, the state is stored at once, nothing evaluated. A mutator that is not replayable (a model)
// is asked asynchronously (SearchLoopOptions::proposals_in_flight, mutator.h): its calls overlap the
// compiles and evaluations of earlier children, each answer is stored as the loop takes it in (a
// child with its prompt and response, in flight; a failure in the mutator state), the calls in flight
// share the token and money budget left, never more calls than the evaluations (and the wall) left
// can take, and the plans asked and not answered are stored with every RunState (in_flight_plans): a
// resumed search asks them again (an answer lost at a kill is asked again; nothing is evaluated twice).
// Each plan is drawn from the population as it stands when it is made: the answers still in flight are
// not in it, and a model's result reaches selection once its child's evaluation is committed. A child carries its prompt and response
// (a model's) into the store (run_artifacts.h writes prompt.md / response.md); its maker is told of its
// evaluation, in the same write. The set's state is stored in every RunState written
// (RunState.mutator_state) and restored on resume.
//
// Events (SearchLoopOptions::events, search_events.h): a start event when the call begins; each
// mutation (new children once stored, duplicates and failed mutations at once), each committed
// evaluation (and a failure event for a failed one), each stored finalist attempt, and a stop event
// when the call returns a summary, each after the store write it describes. Stopping
// (SearchLoopOptions::stop_requested) is checked before each evaluation, plan and finalist attempt:
// the call then returns stop_reason "interrupted" with nothing half written, as at
// stop_after_evaluations. A target fitness reached (Budget.target_fitness) stops the search with
// stop_reason "target_fitness" (DONE).
//
// Errors: absl::Status from the store, the coordinator or the mutator's seeding; InvalidArgument for
// two mutators that keep state (MutatorSet::Create), or when the
// run holds a task of this name with other content (SameTaskContent, population_store.h: a moved task file is the
// same task); FailedPrecondition when no seed applies to the task, or none is correct.
// Thread-safety: none; one thread per task.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/evaluation_pipeline.h"
#include "coordinator/search/mutator.h"
#include "coordinator/search/search_events.h"
#include "kernels/seed_library.h"
#include "mutators/builtin/builtin_mutator.h"
#include "population_store/population_store.h"
#include "task.pb.h"

namespace sparseditto {

// What the loop reports after each committed evaluation (SearchLoopOptions::on_evaluation).
struct SearchProgress {
  std::string task_name;
  std::string candidate_id;             // the candidate just evaluated and committed
  int64_t evaluations = 0;              // of the task in total
  int64_t max_evaluations = 0;          // the budget's limit (its default when the task leaves it 0)
  int64_t evaluations_this_call = 0;
  double seconds_this_call = 0;         // wall time since RunTaskSearch was called
  std::string best_candidate_id;        // empty while none is correct
  double best_fitness = 0;
  int64_t exhausted_spaces = 0;         // tunable spaces the built-in mutator exhausted so far
  double wall_seconds_left = -1;        // of the wall budget; < 0: the task sets none
};

// What the loop reports before each finalist attempt it makes (SearchLoopOptions::on_finalist): the
// stage is not counted in the evaluations, so the progress line does not move while it runs.
struct FinalistProgress {
  std::string task_name;
  std::string candidate_id;  // the candidate about to go through the finalist checks
  int attempt = 0;           // 1 for the first attempt of the task (attempts stored earlier count)
  int max_finalists = 0;     // SearchLoopOptions::max_finalists
};

// Where one call's time went (SearchSummary::throughput): the judge's clocks, summed over the
// evaluator calls (a screened child timed in full counts both calls).
struct SearchThroughput {
  double wall_seconds = 0;       // the call, from start to its summary
  double evaluator_seconds = 0;  // inside the evaluator's Evaluate calls (waiting for a compile included)
  double gpu_seconds = 0;        // the GPU stages' wall time (EvalResult.gpu_seconds)
  std::map<std::string, double> stage_seconds;  // EvalResult.stage_seconds, summed by stage
  int64_t screened = 0;       // children evaluated with the timing screen
  int64_t timed_in_full = 0;  // of those, timed again in full (near an elite)
};

struct SearchLoopOptions {
  CoordinatorOptions coordinator;
  BuiltinMutatorOptions mutator;
  // Stop this call (stop_reason "interrupted") when this many evaluations were made in it and another
  // is due; the candidate due is committed already, in flight, and is evaluated first by the next call.
  // 0: no limit. A test seam for an interruption (a crash or a kill during an evaluation).
  int64_t stop_after_evaluations = 0;
  // Mutators asked before the built-in one for the plans of the kinds they serve (mutator.h: the LLM
  // mutators); not owned, non-null, outlive the call; at most one KeepsState(). Empty: the built-in
  // mutator serves every plan (the behaviour of a task without LLM mutators).
  std::vector<Mutator*> mutators;
  // Children planned, stored and handed to CandidateEvaluator::Prefetch together per step (their
  // compiles overlap). 1: one child at a time (plan, evaluate, report, plan ...). With k > 1 the k
  // plans of a step are drawn before any of their results is reported (so the choices differ from
  // k = 1, deterministically), at most the evaluations left in the budget; the batch is stored in
  // one write, its candidates still due recorded in flight in order (RunState.in_flight_queue), and a
  // resumed search evaluates those first, once each. With a mutator that is not Replayable() (an LLM
  // mutator) the children come as the answers arrive (proposals_in_flight), and at most
  // max(compile_ahead, proposals_in_flight) stored children wait after the one under evaluation.
  int compile_ahead = 1;
  // Calls of a mutator that is not Replayable() (a model) in flight at once, each on its own thread
  // (proposal_pool.h), while earlier children compile and run. 0: compile_ahead. Each call gets an
  // equal share of the token and money budget left (the calls in flight together never overrun it);
  // each model's own ModelOptions.concurrency still bounds its requests.
  int proposals_in_flight = 0;
  // Once the search stops, its best correct candidates (highest fitness first) get the finalist checks
  // until one passes or this many were tried (coordinator/search/finalist_stage.h). 0: no finalist stage.
  // The stage runs after the budget is spent and is not counted in it; with the GPU evaluator each
  // attempt takes a minute or two (compute-sanitizer).
  int max_finalists = 3;
  // Once the budget is spent, before the finalist stage: the dispatch plan over the task's correct
  // candidates (coordinator/search/plan_stage.h), evaluated as a candidate when its predicted fitness
  // beats the best single candidate's. Its evaluation is counted (SearchSummary::evaluations is then
  // one past the budget) and is in flight like any other: a crash during it evaluates it again, once.
  // false: no plan stage.
  bool plan_stage = true;
  // The timing screen: each child (not the seeds, not the plan) is evaluated with a short timing
  // (CandidateEvaluator::EvaluateScreened: every check, a few timed batches per n) and timed again in
  // full only when it comes near an elite: its fitness within this share of the best's, or its time
  // at some n within this share of the fastest full timing there. A screened-out child keeps its
  // screen's result (EvalResult.timing_screen), far enough below the elites that its noise cannot
  // change a choice. 0.10: the screen's spread on the H200 is a few percent, and children of one
  // seed's family differ from their parents by about that much or more. 0: every child in full.
  double screen_margin = 0.10;
  // Where the evaluations go (evaluation_pipeline.h): not owned, outlives the call. Null: a
  // LocalEvaluationPipeline over the call's `evaluator` alone (one job at a time). With a pipeline of
  // k slots the loop keeps up to k jobs of its window outstanding (children with the screen bar of the
  // point they were submitted at, stored with them: RunState.in_flight_screen_bars) and commits their
  // results in the window's order, so the run is as deterministic as with one; a stop
  // (stop_after_evaluations, a crash) may then leave up to k - 1 evaluations made and not committed,
  // which the resumed run makes again. The call's `evaluator` still answers Device().
  EvaluationPipeline* pipeline = nullptr;
  // Safety net against a loop that makes no progress (plans refused over and over).
  int64_t max_steps = 1000000;
  // Where the loop's events go (search_events.h: each evaluation, mutation, failure, finalist attempt
  // and stop, after the store write it describes); not owned, outlives the call. Null: none.
  EventSink* events = nullptr;
  // Asked before each evaluation, each finalist attempt and each new plan: true stops the call at that
  // point (stop_reason "interrupted", as stop_after_evaluations does: what is in flight is evaluated
  // first by the next call; jobs already submitted ahead are made again then). A signal's safe point
  // (`sparseditto search` on SIGINT/SIGTERM). Called on the calling thread; may be empty.
  std::function<bool()> stop_requested;
  // Called after each committed evaluation, on the calling thread; may be empty. It may read the store.
  std::function<void(const SearchProgress&)> on_evaluation;
  // Called before each finalist attempt, on the calling thread; may be empty.
  std::function<void(const FinalistProgress&)> on_finalist;
};

struct SearchSummary {
  std::string best_candidate_id;  // empty when no candidate is correct
  double best_fitness = 0;
  int64_t evaluations = 0;           // evaluations of the task in total (this call and earlier ones)
  int64_t evaluations_this_call = 0;  // evaluator calls made by this call
  int64_t duplicates = 0;            // proposals answered from a stored result
  // Evaluations of this call whose times (the candidate's or a baseline's) were taken while other work
  // shared the GPU (SharedGpuIdleTrialMs, common/shared_gpu.h): their fitness is not comparable with a
  // quiet GPU's, and selection used it as it was.
  int64_t shared_gpu_evaluations_this_call = 0;
  std::string stop_reason;           // StopReasonName, or "interrupted"
  std::string stop_detail;           // the coordinator's explanation ("max_evaluations 60 reached")
  bool resumed = false;              // the store held a state of this task already
  std::string finalist_candidate_id;  // the best candidate that passed the finalist checks; empty: none
  std::string finalists;              // DescribeFinalists: what the finalist stage found ("" before it ran)
  std::string reevaluated_in_flight;  // the candidate a crash left in flight, evaluated again now
  std::string plan_candidate_id;      // the task's plan (plan_stage.h), made by this call or an earlier one; empty: none
  std::string plan;                   // what this call's plan stage found (DescribePlan or why none); "": it did not run
  // One line per tunable space the built-in mutator exhausted (whole run), in the order found:
  // "seed nm24_stream_sp: all 36 points of its tunable space proposed; no more built-in children of it".
  std::vector<std::string> exhausted_spaces;
  SearchThroughput throughput;  // this call's
};

absl::StatusOr<SearchSummary> RunTaskSearch(PopulationStore& store, const std::string& run_id,
                                            const v1::Task& task, const std::vector<SeedKernel>& seeds,
                                            CandidateEvaluator& evaluator, const SearchLoopOptions& options);

}  // namespace sparseditto
