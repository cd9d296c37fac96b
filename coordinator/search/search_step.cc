// One step of the search loop (task_loop.h): plan -> mutate -> dedup -> commit -> evaluate -> report.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "common/shared_gpu.h"
#include "common/status_format.h"
#include "coordinator/search/search_progress.h"
#include "coordinator/search/task_loop.h"
#include "coordinator/search/wall_clock.h"

#include "common/screen_bar.h"
#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<SearchSummary> TaskLoop::RunMutations(std::vector<v1::Candidate> queue) {
  const int64_t window = BatchSize();
  const bool asks = !mutators_->Replayable();  // some plans go to a mutator asked asynchronously
  if (!pool_.has_value()) pool_.emplace(ProposalsInFlight());
  int64_t step = 0;
  if (window > 1 && !queue.empty()) pipeline_.Hint(task_, queue);
  while (true) {
    // The answers that arrived while the loop evaluated: each stored as it is taken in.
    if (absl::Status s = TakeAnswers(pool_->TakeEnded(), &queue); !s.ok()) return s;
    // Top up: new children until the window is full, never past the evaluations left.
    std::vector<v1::Candidate> fresh;
    std::vector<EventJson> news;  // the mutation events of `fresh`, told once they are stored
    // A stop asked for plans nothing into an empty window (a model's call can take minutes); a window
    // begun is topped up as an uninterrupted run would, so the resumed run plans from the same point.
    const bool stop_before_planning = queue.empty() && options_.stop_requested && options_.stop_requested();
    while (!stop_before_planning && coordinator_->CheckStop() == StopReason::kNone) {
      const int64_t left = std::min(coordinator_->max_evaluations() - coordinator_->spent().evaluations(),
                                    EvaluationsLeftInWall());
      const int64_t stored = static_cast<int64_t>(queue.size() + fresh.size());
      const int64_t held = stored + pool_->size() + static_cast<int64_t>(ask_again_.size());
      if (!asks && held >= std::min<int64_t>(window, std::max<int64_t>(left, 1))) break;
      // Asking: the window of stored children after the head, the calls in flight and the evaluations
      // they will take all bounded; a plan refused for its share of the budget waits for the others.
      if (asks && (held >= std::max<int64_t>(left, 1) || stored > std::max<int64_t>(window, pool_->capacity()) ||
                   pool_->full() ||
                   (ask_alone_ && pool_->size() > 0))) {
        break;
      }
      if (step++ >= options_.max_steps) {
        return absl::InternalError(fmt::format("task {}: no stop after {} steps", task_.name(), step - 1));
      }
      absl::StatusOr<MutationPlan> plan = NextPlan();
      if (absl::IsFailedPrecondition(plan.status())) continue;  // the step is used; the next draws anew
      if (!plan.ok()) return plan.status();
      Mutator& mutator = mutators_->For(plan->mutator_kind);
      if (!mutator.Replayable()) {
        Ask(*plan, mutator);
        continue;
      }
      absl::StatusOr<Proposal> proposal = mutator.Propose(*plan, Context());
      if (!proposal.ok()) return proposal.status();
      std::vector<v1::Candidate> pending = queue;
      pending.insert(pending.end(), fresh.begin(), fresh.end());
      absl::StatusOr<std::optional<v1::Candidate>> child =
          TakeIn(*plan, mutator, *std::move(proposal), /*shared=*/false, queue, pending);
      if (!child.ok()) return child.status();
      if (child->has_value()) {
        news.push_back(MutationEvent(task_.name(), ParentsOf(*plan), plan->mutator, &**child, "new", ""));
        fresh.push_back(**std::move(child));
      }
    }
    if (!fresh.empty()) {
      for (const v1::Candidate& c : fresh) candidates_[c.id()] = c;
      queue.insert(queue.end(), fresh.begin(), fresh.end());
      if (absl::Status s = records_.CommitCandidates(fresh, State(queue[0].id(), Rest(queue, 1))); !s.ok()) return s;
      for (EventJson& event : news) Emit(std::move(event));  // after the write that stored the children
      news.clear();
      if (window > 1) pipeline_.Hint(task_, fresh);
    }
    if (queue.empty()) {
      if (options_.stop_requested && options_.stop_requested()) return Stop("interrupted");
      if (pool_->size() > 0) {  // nothing to evaluate until an answer comes
        if (absl::Status s = TakeAnswers(pool_->AwaitEnded(), &queue); !s.ok()) return s;
        continue;
      }
      if (coordinator_->CheckStop() != StopReason::kNone) {
        ask_again_.clear();  // the search is over: nothing more is asked
        break;
      }
      continue;
    }
    if (ShouldStop()) return Stop("interrupted");  // the queue is in flight as committed last
    if (absl::Status s = SubmitAhead(queue); !s.ok()) return s;
    const v1::Candidate head = queue.front();
    queue.erase(queue.begin());
    // While the head is evaluated, the answers that arrive are taken in and stored at once (AwaitJob).
    serving_ = Serving{.queue = &queue, .evaluating = head.id(), .arrived = {}, .error = absl::OkStatus()};
    absl::Status evaluated = EvaluateAndCommit(head, Rest(queue, 0));
    serving_ = {};
    if (!evaluated.ok()) return evaluated;
  }
  return Finish();
}

