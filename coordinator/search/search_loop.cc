#include "coordinator/search/search_loop.h"

#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "common/rng.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "google/protobuf/util/message_differencer.h"

namespace sparseditto {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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
      : store_(store), run_id_(run_id), task_(task), evaluator_(evaluator), options_(options) {}

  absl::StatusOr<SearchSummary> Run(const std::vector<SeedKernel>& seeds) {
    absl::StatusOr<store::RunState> stored = store_.GetRunState(run_id_, task_.name());
    if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
    std::vector<v1::Candidate> pending_seeds;
    if (stored.ok()) {
      if (absl::Status s = Resume(*stored, &pending_seeds); !s.ok()) return s;
    } else {
      if (absl::Status s = Start(seeds, &pending_seeds); !s.ok()) return s;
    }
    for (const v1::Candidate& seed : pending_seeds) {
      absl::StatusOr<bool> go_on = Offer(seed, /*commit=*/false);
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) return Summary("interrupted");
    }
    if (coordinator_->archive().best() == nullptr && coordinator_->CheckStop() == StopReason::kNone) {
      return absl::FailedPreconditionError(
          fmt::format("task {}: no seed is correct, nothing to mutate", task_.name()));
    }
    for (int64_t step = 0; coordinator_->CheckStop() == StopReason::kNone; ++step) {
      if (step >= options_.max_steps) {
        return absl::InternalError(fmt::format("task {}: no stop after {} steps", task_.name(), step));
      }
      absl::StatusOr<MutationPlan> plan = coordinator_->PlanMutation();
      if (absl::IsFailedPrecondition(plan.status())) continue;  // the step is used; the next draws anew
      if (!plan.ok()) return plan.status();
      auto parent = candidates_.find(plan->parent_id);
      if (parent == candidates_.end()) {
        return absl::InternalError(fmt::format("plan names unknown parent {}", plan->parent_id));
      }
      Rng rng(plan->mutator_seed);
      absl::StatusOr<v1::Candidate> child;
      if (plan->op == v1::MUTATION_OPERATOR_TUNE_CROSSOVER) {
        auto mate = candidates_.find(plan->mate_id);
        if (mate == candidates_.end()) {
          return absl::InternalError(fmt::format("plan names unknown mate {}", plan->mate_id));
        }
        child = CrossoverTunables(parent->second, mate->second, rng, options_.mutator);
      } else {
        child = MutateTunables(parent->second, rng, options_.mutator);
      }
      if (!child.ok()) {
        coordinator_->RecordFailedMutation();
        continue;
      }
      coordinator_->StampChild(*plan, &*child);
      absl::StatusOr<bool> go_on = Offer(*std::move(child), /*commit=*/true);
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) return Summary("interrupted");
    }
    store::RunState final_state = State();
    final_state.set_status_detail(coordinator_->ExplainStop());
    if (absl::Status s = store_.PutRunState(run_id_, final_state); !s.ok()) return s;
    return Summary(std::string(StopReasonName(coordinator_->CheckStop())));
  }

 private:
  // A fresh run: the run record (when absent) and the task, then the stamped seeds in one write with
  // the coordinator's state after stamping.
  absl::Status Start(const std::vector<SeedKernel>& seeds, std::vector<v1::Candidate>* pending) {
    absl::StatusOr<store::RunRecord> run = store_.GetRun(run_id_);
    if (absl::IsNotFound(run.status())) {
      store::RunRecord record;
      record.set_run_id(run_id_);
      record.set_created_unix_ms(NowUnixMs());
      if (absl::Status s = store_.CreateRun(record); !s.ok()) return s;
    } else if (!run.ok()) {
      return run.status();
    }
    if (absl::Status s = store_.PutTask(run_id_, task_); !s.ok()) return s;
    absl::StatusOr<Coordinator> created = Coordinator::Create(task_, options_.coordinator);
    if (!created.ok()) return created.status();
    coordinator_.emplace(*std::move(created));
    absl::StatusOr<std::vector<v1::Candidate>> seeded = SeedCandidates(task_, seeds, options_.mutator);
    if (!seeded.ok()) return seeded.status();
    if (seeded->empty()) {
      return absl::FailedPreconditionError(fmt::format("task {}: no seed applies", task_.name()));
    }
    for (size_t i = 0; i < seeded->size(); ++i) {
      coordinator_->StampSeed(i, &(*seeded)[i]);
      candidates_[(*seeded)[i].id()] = (*seeded)[i];
    }
    candidates_created_ = static_cast<int64_t>(seeded->size());
    store::RunState state = State();
    state.set_status(store::TASK_RUN_STATUS_PENDING);
    if (absl::Status s = store_.CommitCandidates(run_id_, *seeded, state); !s.ok()) return s;
    *pending = *std::move(seeded);
    return absl::OkStatus();
  }

  // A stored run: the coordinator as of the last committed evaluation, every stored candidate (parents
  // of the plans to come), and the seeds after the last evaluated one.
  absl::Status Resume(const store::RunState& stored, std::vector<v1::Candidate>* pending) {
    summary_resumed_ = true;
    absl::StatusOr<v1::Task> stored_task = store_.GetTask(run_id_, task_.name());
    if (!stored_task.ok()) return stored_task.status();
    if (!google::protobuf::util::MessageDifferencer::Equals(*stored_task, task_)) {
      return absl::InvalidArgumentError(
          fmt::format("run {} holds task {} with other content", run_id_, task_.name()));
    }
    absl::StatusOr<coordinator::SearchState> state = ParseSearchState(stored.rng_state());
    if (!state.ok()) return state.status();
    absl::StatusOr<Coordinator> restored = Coordinator::Restore(task_, options_.coordinator, *state);
    if (!restored.ok()) return restored.status();
    coordinator_.emplace(*std::move(restored));
    failed_ = stored.evaluations_failed();
    candidates_created_ = stored.candidates_created();
    absl::StatusOr<std::vector<v1::Candidate>> all = store_.ListCandidates(run_id_, task_.name());
    if (!all.ok()) return all.status();
    std::vector<v1::Candidate> seeds;
    size_t next_seed = 0;
    for (const v1::Candidate& c : *all) {
      candidates_[c.id()] = c;
      if (c.operator_() != v1::MUTATION_OPERATOR_SEED) continue;
      seeds.push_back(c);
      absl::StatusOr<v1::EvalResult> result = store_.GetEvaluation(run_id_, c.id());
      if (result.ok()) {
        next_seed = seeds.size();
      } else if (!absl::IsNotFound(result.status())) {
        return result.status();
      }
    }
    pending->assign(seeds.begin() + static_cast<std::ptrdiff_t>(next_seed), seeds.end());
    return absl::OkStatus();
  }

  // Registers, stores (commit), evaluates and reports one candidate; a duplicate reuses the stored
  // result. False when the evaluation due is past options.stop_after_evaluations (interrupted).
  absl::StatusOr<bool> Offer(v1::Candidate candidate, bool commit) {
    absl::StatusOr<std::optional<std::string>> earlier = coordinator_->RegisterCandidate(candidate);
    if (!earlier.ok()) return earlier.status();
    if (earlier->has_value()) {
      absl::StatusOr<v1::EvalResult> reused = store_.GetEvaluation(run_id_, **earlier);
      if (!reused.ok()) {
        return absl::InternalError(fmt::format("duplicate {} of {} has no stored result: {}", candidate.id(),
                                               **earlier, reused.status().message()));
      }
      return true;
    }
    if (commit) {
      candidates_[candidate.id()] = candidate;
      ++candidates_created_;
      if (absl::Status s = store_.CommitCandidates(run_id_, {candidate}, std::nullopt); !s.ok()) return s;
    }
    if (options_.stop_after_evaluations > 0 && evaluations_this_call_ >= options_.stop_after_evaluations) {
      return false;
    }
    v1::EvalResult result = evaluator_.Evaluate(task_, candidate, task_.seed());
    ++evaluations_this_call_;
    result.set_candidate_id(candidate.id());
    result.set_task_name(task_.name());
    if (!IsCorrectResult(result)) ++failed_;
    absl::StatusOr<ReportOutcome> outcome = coordinator_->ReportResult(candidate, result, Cost{});
    if (!outcome.ok()) return outcome.status();
    if (absl::Status s = store_.CommitEvaluation(run_id_, result, State()); !s.ok()) return s;
    return true;
  }

  store::RunState State() const {
    store::RunState state;
    state.set_task_name(task_.name());
    state.set_status(StatusOf(coordinator_->CheckStop()));
    state.set_generation(static_cast<int32_t>(coordinator_->generation()));
    const coordinator::Spent& spent = coordinator_->spent();
    state.mutable_spent()->set_evaluations(spent.evaluations());
    state.mutable_spent()->set_wall_seconds(spent.wall_seconds());
    state.mutable_spent()->set_money_usd(spent.money_usd());
    state.mutable_spent()->set_evaluations_since_improvement(spent.evaluations_since_improvement());
    state.set_evaluations_failed(failed_);
    state.set_candidates_created(candidates_created_);
    if (const coordinator::Elite* best = coordinator_->archive().best(); best != nullptr) {
      state.set_best_candidate_id(best->candidate_id());
      state.set_best_fitness(best->fitness());
    }
    state.set_rng_state(coordinator_->SaveState().SerializeAsString());
    state.set_updated_unix_ms(NowUnixMs());
    return state;
  }

  SearchSummary Summary(std::string stop_reason) const {
    SearchSummary s;
    if (const coordinator::Elite* best = coordinator_->archive().best(); best != nullptr) {
      s.best_candidate_id = best->candidate_id();
      s.best_fitness = best->fitness();
    }
    s.evaluations = coordinator_->spent().evaluations();
    s.evaluations_this_call = evaluations_this_call_;
    s.duplicates = coordinator_->spent().duplicates();
    s.stop_reason = std::move(stop_reason);
    s.resumed = summary_resumed_;
    return s;
  }

  PopulationStore& store_;
  const std::string& run_id_;
  const v1::Task& task_;
  CandidateEvaluator& evaluator_;
  const SearchLoopOptions& options_;
  std::optional<Coordinator> coordinator_;
  std::map<std::string, v1::Candidate> candidates_;
  int64_t failed_ = 0;
  int64_t candidates_created_ = 0;
  int64_t evaluations_this_call_ = 0;
  bool summary_resumed_ = false;
};

}  // namespace

absl::StatusOr<SearchSummary> RunTaskSearch(PopulationStore& store, const std::string& run_id,
                                            const v1::Task& task, const std::vector<SeedKernel>& seeds,
                                            CandidateEvaluator& evaluator, const SearchLoopOptions& options) {
  if (absl::Status s = options.coordinator.Validate(); !s.ok()) return s;
  return Loop(store, run_id, task, evaluator, options).Run(seeds);
}

}  // namespace sparseditto
