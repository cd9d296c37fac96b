#include "coordinator/search/search_loop.h"

#include <algorithm>
#include <utility>

#include "common/status_format.h"
#include "coordinator/search/local_pipeline.h"
#include "coordinator/search/task_loop.h"
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
    case StopReason::kTarget:
      return store::TASK_RUN_STATUS_DONE;
    default:
      return store::TASK_RUN_STATUS_BUDGET_EXHAUSTED;
  }
}

}  // namespace

absl::StatusOr<SearchSummary> TaskLoop::Run(const std::vector<SeedKernel>& seeds) {
  absl::StatusOr<std::optional<store::RunState>> read = records_.State();
  if (!read.ok()) return read.status();
  const std::optional<store::RunState>& stored = *read;
  // A state without a coordinator state was written before the search began (a failed first attempt).
  std::vector<v1::Candidate> pending_seeds;
  if (stored.has_value() && !stored->search_state().empty()) {
    attempts_ = std::max(stored->attempts(), 1);
    if (absl::Status s = Resume(*stored, &pending_seeds); !s.ok()) return s;
    EmitStart();
    if (!in_flight_.empty()) {
      summary_in_flight_ = in_flight_;
      std::vector<v1::Candidate> due = {candidates_.at(in_flight_)};
      for (const std::string& id : in_flight_queue_) due.push_back(candidates_.at(id));
      // Children in flight are the mutation loop's window: it goes on where it stopped, topping the
      // window up at the same points as an uninterrupted run. A seed (or the plan) is evaluated now.
      const v1::MutationOperator kind = due[0].operator_();
      if (kind != v1::MUTATION_OPERATOR_SEED && kind != v1::MUTATION_OPERATOR_PLAN) {
        return RunMutations(std::move(due));
      }
      for (size_t i = 0; i < due.size(); ++i) {
        if (absl::Status s = EvaluateAndCommit(due[i], Rest(due, i + 1)); !s.ok()) return s;
      }
    }
  } else {
    attempts_ = stored.has_value() ? std::max(stored->attempts(), 1) : 1;
    if (absl::Status s = Start(seeds, &pending_seeds); !s.ok()) return s;
    EmitStart();
  }
  if (BatchSize() > 1) pipeline_.Hint(task_, pending_seeds);
  for (size_t i = 0; i < pending_seeds.size(); ++i) {
    if (coordinator_->CheckStop() != StopReason::kNone) break;
    absl::StatusOr<bool> go_on = OfferSeed(pending_seeds[i], {pending_seeds.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                                              pending_seeds.end()});
    if (!go_on.ok()) return go_on.status();
    if (!*go_on) return Stop("interrupted");
  }
  if (coordinator_->archive().best() == nullptr && coordinator_->CheckStop() == StopReason::kNone) {
    return absl::FailedPreconditionError(
        fmt::format("task {}: no seed is correct, nothing to mutate", task_.name()));
  }
  return RunMutations();
}

