#include "coordinator/search/search_loop.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/shared_gpu.h"
#include "common/status_format.h"
#include "coordinator/search/builtin_child.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/plan_stage.h"
#include "coordinator/search/run_records.h"
#include "coordinator/search/wall_clock.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

store::TaskRunStatus StatusOf(StopReason reason) {
  switch (reason) {
    case StopReason::kNone:
      return store::TASK_RUN_STATUS_RUNNING;
    case StopReason::kStagnation:
    case StopReason::kExhausted:
      return store::TASK_RUN_STATUS_DONE;
    default:
      return store::TASK_RUN_STATUS_BUDGET_EXHAUSTED;
  }
}

class Loop {
 public:
  Loop(PopulationStore& store, const std::string& run_id, const v1::Task& task, CandidateEvaluator& evaluator,
       const SearchLoopOptions& options)
      : run_(store, run_id), records_(store, run_id, task.name()), task_(task), evaluator_(evaluator),
        options_(options), mutator_options_(options.mutator) {}

  absl::StatusOr<SearchSummary> Run(const std::vector<SeedKernel>& seeds) {
    absl::StatusOr<std::optional<store::RunState>> read = records_.State();
    if (!read.ok()) return read.status();
    const std::optional<store::RunState>& stored = *read;
    // A state without a coordinator state was written before the search began (a failed first attempt).
    std::vector<v1::Candidate> pending_seeds;
    if (stored.has_value() && !stored->search_state().empty()) {
      attempts_ = std::max(stored->attempts(), 1);
      if (absl::Status s = Resume(*stored, &pending_seeds); !s.ok()) return s;
      if (!in_flight_.empty()) {
        summary_in_flight_ = in_flight_;
        std::vector<v1::Candidate> due = {candidates_.at(in_flight_)};
        for (const std::string& id : in_flight_queue_) due.push_back(candidates_.at(id));
        for (size_t i = 0; i < due.size(); ++i) {
          if (absl::Status s = EvaluateAndCommit(due[i], Rest(due, i + 1)); !s.ok()) return s;
        }
      }
    } else {
      attempts_ = stored.has_value() ? std::max(stored->attempts(), 1) : 1;
      if (absl::Status s = Start(seeds, &pending_seeds); !s.ok()) return s;
    }
    if (BatchSize() > 1) evaluator_.Prefetch(task_, pending_seeds);
    for (const v1::Candidate& seed : pending_seeds) {
      if (coordinator_->CheckStop() != StopReason::kNone) break;
      absl::StatusOr<bool> go_on = OfferSeed(seed);
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) return Summary("interrupted");
    }
    if (coordinator_->archive().best() == nullptr && coordinator_->CheckStop() == StopReason::kNone) {
      return absl::FailedPreconditionError(
          fmt::format("task {}: no seed is correct, nothing to mutate", task_.name()));
    }
    return RunMutations();
  }

 private:
  // Candidates compiled together (SearchLoopOptions::compile_ahead; 1 with a mutator that is not replayable).
  int64_t BatchSize() const { return mutators_->Replayable() ? std::max(options_.compile_ahead, 1) : 1; }

  // The built-in mutator with the run's device facts (mutator_options_.device), then the set over it
  // and options.mutators.
  absl::Status MakeMutators() {
    builtin_.emplace(mutator_options_);
    absl::StatusOr<MutatorSet> set = MutatorSet::Create(&*builtin_, options_.mutators);
    if (!set.ok()) return set.status();
    mutators_.emplace(*std::move(set));
    return absl::OkStatus();
  }

  MutationContext Context() const {
    return {.task = task_,
            .candidates = candidates_,
            .known = [this](const std::string& hash) { return coordinator_->KnowsSource(hash); },
            .evaluation = [this](const std::string& id) { return records_.Evaluation(id); }};
  }

  absl::StatusOr<SearchSummary> Finish() {
    // Not once the finalist stage is over (a run finished before plans existed keeps its finalists).
    if (options_.plan_stage && !plan_done_ && !finalist_done_) {
      absl::StatusOr<bool> evaluated = RunPlanStage();
      if (!evaluated.ok()) return evaluated.status();
      if (!*evaluated) return Summary("interrupted");  // the plan is in flight, evaluated first next time
    }
    if (options_.max_finalists > 0 && !finalist_done_) {
      auto evaluate = [this](const std::string& id) {
        if (options_.on_finalist) {
          options_.on_finalist({.task_name = task_.name(),
                                .candidate_id = id,
                                .attempt = finalist_attempts_.size() + 1,
                                .max_finalists = options_.max_finalists});
        }
        return EvaluateFinalistById(evaluator_, task_, candidates_, id);
      };
      auto store_attempts = [this] { return records_.Write(State("")); };
      const std::vector<std::string> order = FinalistOrder(coordinator_->archive(), options_.max_finalists);
      if (absl::Status s = RunFinalistStage(order, evaluate, store_attempts, &finalist_attempts_); !s.ok()) return s;
      finalist_done_ = true;
    }
    store::RunState final_state = State("");
    final_state.set_status_detail(coordinator_->ExplainStop());
    if (absl::Status s = records_.Write(final_state); !s.ok()) return s;
    return Summary(std::string(StopReasonName(coordinator_->CheckStop())));
  }

  // The plan stage (plan_stage.h): the plan, when one beats the best single candidate, stored in flight
  // with plan_done in one write, then evaluated and committed like a child. False: interrupted before
  // its evaluation (stop_after_evaluations).
  absl::StatusOr<bool> RunPlanStage() {
    plan_done_ = true;
    std::vector<v1::EvalResult> results;
    for (const auto& [id, candidate] : candidates_) {
      absl::StatusOr<v1::EvalResult> r = records_.Evaluation(id);
      if (r.ok()) {
        results.push_back(*std::move(r));
      } else if (!absl::IsNotFound(r.status())) {
        return r.status();
      }
    }
    const coordinator::Elite* best = coordinator_->archive().best();
    absl::StatusOr<std::optional<PlanProposal>> proposal =
        ProposePlan(task_, candidates_, results, best == nullptr ? 0 : best->fitness(), &plan_detail_);
    if (!proposal.ok()) return proposal.status();
    if (proposal->has_value()) {
      v1::Candidate plan = (*proposal)->candidate;
      plan.set_id(coordinator_->NextCandidateId());
      plan.set_island(0);
      plan.set_created_unix_ms(NowUnixMs());
      absl::StatusOr<bool> is_new = RegisterOrReuse(plan);
      if (!is_new.ok()) return is_new.status();
      if (*is_new) {
        candidates_[plan.id()] = plan;
        if (absl::Status s = records_.CommitCandidates({plan}, State(plan.id())); !s.ok()) return s;
        if (options_.stop_after_evaluations > 0 && evaluations_this_call_ >= options_.stop_after_evaluations) {
          return false;
        }
        if (absl::Status s = EvaluateAndCommit(plan); !s.ok()) return s;
        return true;
      }
    }
    if (absl::Status s = records_.Write(State("")); !s.ok()) return s;
    return true;
  }

  // The mutation loop: per step up to K new children (K = compile_ahead, at most the evaluations left;
  // 1 with a mutator that is not replayable, whose failures and duplicates are stored the moment they
  // happen, which a half-planned batch cannot be), stored in one write with all of them in flight, prefetched
  // together when K > 1, then evaluated and committed one by one.
  absl::StatusOr<SearchSummary> RunMutations() {
    const int64_t batch_size = BatchSize();
    int64_t step = 0;
    while (coordinator_->CheckStop() == StopReason::kNone) {
      const int64_t left = coordinator_->max_evaluations() - coordinator_->spent().evaluations();
      const int64_t want = std::min<int64_t>(batch_size, std::max<int64_t>(left, 1));
      std::vector<v1::Candidate> batch;
      while (static_cast<int64_t>(batch.size()) < want && coordinator_->CheckStop() == StopReason::kNone) {
        if (step++ >= options_.max_steps) {
          return absl::InternalError(fmt::format("task {}: no stop after {} steps", task_.name(), step - 1));
        }
        absl::StatusOr<MutationPlan> plan = coordinator_->PlanMutation();
        if (absl::IsFailedPrecondition(plan.status())) continue;  // the step is used; the next draws anew
        if (!plan.ok()) return plan.status();
        Mutator& mutator = mutators_->For(plan->mutator_kind);
        absl::StatusOr<Proposal> proposal = Propose(mutator, *plan);
        if (!proposal.ok()) return proposal.status();
        if (!proposal->child.has_value()) {
          coordinator_->RecordFailedMutation();
          // An answer that is not replayed (a model's) is lost unless its failure is stored now.
          if (!mutator.Replayable()) {
            if (absl::Status s = records_.Write(State("")); !s.ok()) return s;
          }
          continue;
        }
        v1::Candidate& child = *proposal->child;
        coordinator_->StampChild(*plan, &child);
        absl::StatusOr<bool> is_new = RegisterOrReuse(child, batch);
        if (!is_new.ok()) return is_new.status();
        if (*is_new) batch.push_back(std::move(child));
      }
      if (batch.empty()) continue;
      for (const v1::Candidate& c : batch) candidates_[c.id()] = c;
      if (absl::Status s = records_.CommitCandidates(batch, State(batch[0].id(), Rest(batch, 1))); !s.ok()) {
        return s;
      }
      if (batch_size > 1) evaluator_.Prefetch(task_, batch);
      for (size_t i = 0; i < batch.size(); ++i) {
        if (options_.stop_after_evaluations > 0 && evaluations_this_call_ >= options_.stop_after_evaluations) {
          return Summary("interrupted");  // batch[i] and the rest are in flight as committed last
        }
        if (absl::Status s = EvaluateAndCommit(batch[i], Rest(batch, i + 1)); !s.ok()) return s;
      }
    }
    return Finish();
  }

  // Asks `mutator` for the child of `plan`; its tokens, cost and the wall time since the last charge go
  // to the budget, and a tunable space it found exhausted to the coordinator, whose candidates stop
  // being parents of built-in plans.
  absl::StatusOr<Proposal> Propose(Mutator& mutator, const MutationPlan& plan) {
    absl::StatusOr<Proposal> proposal = mutator.Propose(plan, Context());
    if (!proposal.ok()) return proposal.status();
    const SteadyClock::time_point now = SteadyClock::now();
    coordinator_->AddCost({.wall_seconds = std::chrono::duration<double>(now - last_report_).count(),
                           .tokens = proposal->tokens,
                           .money_usd = proposal->cost_usd});
    last_report_ = now;
    if (proposal->exhausted.has_value()) {
      coordinator_->MarkSpaceExhausted(proposal->exhausted->space, proposal->exhausted->members,
                                       /*llm_serves=*/mutators_->OthersServe());
    }
    return proposal;
  }

  // Registers a new candidate: true when it is new (to be evaluated), false for a duplicate, which
  // reuses the stored result (and tells the child's maker; one not replayable has its state stored).
  // `pending`: new candidates of the current batch, not evaluated yet; a duplicate of one of them
  // needs no stored result.
  absl::StatusOr<bool> RegisterOrReuse(const v1::Candidate& candidate, const std::vector<v1::Candidate>& pending = {}) {
    absl::StatusOr<std::optional<std::string>> earlier = coordinator_->RegisterCandidate(candidate);
    if (!earlier.ok()) return earlier.status();
    if (!earlier->has_value()) return true;
    const bool of_pending = std::any_of(pending.begin(), pending.end(),
                                        [&](const v1::Candidate& p) { return p.id() == **earlier; });
    absl::StatusOr<v1::EvalResult> reused = records_.Evaluation(**earlier);
    if (!reused.ok() && !(of_pending && absl::IsNotFound(reused.status()))) {
      return absl::InternalError(fmt::format("duplicate {} of {} has no stored result: {}", candidate.id(),
                                             **earlier, reused.status().message()));
    }
    if (Mutator* maker = mutators_->MakerOf(candidate); maker != nullptr) {
      maker->RecordDuplicate(candidate, **earlier);
      if (!maker->Replayable()) {
        if (absl::Status s = records_.Write(State("")); !s.ok()) return s;
      }
    }
    return false;
  }

  static std::vector<std::string> Rest(const std::vector<v1::Candidate>& batch, size_t from) {
    std::vector<std::string> ids;
    for (size_t i = from; i < batch.size(); ++i) ids.push_back(batch[i].id());
    return ids;
  }
  using SteadyClock = std::chrono::steady_clock;

  // A fresh run: the run record (when absent) and the task, then the stamped seeds in one write with
  // the coordinator's state after stamping.
  absl::Status Start(const std::vector<SeedKernel>& seeds, std::vector<v1::Candidate>* pending) {
    if (absl::Status s = run_.EnsureRun(); !s.ok()) return s;
    if (absl::Status s = run_.PutTasks({task_}); !s.ok()) return s;
    absl::StatusOr<Coordinator> created = Coordinator::Create(task_, options_.coordinator);
    if (!created.ok()) return created.status();
    coordinator_.emplace(*std::move(created));
    // Facts given in the options win (tests); otherwise the evaluator's, read from the device.
    const DeviceFacts facts = options_.mutator.device == DeviceFacts{} ? evaluator_.Device() : options_.mutator.device;
    coordinator_->SetDeviceFacts(facts);
    mutator_options_.device = facts;
    if (absl::Status s = MakeMutators(); !s.ok()) return s;
    absl::StatusOr<std::vector<v1::Candidate>> seeded = SeedCandidates(task_, seeds, mutator_options_);
    if (!seeded.ok()) return seeded.status();
    if (seeded->empty()) {
      return absl::FailedPreconditionError(fmt::format("task {}: no seed applies", task_.name()));
    }
    for (size_t i = 0; i < seeded->size(); ++i) {
      coordinator_->StampSeed(i, &(*seeded)[i]);
      candidates_[(*seeded)[i].id()] = (*seeded)[i];
    }
    store::RunState state = State("");
    state.set_status(store::TASK_RUN_STATUS_PENDING);
    if (absl::Status s = records_.CommitCandidates(*seeded, state); !s.ok()) return s;
    *pending = *std::move(seeded);
    return absl::OkStatus();
  }

  // A stored run: the coordinator as of the last write, every stored candidate (parents of the plans to
  // come), the candidate in flight, and the seeds after the last one evaluated or in flight.
  absl::Status Resume(const store::RunState& stored, std::vector<v1::Candidate>* pending) {
    summary_resumed_ = true;
    if (absl::Status s = run_.PutTasks({task_}); !s.ok()) return s;
    absl::StatusOr<coordinator::SearchState> state = ParseSearchState(stored.search_state());
    if (!state.ok()) return state.status();
    absl::StatusOr<Coordinator> restored = Coordinator::Restore(task_, options_.coordinator, *state);
    if (!restored.ok()) return restored.status();
    coordinator_.emplace(*std::move(restored));
    mutator_options_.device = coordinator_->device_facts();  // as the first attempt read them
    if (absl::Status s = MakeMutators(); !s.ok()) return s;
    {
      if (absl::Status s = mutators_->RestoreState(stored.mutator_state()); !s.ok()) {
        return absl::Status(s.code(), fmt::format("task {}: {}", task_.name(), s.message()));
      }
    }
    in_flight_ = stored.in_flight_candidate_id();
    finalist_attempts_ = stored.finalist_attempts();
    finalist_done_ = stored.finalist_done();
    plan_done_ = stored.plan_done();
    in_flight_queue_.assign(stored.in_flight_queue().begin(), stored.in_flight_queue().end());
    absl::StatusOr<std::vector<v1::Candidate>> all = records_.Candidates();
    if (!all.ok()) return all.status();
    std::vector<v1::Candidate> seeds;
    size_t next_seed = 0;
    for (const v1::Candidate& c : *all) {
      candidates_[c.id()] = c;
      if (c.operator_() != v1::MUTATION_OPERATOR_SEED) continue;
      seeds.push_back(c);
      absl::StatusOr<v1::EvalResult> result = records_.Evaluation(c.id());
      if (result.ok() || c.id() == in_flight_) {
        next_seed = seeds.size();
      } else if (!absl::IsNotFound(result.status())) {
        return result.status();
      }
    }
    for (const std::string& id : in_flight_queue_) {
      if (!candidates_.contains(id)) {
        return absl::DataLossError(fmt::format("task {}: the candidate in flight, {}, is not stored", task_.name(), id));
      }
    }
    if (!in_flight_.empty() && !candidates_.contains(in_flight_)) {
      return absl::DataLossError(
          fmt::format("task {}: the candidate in flight, {}, is not stored", task_.name(), in_flight_));
    }
    pending->assign(seeds.begin() + static_cast<std::ptrdiff_t>(next_seed), seeds.end());
    return absl::OkStatus();
  }

  // Registers a stored seed, records it as in flight, then evaluates and commits it; a duplicate
  // reuses the stored result. False when the evaluation due is past options.stop_after_evaluations
  // (interrupted).
  absl::StatusOr<bool> OfferSeed(const v1::Candidate& seed) {
    absl::StatusOr<bool> unseen = RegisterOrReuse(seed);
    if (!unseen.ok()) return unseen.status();
    if (!*unseen) return true;
    if (absl::Status s = records_.Write(State(seed.id())); !s.ok()) return s;
    if (options_.stop_after_evaluations > 0 && evaluations_this_call_ >= options_.stop_after_evaluations) {
      return false;
    }
    if (absl::Status s = EvaluateAndCommit(seed); !s.ok()) return s;
    return true;
  }

  // Evaluates a registered candidate, reports it and commits the result with the state (in flight:
  // `still_due`, the rest of its batch, first one first; nothing for a batch of one), then tells
  // options.on_evaluation.
  absl::Status EvaluateAndCommit(const v1::Candidate& candidate, const std::vector<std::string>& still_due = {}) {
    v1::EvalResult result = evaluator_.Evaluate(task_, candidate, task_.seed());
    ++evaluations_this_call_;
    if (SharedGpuIdleTrialMs(result) > 0) ++shared_gpu_evaluations_this_call_;
    result.set_candidate_id(candidate.id());
    result.set_task_name(task_.name());
    const SteadyClock::time_point now = SteadyClock::now();
    Cost cost;
    cost.wall_seconds = std::chrono::duration<double>(now - last_report_).count();
    last_report_ = now;
    absl::StatusOr<ReportOutcome> outcome = coordinator_->ReportResult(candidate, result, cost);
    if (!outcome.ok()) return outcome.status();
    if (Mutator* maker = mutators_->MakerOf(candidate); maker != nullptr) {
      if (absl::Status s = maker->RecordEvaluation(candidate, result, Context()); !s.ok()) return s;
    }
    const store::RunState after = still_due.empty()
                                      ? State("")
                                      : State(still_due[0], std::vector<std::string>(still_due.begin() + 1, still_due.end()));
    if (absl::Status s = records_.CommitEvaluation(result, after); !s.ok()) return s;
    if (options_.on_evaluation) {
      SearchProgress progress;
      progress.task_name = task_.name();
      progress.candidate_id = candidate.id();
      progress.evaluations = coordinator_->spent().evaluations();
      progress.max_evaluations = coordinator_->max_evaluations();
      progress.evaluations_this_call = evaluations_this_call_;
      progress.seconds_this_call = std::chrono::duration<double>(now - started_).count();
      progress.exhausted_spaces = static_cast<int64_t>(coordinator_->exhausted_spaces().size());
      if (const coordinator::Elite* best = coordinator_->archive().best(); best != nullptr) {
        progress.best_candidate_id = best->candidate_id();
        progress.best_fitness = best->fitness();
      }
      options_.on_evaluation(progress);
    }
    return absl::OkStatus();
  }

  store::RunState State(const std::string& in_flight, const std::vector<std::string>& queue = {}) const {
    store::RunState state;
    for (const std::string& id : queue) state.add_in_flight_queue(id);
    state.set_status(StatusOf(coordinator_->CheckStop()));
    state.set_search_state(coordinator_->SaveState().SerializeAsString());
    state.set_in_flight_candidate_id(in_flight);
    state.set_mutator_state(mutators_->SaveState());
    state.set_attempts(attempts_);
    *state.mutable_finalist_attempts() = finalist_attempts_;
    state.set_finalist_done(finalist_done_);
    state.set_plan_done(plan_done_);
    return state;
  }

  SearchSummary Summary(std::string stop_reason) const {
    store::RunState recorded;
    *recorded.mutable_finalist_attempts() = finalist_attempts_;
    SearchSummary s = RecordedSummary(coordinator_->SaveState(), recorded);
    s.evaluations_this_call = evaluations_this_call_;
    s.shared_gpu_evaluations_this_call = shared_gpu_evaluations_this_call_;
    s.stop_reason = std::move(stop_reason);
    s.stop_detail = coordinator_->ExplainStop();
    s.resumed = summary_resumed_;
    s.reevaluated_in_flight = summary_in_flight_;
    for (const auto& [id, c] : candidates_) {
      if (c.operator_() == v1::MUTATION_OPERATOR_PLAN) s.plan_candidate_id = id;
    }
    s.plan = plan_detail_;
    return s;
  }

  RunRecords run_;
  TaskRecords records_;  // the only writer of the task's records
  const v1::Task& task_;
  CandidateEvaluator& evaluator_;
  const SearchLoopOptions& options_;
  BuiltinMutatorOptions mutator_options_;  // options.mutator with the run's device facts
  std::optional<Coordinator> coordinator_;
  std::optional<BuiltinSearchMutator> builtin_;  // made once the device facts are known
  std::optional<MutatorSet> mutators_;           // builtin_ and options.mutators
  std::map<std::string, v1::Candidate> candidates_;
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

}  // namespace

absl::StatusOr<SearchSummary> RunTaskSearch(PopulationStore& store, const std::string& run_id,
                                            const v1::Task& task, const std::vector<SeedKernel>& seeds,
                                            CandidateEvaluator& evaluator, const SearchLoopOptions& options) {
  if (absl::Status s = options.coordinator.Validate(); !s.ok()) return s;
  return Loop(store, run_id, task, evaluator, options).Run(seeds);
}

}  // namespace sparseditto
