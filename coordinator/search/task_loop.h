// Internal to the search loop (search_loop.h), not for use elsewhere: the loop of one task as a class
// whose parts live in three files: search_loop.cc (start or resume from the records, the seeds, the
// RunState and summary it writes), search_step.cc (one step: plan -> mutate -> dedup -> commit ->
// evaluate -> report) and search_finish.cc (the plan stage, the finalists, the final state). The
// contract (budget, durability, resume, mutators, errors) is search_loop.h's.
// Thread-safety: none; one thread per task, which alone touches the loop's state. Helper threads: the
// proposal pool's (each runs one mutator call over its own snapshot, proposal_pool.h) and, while calls
// are in flight, one that only awaits the pipeline (AwaitServing). Every reference member outlives the
// loop.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"
#include "coordinator/search/builtin_child.h"
#include "coordinator/search/evaluation_job.h"
#include "coordinator/search/evaluation_pipeline.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/mutator.h"
#include "coordinator/search/proposal_pool.h"
#include "coordinator/search/run_records.h"
#include "coordinator/search/search_loop.h"

namespace sparseditto {

class TaskLoop {
 public:
  // `evaluator` answers Device(); every evaluation goes through `pipeline`.
  TaskLoop(PopulationStore& store, const std::string& run_id, const v1::Task& task, CandidateEvaluator& evaluator,
           EvaluationPipeline& pipeline, const SearchLoopOptions& options)
      : run_(store, run_id), records_(store, run_id, task.name()), task_(task), evaluator_(evaluator),
        pipeline_(pipeline), options_(options), mutator_options_(options.mutator) {}

  absl::StatusOr<SearchSummary> Run(const std::vector<SeedKernel>& seeds);

 private:
  using SteadyClock = std::chrono::steady_clock;

  // Candidates compiled together (SearchLoopOptions::compile_ahead).
  int64_t BatchSize() const { return std::max(options_.compile_ahead, 1); }
  // Calls of mutators that are not replayable in flight at once (SearchLoopOptions::proposals_in_flight).
  int ProposalsInFlight() const;

  static std::vector<std::string> Rest(const std::vector<v1::Candidate>& batch, size_t from) {
    std::vector<std::string> ids;
    for (size_t i = from; i < batch.size(); ++i) ids.push_back(batch[i].id());
    return ids;
  }

  // The built-in mutator with the run's device facts (mutator_options_.device), then the set over it
  // and options.mutators.
  absl::Status MakeMutators();

  // What a mutator may read (mutator.h): the task, the known candidates, the duplicate index and the
  // stored evaluations; valid while the loop is. Its budget left is less the calls in flight's shares.
  MutationContext Context() const;

  // A fresh run: the run record (when absent) and the task, then the stamped seeds in one write with
  // the coordinator's state after stamping.
  absl::Status Start(const std::vector<SeedKernel>& seeds, std::vector<v1::Candidate>* pending);

  // A stored run: the coordinator as of the last write, every stored candidate (parents of the plans to
  // come), the candidate in flight, and the seeds after the last one evaluated or in flight.
  absl::Status Resume(const store::RunState& stored, std::vector<v1::Candidate>* pending);

  // Registers a stored seed, records it as in flight, then evaluates and commits it; a duplicate
  // reuses the stored result. `next`: the seeds due after it, submitted ahead as far as the pipeline
  // has slots. False when the evaluation due is past options.stop_after_evaluations (interrupted).
  absl::StatusOr<bool> OfferSeed(const v1::Candidate& seed, const std::vector<v1::Candidate>& next);

  // The task's RunState as of now: the coordinator's and the mutators' state, `in_flight` and the rest
  // of its batch (`queue`), the attempts and the finalist and plan stages' records.
  store::RunState State(const std::string& in_flight, const std::vector<std::string>& queue = {}) const;

  // This call's summary (RecordedSummary, run_records.h, with this call's counters and findings).
  SearchSummary Summary(std::string stop_reason) const;
  // The start event: resumed or not, the budgets in force.
  void EmitStart();
  // Summary(stop_reason), told to options.events as the task's stop event.
  SearchSummary Stop(std::string stop_reason);

  // Tells options.events (when set) of `event`.
  void Emit(EventJson event) {
    if (options_.events != nullptr && !event.is_null()) options_.events->Emit(std::move(event));
  }
  // options.stop_after_evaluations reached, or options.stop_requested says stop: the call ends here.
  bool ShouldStop() const {
    if (options_.stop_after_evaluations > 0 && evaluations_this_call_ >= options_.stop_after_evaluations) return true;
    return options_.stop_requested && options_.stop_requested();
  }