absl::Status TaskLoop::Start(const std::vector<SeedKernel>& seeds, std::vector<v1::Candidate>* pending) {
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
    return absl::FailedPreconditionError(fmt::format(
        "task {}: no seed applies{}", task_.name(),
        task_.layout() == v1::LAYOUT_NK ? " (layout nk: only seeds whose sparseditto_layouts() names SD_LAYOUT_NK; "
                                          "kernels/seed_library.h)"
                                        : ""));
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

absl::Status TaskLoop::Resume(const store::RunState& stored, std::vector<v1::Candidate>* pending) {
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
  for (const std::string& bytes : stored.in_flight_plans()) {
    absl::StatusOr<MutationPlan> plan = PlanFromRecord(bytes);
    if (!plan.ok()) return absl::DataLossError(fmt::format("task {}: {}", task_.name(), plan.status().message()));
    ask_again_.push_back(*std::move(plan));
  }
  for (const auto& [id, bytes] : stored.in_flight_screen_bars()) {
    v1::ScreenBar bar;
    if (!bar.ParseFromString(bytes)) {
      return absl::DataLossError(fmt::format("task {}: the screen bar of {} in flight does not parse", task_.name(), id));
    }
    bars_[id] = bar;
  }
  absl::StatusOr<std::vector<v1::Candidate>> all = records_.Candidates();
  if (!all.ok()) return all.status();
  std::vector<v1::Candidate> seeds;
  size_t next_seed = 0;
  for (const v1::Candidate& c : *all) {
    candidates_[c.id()] = c;
    if (absl::StatusOr<v1::EvalResult> r = records_.Evaluation(c.id()); r.ok()) NoteElite(*r);
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

absl::StatusOr<bool> TaskLoop::OfferSeed(const v1::Candidate& seed, const std::vector<v1::Candidate>& next) {
  absl::StatusOr<bool> unseen = RegisterOrReuse(seed);
  if (!unseen.ok()) return unseen.status();
  if (!*unseen) return true;
  if (absl::Status s = records_.Write(State(seed.id())); !s.ok()) return s;
  if (ShouldStop()) return false;
  std::vector<v1::Candidate> due = {seed};
  due.insert(due.end(), next.begin(), next.end());
  if (absl::Status s = SubmitAhead(due); !s.ok()) return s;
  if (absl::Status s = EvaluateAndCommit(seed); !s.ok()) return s;
  return true;
}

absl::Status TaskLoop::MakeMutators() {
  builtin_.emplace(mutator_options_);
  absl::StatusOr<MutatorSet> set = MutatorSet::Create(&*builtin_, options_.mutators);
  if (!set.ok()) return set.status();
  mutators_.emplace(*std::move(set));
  return absl::OkStatus();
}

MutationContext TaskLoop::Context() const {
  MutationContext context{.task = task_,
                          .candidates = candidates_,
                          .known = [this](const std::string& hash) { return coordinator_->KnowsSource(hash); },
                          .evaluation = [this](const std::string& id) { return records_.Evaluation(id); }};
  const Allowance left = BudgetLeft();
  const Allowance reserved = pool_.has_value() ? pool_->Reserved() : Allowance();
  if (left.tokens) context.tokens_left = *left.tokens - reserved.tokens.value_or(0);
  if (left.usd) context.usd_left = *left.usd - reserved.usd.value_or(0);
  return context;
}

store::RunState TaskLoop::State(const std::string& in_flight, const std::vector<std::string>& queue) const {
  store::RunState state;
  for (const std::string& id : queue) state.add_in_flight_queue(id);
  for (const MutationPlan& plan : ask_again_) state.add_in_flight_plans(PlanRecord(plan));
  if (pool_.has_value()) {
    for (const MutationPlan& plan : pool_->Plans()) state.add_in_flight_plans(PlanRecord(plan));
  }
  auto keep_bar = [&](const std::string& id) {
    if (auto it = bars_.find(id); it != bars_.end()) (*state.mutable_in_flight_screen_bars())[id] = it->second.SerializeAsString();
  };
  if (!in_flight.empty()) keep_bar(in_flight);
  for (const std::string& id : queue) keep_bar(id);
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

void TaskLoop::EmitStart() {
  const v1::Budget& b = task_.budget();
  Emit({{"type", "start"},
        {"task", task_.name()},
        {"resumed", summary_resumed_},
        {"in_flight", in_flight_},
        {"evaluations", coordinator_->spent().evaluations()},
        {"max_evaluations", coordinator_->max_evaluations()},
        {"max_wall_seconds", b.max_wall_seconds()},
        {"target_fitness", b.target_fitness()},
        {"stagnation_evaluations", b.stagnation_evaluations()},
        {"max_tokens", b.max_tokens()},
        {"max_money_usd", b.max_money_usd()}});
}

SearchSummary TaskLoop::Stop(std::string stop_reason) {
  SearchSummary s = Summary(std::move(stop_reason));
  Emit({{"type", "stop"},
        {"task", task_.name()},
        {"reason", s.stop_reason},
        {"detail", s.stop_detail},
        {"evaluations", s.evaluations},
        {"evaluations_this_call", s.evaluations_this_call},
        {"best_candidate", s.best_candidate_id},
        {"best_fitness", s.best_fitness}});
  return s;
}

SearchSummary TaskLoop::Summary(std::string stop_reason) const {
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
  s.throughput = throughput_;
  s.throughput.wall_seconds = std::chrono::duration<double>(SteadyClock::now() - started_).count();
  return s;
}

absl::StatusOr<SearchSummary> RunTaskSearch(PopulationStore& store, const std::string& run_id,
                                            const v1::Task& task, const std::vector<SeedKernel>& seeds,
                                            CandidateEvaluator& evaluator, const SearchLoopOptions& options) {
  if (absl::Status s = options.coordinator.Validate(); !s.ok()) return s;
  if (options.pipeline != nullptr) return TaskLoop(store, run_id, task, evaluator, *options.pipeline, options).Run(seeds);
  // Every evaluation as a job on the queue distributed mode serves, one at a time (local_pipeline.h).
  LocalEvaluationPipeline pipeline({&evaluator});
  return TaskLoop(store, run_id, task, evaluator, pipeline, options).Run(seeds);
}

}  // namespace sparseditto