int64_t TaskLoop::EvaluationsLeftInWall() const {
  return EvaluationsTheWallHolds(coordinator_->max_wall_seconds(), coordinator_->spent().wall_seconds(),
                                 throughput_.evaluator_seconds, evaluations_this_call_);
}

absl::StatusOr<bool> TaskLoop::RegisterOrReuse(const v1::Candidate& candidate,
                                               const std::vector<v1::Candidate>& pending,
                                               const std::string& evaluating) {
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
    if (!maker->Replayable()) {  // `pending` is the stored window then (its children come one by one)
      const store::RunState state = !evaluating.empty() ? State(evaluating, Rest(pending, 0))
                                    : pending.empty()   ? State("")
                                                        : State(pending[0].id(), Rest(pending, 1));
      if (absl::Status s = records_.Write(state); !s.ok()) return s;
    }
  }
  return false;
}

absl::Status TaskLoop::EvaluateAndCommit(const v1::Candidate& candidate, const std::vector<std::string>& still_due) {
  const SteadyClock::time_point asked = SteadyClock::now();
  v1::EvalResult result = EvaluateWithScreen(candidate);
  throughput_.evaluator_seconds += std::chrono::duration<double>(SteadyClock::now() - asked).count();
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
  if (!serving_.error.ok()) return serving_.error;  // storing an answer taken in during the evaluation failed
  std::vector<std::string> due = still_due;
  due.insert(due.end(), serving_.arrived.begin(), serving_.arrived.end());  // stored during the evaluation
  serving_.arrived.clear();
  const store::RunState after =
      due.empty() ? State("") : State(due[0], std::vector<std::string>(due.begin() + 1, due.end()));
  result.set_committed_unix_ms(NowUnixMs());
  result.set_search_wall_seconds(coordinator_->spent().wall_seconds());
  if (absl::Status s = records_.CommitEvaluation(result, after); !s.ok()) return s;
  bars_.erase(candidate.id());
  NoteElite(result);
  if (options_.events != nullptr) {
    const coordinator::Elite* best = coordinator_->archive().best();
    Emit(EvaluationEvent(task_.name(), candidate, result, std::chrono::duration<double>(now - asked).count(),
                         coordinator_->spent().evaluations(), best == nullptr ? 0 : best->fitness()));
    Emit(FailureEvent(task_.name(), result));
  }
  if (options_.on_evaluation) {
    SearchProgress progress;
    progress.task_name = task_.name();
    progress.candidate_id = candidate.id();
    progress.evaluations = coordinator_->spent().evaluations();
    progress.max_evaluations = coordinator_->max_evaluations();
    progress.evaluations_this_call = evaluations_this_call_;
    progress.seconds_this_call = std::chrono::duration<double>(now - started_).count();
    progress.exhausted_spaces = static_cast<int64_t>(coordinator_->exhausted_spaces().size());
    if (coordinator_->max_wall_seconds() > 0) {
      progress.wall_seconds_left = std::max(0.0, coordinator_->max_wall_seconds() - coordinator_->spent().wall_seconds());
    }
    if (const coordinator::Elite* best = coordinator_->archive().best(); best != nullptr) {
      progress.best_candidate_id = best->candidate_id();
      progress.best_fitness = best->fitness();
    }
    options_.on_evaluation(progress);
  }
  return absl::OkStatus();
}