  // The mutation loop over a sliding window of W = BatchSize() children. With mutators that are all
  // replayable: before each evaluation the
  // window is topped up with new children (planned from the results reported so far, at most the
  // evaluations left), stored in one write with the whole window in flight in order and prefetched;
  // then the window's head is evaluated and committed. So the compiles of the next W - 1 children run
  // while the GPU works on the head, across what used to be batch boundaries. W = 1 (a mutator that is
  // not replayable, whose failures and duplicates are stored the moment they happen): plan, evaluate,
  // report, plan ... The points where the window is topped up depend only on the sequence of results,
  // never on timing, so the run is deterministic; a resumed run hands the stored window back here
  // (`queue`, in order) and tops it up at the same points as the uninterrupted run would. A stop
  // (budget, stagnation) plans nothing more; the window already stored is evaluated (a wall budget is
  // overrun by at most W - 1 evaluations).
  // With a mutator that is not replayable: its plans are asked asynchronously (Ask) and the window is
  // topped up with whatever is at hand: the answers that arrived (stored one by one as they are taken
  // in), new calls while fewer than P = ProposalsInFlight() are in flight, at most max(W, P) stored
  // children after the one about to be evaluated and never more children stored, in flight or asked again than the
  // evaluations left (the wall's included); the built-in mutator's plans are proposed at once as above.
  // With nothing stored to evaluate the loop waits for the next answer. The run is then as
  // deterministic as the answers' order of arrival.
  absl::StatusOr<SearchSummary> RunMutations(std::vector<v1::Candidate> queue = {});

  // The next plan: one to ask again (resumed, or refused for its share of the budget) first, else the
  // coordinator's.
  absl::StatusOr<MutationPlan> NextPlan();
  // What the task's token and money budget has left (nullopt: no such limit).
  Allowance BudgetLeft() const;
  // Launches the call of `mutator` (not replayable) for `plan` in pool_, over a snapshot of its
  // candidates and with its share of the budget (all of it when it is asked alone: ask_alone_).
  void Ask(const MutationPlan& plan, Mutator& mutator);
  // Takes in `proposal`, `mutator`'s answer to `plan`: its tokens, cost and the wall time since the
  // last charge go to the budget, the mutator settles it, a tunable space it found exhausted goes to
  // the coordinator; a refusal over budget either stops the search or, when `shared` (it had a share
  // of what was left), is asked again alone; a failure is recorded (and stored with the state at once
  // for a mutator that is not replayable; `queue`: the stored window); a child is stamped and
  // registered, and returned when it is new (`pending`: the new children not evaluated yet).
  // `evaluating`: the candidate under evaluation, in flight before `queue` (empty: none; the queue's
  // head is then the one in flight).
  absl::StatusOr<std::optional<v1::Candidate>> TakeIn(const MutationPlan& plan, Mutator& mutator, Proposal proposal,
                                                      bool shared, const std::vector<v1::Candidate>& queue,
                                                      const std::vector<v1::Candidate>& pending,
                                                      const std::string& evaluating = "");
  // Takes in the ended calls, in order; each new child is stored at once, at the end of `queue`, in
  // flight with it (after `evaluating`, when one is under evaluation: CommitCandidates of the one
  // child), and hinted.
  absl::Status TakeAnswers(std::vector<EndedCall> ended, std::vector<v1::Candidate>* queue,
                           const std::string& evaluating = "");
  // pipeline_.Await(job); while calls are in flight and the mutation loop evaluates (serving_), it
  // awaits on another thread and this one takes the answers in as they arrive, into serving_.queue
  // (stored at once, in flight after serving_.evaluating; their ids in serving_.arrived, for the
  // evaluation's commit), so an answer is stored the moment it arrives, not after the evaluation.
  v1::EvalResult AwaitServing(const v1::EvaluationJob& job);
  static std::vector<std::string> ParentsOf(const MutationPlan& plan);

  // Registers a new candidate: true when it is new (to be evaluated), false for a duplicate, which
  // reuses the stored result (and tells the child's maker; one not replayable has its state stored,
  // with `pending` as the window in flight). `pending`: new candidates of the current batch, not
  // evaluated yet; a duplicate of one of them needs no stored result.
  absl::StatusOr<bool> RegisterOrReuse(const v1::Candidate& candidate, const std::vector<v1::Candidate>& pending = {},
                                       const std::string& evaluating = "");

  // Evaluates a registered candidate, reports it and commits the result with the state (in flight:
  // `still_due`, the rest of its batch, first one first; nothing for a batch of one), then tells
  // options.on_evaluation.
  absl::Status EvaluateAndCommit(const v1::Candidate& candidate, const std::vector<std::string>& still_due = {});

  // The evaluator's verdict on `candidate`: a seed or the plan in full; a child through the timing
  // screen (SearchLoopOptions::screen_margin) and, when the screen comes near the elite (EliteBar),
  // in full (by the evaluator in the same evaluation, or here again), the full result standing.
  // Counts into throughput_.
  v1::EvalResult EvaluateWithScreen(const v1::Candidate& candidate);