v1::EvaluationJob TaskLoop::JobFor(const v1::Candidate& candidate, std::optional<EvaluationKind> kind) {
  const v1::MutationOperator op = candidate.operator_();
  const bool screened = options_.screen_margin > 0 && op != v1::MUTATION_OPERATOR_SEED && op != v1::MUTATION_OPERATOR_PLAN;
  const EvaluationKind chosen = kind.value_or(screened ? EvaluationKind::kScreened : EvaluationKind::kFull);
  const v1::ScreenBar* bar = nullptr;
  if (chosen == EvaluationKind::kScreened) {
    bar = &bars_.try_emplace(candidate.id(), EliteBar()).first->second;  // the stored bar, else the elite's now
  }
  return MakeEvaluationJob(task_, candidate, task_.seed(), chosen, bar);
}

absl::Status TaskLoop::SubmitAhead(const std::vector<v1::Candidate>& due) {
  const size_t ahead = std::min(due.size(), static_cast<size_t>(std::max(pipeline_.Slots(), 1)));
  // One batch: a durable pipeline journals all of them in one write.
  std::vector<const v1::Candidate*> candidates;
  std::vector<v1::EvaluationJob> jobs;
  for (size_t i = 0; i < ahead; ++i) {
    if (submitted_.contains(due[i].id())) continue;
    candidates.push_back(&due[i]);
    jobs.push_back(JobFor(due[i]));
  }
  if (jobs.empty()) return absl::OkStatus();
  std::vector<absl::StatusOr<v1::EvaluationJob>> queued = pipeline_.SubmitAll(std::move(jobs));
  absl::Status first_error;
  for (size_t i = 0; i < candidates.size() && i < queued.size(); ++i) {
    if (queued[i].ok()) {
      submitted_.emplace(candidates[i]->id(), *std::move(queued[i]));
    } else if (first_error.ok()) {
      first_error = absl::Status(queued[i].status().code(), fmt::format("task {}: the evaluation job of {}: {}",
                                                                        task_.name(), candidates[i]->id(),
                                                                        queued[i].status().message()));
    }
  }
  return first_error;
}

v1::EvalResult TaskLoop::AwaitJob(const v1::Candidate& candidate, std::optional<EvaluationKind> kind) {
  v1::EvaluationJob job;
  if (auto it = submitted_.find(candidate.id()); it != submitted_.end() && !kind.has_value()) {
    job = std::move(it->second);
    submitted_.erase(it);
  } else {
    absl::StatusOr<v1::EvaluationJob> queued = pipeline_.Submit(JobFor(candidate, kind));
    if (!queued.ok()) {
      return JobEndedWithoutResult(JobFor(candidate, kind), fmt::format("the evaluation job was not queued: {}",
                                                                        std::string(queued.status().message())));
    }
    job = *std::move(queued);
  }
  return AwaitServing(job);
}

v1::EvalResult TaskLoop::EvaluateWithScreen(const v1::Candidate& candidate) {
  auto account = [this](const v1::EvalResult& r) {
    throughput_.gpu_seconds += r.gpu_seconds();
    for (const auto& [stage, seconds] : r.stage_seconds()) throughput_.stage_seconds[stage] += seconds;
  };
  v1::EvalResult screened = AwaitJob(candidate);
  account(screened);
  auto bar = bars_.find(candidate.id());
  if (bar == bars_.end()) return screened;  // a seed or the plan, or no screen: in full
  if (screened.timed_in_full_after_screen()) {  // the evaluator went on in full itself
    ++throughput_.screened;
    ++throughput_.timed_in_full;
    return screened;
  }
  if (!screened.timing_screen()) return screened;  // an evaluator without a screen timed it in full
  ++throughput_.screened;
  const std::vector<v1::TimingStats> timings(screened.timings().begin(), screened.timings().end());
  // Against the bar the screen was submitted with: bars only rise, so a child not near it is not near
  // today's either, and the choice stays what the evaluator itself would have made.
  if (!NearScreenBar(screened.fitness(), timings, bar->second)) return screened;
  ++throughput_.timed_in_full;
  v1::EvalResult full = AwaitJob(candidate, EvaluationKind::kFull);
  account(full);
  return full;
}

v1::ScreenBar TaskLoop::EliteBar() const {
  v1::ScreenBar bar = full_timings_;  // its per-n times; the fitness is the archive's best's
  bar.set_margin(options_.screen_margin);
  const coordinator::Elite* best = coordinator_->archive().best();
  bar.set_elite_fitness(best != nullptr ? best->fitness() : 0);
  return bar;
}

void TaskLoop::NoteElite(const v1::EvalResult& result) { NoteFullTiming(result, &full_timings_); }

}  // namespace sparseditto