  // The job that evaluates `candidate` (its id is the pipeline's to give): a seed or the
  // plan in full, a child with the timing screen (SearchLoopOptions::screen_margin) against its bar
  // (bars_: the one stored for it, else EliteBar() now, kept there), or `kind` when given.
  v1::EvaluationJob JobFor(const v1::Candidate& candidate, std::optional<EvaluationKind> kind = std::nullopt);

  // Submits the jobs of the first pipeline_.Slots() candidates of `due` not submitted yet (submitted_),
  // so that the pipeline's takers work on them while the loop awaits the first, all in one
  // EvaluationPipeline::SubmitAll (a durable pipeline journals them in one write). Results are still
  // awaited and committed in `due`'s order. The first job's error from the pipeline is returned (the
  // jobs that were queued are kept in submitted_ all the same).
  absl::Status SubmitAhead(const std::vector<v1::Candidate>& due);

  // The result of `candidate`'s job: the one submitted ahead, else one submitted now; then forgotten.
  // With `kind` (a full timing after a screen, the finalist checks) always a new job of that kind.
  v1::EvalResult AwaitJob(const v1::Candidate& candidate, std::optional<EvaluationKind> kind = std::nullopt);

  // The bar a screened child must come near to be timed in full (common/screen_bar.h): the best's
  // fitness and the fastest full timing at each n (full_timings_), within screen_margin.
  v1::ScreenBar EliteBar() const;

  // Takes a committed result's times into full_timings_ (full timings of correct candidates only: NoteFullTiming).
  void NoteElite(const v1::EvalResult& result);

  // Once the search stopped: the plan stage (once), the finalist stage (until done), then the final
  // state with the coordinator's reason.
  absl::StatusOr<SearchSummary> Finish();

  // The plan stage (plan_stage.h): the plan, when one beats the best single candidate, stored in flight
  // with plan_done in one write, then evaluated and committed like a child. False: interrupted before
  // its evaluation (stop_after_evaluations).
  absl::StatusOr<bool> RunPlanStage();

  RunRecords run_;
  TaskRecords records_;  // the only writer of the task's records
  const v1::Task& task_;
  CandidateEvaluator& evaluator_;  // Device() only
  EvaluationPipeline& pipeline_;
  std::map<std::string, v1::EvaluationJob> submitted_;  // by candidate id: submitted, not yet awaited
  // By candidate id: the bar each child in flight is screened against (RunState.in_flight_screen_bars);
  // dropped once its evaluation is committed.
  std::map<std::string, v1::ScreenBar> bars_;
  const SearchLoopOptions& options_;
  BuiltinMutatorOptions mutator_options_;  // options.mutator with the run's device facts
  std::optional<Coordinator> coordinator_;
  std::optional<BuiltinSearchMutator> builtin_;  // made once the device facts are known
  std::optional<MutatorSet> mutators_;           // builtin_ and options.mutators
  // The calls of mutators that are not replayable; made by RunMutations, before which none is in
  // flight. Declared after the mutators it borrows: its destructor waits for its calls first.
  std::optional<ProposalPool> pool_;
  std::vector<MutationPlan> ask_again_;  // plans asked and not answered: stored in flight, or refused for a share
  bool ask_alone_ = false;               // ask_again_'s first waits for every other call, then gets all
  uint64_t alone_step_ = 0;              // the step of the plan asked alone, while ask_alone_
  // While the mutation loop evaluates `evaluating` (AwaitServing): its window after that one, the
  // children stored into it meanwhile and the first error storing them (returned by the commit).
  struct Serving {
    std::vector<v1::Candidate>* queue = nullptr;
    std::string evaluating;
    std::vector<std::string> arrived;
    absl::Status error;
  };
  Serving serving_;
  std::map<std::string, v1::Candidate> candidates_;
  v1::ScreenBar full_timings_;  // elite_ms_by_n: the fastest full timing at each n (NoteElite), rebuilt on resume
  // With a wall budget: how many evaluations the wall left holds at this call's mean evaluation
  // time (INT64_MAX without a budget or before the first evaluation). Bounds the window's top-up.
  int64_t EvaluationsLeftInWall() const;
  SearchThroughput throughput_;             // this call's
  std::string in_flight_;  // as stored when this call began
  std::vector<std::string> in_flight_queue_;  // the rest of its batch, as stored
  int32_t attempts_ = 1;
  int64_t evaluations_this_call_ = 0;
  int64_t shared_gpu_evaluations_this_call_ = 0;
  FinalistAttempts finalist_attempts_;  // as stored, then this call's
  bool finalist_done_ = false;
  bool plan_done_ = false;
  std::string plan_detail_;        // what this call's plan stage found
  bool summary_resumed_ = false;
  std::string summary_in_flight_;
  const SteadyClock::time_point started_ = SteadyClock::now();
  SteadyClock::time_point last_report_ = started_;
};

}  // namespace sparseditto
