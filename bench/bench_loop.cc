#include "bench/bench_loop.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>

#include "bench/bench_partial.h"
#include "bench/bench_resume.h"
#include "common/eval_outcome.h"
#include "common/screen_bar.h"
#include "coordinator/search/run_artifacts.h"
#include "coordinator/search/search_events.h"
#include "fmt/format.h"
#include "mutators/builtin/source_hash.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void Say(std::ostream* to, const std::string& text) {
  if (to != nullptr) *to << text << std::flush;
}

// Appends the error of `s` to `errors`, once (a folder that cannot be written fails every write to it).
void AddError(std::string* errors, const absl::Status& s) {
  if (s.ok() || errors->find(std::string(s.message())) != std::string::npos) return;
  *errors += (errors->empty() ? "" : "; ") + std::string(s.message());
}

// One task's share of the bench: the seeds that apply, and what an interrupted bench kept of it.
struct TaskPlan {
  std::vector<const SeedKernel*> seeds;
  std::map<std::string, KeptEvaluation> kept;  // by seed, only those whose source is unchanged
  absl::StatusOr<fs::path> partial_path = absl::UnknownError("not made");
};

v1::Candidate SeedCandidate(const v1::Task& task, const SeedKernel& seed) {
  v1::Candidate c;
  c.set_id(seed.name + "@" + task.name());
  c.set_task_name(task.name());
  c.set_source(seed.source);
  c.set_seed_name(seed.name);
  c.set_operator_(v1::MUTATION_OPERATOR_SEED);
  return c;
}

TaskPlan PlanTask(const v1::Task& task, const std::vector<SeedKernel>& seeds, const BenchLoopOptions& o) {
  TaskPlan plan;
  plan.seeds = ApplicableSeeds(task, seeds);
  plan.partial_path = PartialResultsPath(o.out_dir, task.name());
  if (!o.resume || !plan.partial_path.ok()) return plan;
  absl::StatusOr<std::vector<KeptEvaluation>> kept = ReadPartialResults(*plan.partial_path, task.name());
  if (!kept.ok()) {
    if (!absl::IsNotFound(kept.status())) {
      Say(o.log, fmt::format("{}: kept evaluations unusable, evaluating its seeds again: {}\n", task.name(),
                             std::string(kept.status().message())));
    }
    return plan;
  }
  for (KeptEvaluation& k : *kept) {
    const auto seed = std::find_if(plan.seeds.begin(), plan.seeds.end(),
                                   [&k](const SeedKernel* s) { return s->name == k.seed; });
    if (seed != plan.seeds.end() && SourceHash((*seed)->source) == k.source_hash) plan.kept[k.seed] = std::move(k);
  }
  return plan;
}

// The table so far, each file whole or not at all (a kill mid-write leaves the previous one, which a
// resume reads).
void WriteBenchFiles(const fs::path& dir, const std::vector<BenchRow>& rows, const std::string& summary,
                     std::string* errors) {
  AddError(errors, WriteFileAtomically((dir / "bench.txt").string(), FormatBenchTable(rows) + "\n" + summary));
  AddError(errors, WriteFileAtomically((dir / "bench.csv").string(), BenchCsv(rows)));
  AddError(errors, WriteFileAtomically((dir / "bench.json").string(), BenchJson(rows).dump(2) + "\n"));
}

EventJson RowsEvent(const std::string& task, const std::vector<BenchRow>& rows) {
  EventJson list = EventJson::array();
  for (const BenchRow& r : rows) {
    list.push_back({{"n", r.n},
                    {"best_kernel", r.best_kernel},
                    {"kernel_ms", r.kernel_ms},
                    {"speedup_over_best_baseline", r.speedup_over_best_baseline}});
  }
  return {{"type", "rows"}, {"task", task}, {"rows", list}};
}

bool Faulted(const v1::EvalResult& r) {
  return r.failure() == v1::FAILURE_CATEGORY_CRASH || r.failure() == v1::FAILURE_CATEGORY_TIMEOUT;
}

// The judge's bracket disagreed with the host's times (problem_run_timing.cc), not a prepare refusal.
bool RejectedAtTiming(const v1::EvalResult& r) {
  return r.failure() == v1::FAILURE_CATEGORY_REJECTED && r.stage_reached() == v1::EVAL_STAGE_TIMING;
}

}  // namespace

absl::StatusOr<std::vector<v1::Task>> SelectBenchTasks(const std::vector<v1::Task>& suite,
                                                       const std::string& name_filter) {
  std::regex filter;
  try {
    filter = std::regex(name_filter.empty() ? ".*" : name_filter);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(fmt::format("task name filter '{}': {}", name_filter, e.what()));
  }
  std::vector<v1::Task> tasks;
  for (const v1::Task& task : suite) {
    if (std::regex_search(task.name(), filter)) tasks.push_back(task);
  }
  return tasks;
}

std::vector<const SeedKernel*> ApplicableSeeds(const v1::Task& task, const std::vector<SeedKernel>& seeds) {
  std::vector<const SeedKernel*> out;
  for (const SeedKernel& seed : seeds) {
    if (SeedAppliesTo(seed, task)) out.push_back(&seed);
  }
  return out;
}

std::string BenchSummary(const std::vector<BenchRow>& rows) {
  std::string summary;
  for (const char* dtype : {"fp32", "fp16", "bf16"}) {
    std::vector<BenchRow> of_dtype;
    for (const BenchRow& r : rows) {
      if (r.dtype == dtype) of_dtype.push_back(r);
    }
    if (of_dtype.empty()) continue;
    summary += fmt::format("{}: geomean speedup of the best seed over the best baseline {:.2f}x, over cuSPARSE CSR "
                           "{:.2f}x, over cuBLAS dense {:.2f}x ({} rows)\n",
                           dtype, GeomeanSpeedup(of_dtype), GeomeanSpeedup(of_dtype, "cusparse_csr"),
                           GeomeanSpeedup(of_dtype, "cublas_dense"), of_dtype.size());
  }
  return summary;
}

absl::StatusOr<BenchLoopOutcome> RunBenchLoop(const std::vector<v1::Task>& suite, const std::vector<v1::Task>& selected,
                                              const std::vector<SeedKernel>& seeds, CandidateEvaluator& evaluator,
                                              const BenchLoopOptions& o) {
  if (o.out_dir.empty()) return absl::InvalidArgumentError("bench: no output folder");
  if (o.compile_ahead_tasks < 1) {
    return absl::InvalidArgumentError(fmt::format("bench: compile_ahead_tasks {} < 1", o.compile_ahead_tasks));
  }
  const fs::path dir(o.out_dir);
  BenchLoopOutcome out;
  std::vector<v1::Task> tasks = selected;
  if (o.resume) {
    absl::StatusOr<std::vector<BenchRow>> kept = ReadBenchRows((dir / "bench.json").string());
    if (!kept.ok() && !absl::IsNotFound(kept.status())) {
      return absl::InvalidArgumentError(fmt::format("{} (left as it is)", std::string(kept.status().message())));
    }
    if (kept.ok()) out.rows = OrderLikeSuite(*kept, suite);
    out.rows_kept = static_cast<int64_t>(out.rows.size());
    const size_t due_before = tasks.size();
    std::erase_if(tasks, [&out](const v1::Task& task) { return BenchTaskDone(task, out.rows); });
    Say(o.log, fmt::format("resuming {}: {} rows kept; {} of {} tasks done, {} to bench\n", o.out_dir,
                           out.rows.size(), due_before - tasks.size(), due_before, tasks.size()));
    if (!out.rows.empty()) Say(o.table, FormatBenchTable(out.rows));
  }
  out.tasks_due = static_cast<int64_t>(tasks.size());
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return absl::UnavailableError(fmt::format("bench: cannot make {}: {}", o.out_dir, error.message()));
  if (!o.resume) {
    fs::remove_all(dir / "bench-partial", error);  // an earlier bench's evaluations belong to no table of this one
    if (error) {
      return absl::UnavailableError(
          fmt::format("bench: cannot clear {}: {}", (dir / "bench-partial").string(), error.message()));
    }
  }
  absl::StatusOr<std::unique_ptr<JsonlEventFile>> events = JsonlEventFile::Open((dir / "events.jsonl").string());
  if (!events.ok()) return events.status();
  EventSink& sink = **events;
  sink.Emit({{"type", "start"},
             {"command", "bench"},
             {"resumed", o.resume},
             {"tasks", tasks.size()},
             {"rows_kept", out.rows_kept},
             {"seeds", seeds.size()}});

  std::vector<TaskPlan> plans;
  for (const v1::Task& task : tasks) plans.push_back(PlanTask(task, seeds, o));
  auto stop = [&o] { return o.stop_requested && o.stop_requested(); };
  std::map<std::string, int> faults;  // by seed, over the whole bench
  uint64_t check_seed = 1;
  size_t prefetched = 0;  // tasks [0, prefetched) were handed to Prefetch
  for (size_t t = 0; t < tasks.size() && !out.interrupted; ++t) {
    const v1::Task& task = tasks[t];
    TaskPlan& plan = plans[t];
    for (; prefetched < tasks.size() && prefetched < t + static_cast<size_t>(o.compile_ahead_tasks); ++prefetched) {
      std::vector<v1::Candidate> ahead;
      for (const SeedKernel* seed : plans[prefetched].seeds) {
        if (!plans[prefetched].kept.contains(seed->name)) ahead.push_back(SeedCandidate(tasks[prefetched], *seed));
      }
      if (!ahead.empty()) evaluator.Prefetch(tasks[prefetched], ahead);
    }
    if (stop()) {
      out.interrupted = true;
      break;
    }
    if (absl::Status s = evaluator.SetUp(task); !s.ok()) {
      Say(o.log, fmt::format("{}: set-up failed: {}\n", task.name(), std::string(s.message())));
      sink.Emit({{"type", "failure"}, {"task", task.name()}, {"candidate", ""}, {"category", "TASK_ATTEMPT"},
                 {"stage", "SETUP"}, {"detail", std::string(s.message()).substr(0, 2000)}});
      ++out.tasks_failed;
      continue;
    }
    const v1::SetupTaskReply setup = evaluator.SetupReply();
    std::vector<KeptEvaluation> done;  // this task's evaluations, kept ones first, in seed order
    double best_fitness = 0;
    v1::ScreenBar bar;  // the task's best full timings so far (screen_margin)
    bar.set_margin(o.screen_margin);
    auto note = [&](const KeptEvaluation& k) {
      if (Faulted(k.result)) ++faults[k.seed];
      if (IsCorrect(k.result)) best_fitness = std::max(best_fitness, k.result.fitness());
      NoteFullTiming(k.result, &bar);
    };
    for (const SeedKernel* seed : plan.seeds) {
      if (auto it = plan.kept.find(seed->name); it != plan.kept.end()) {
        done.push_back(it->second);
        note(done.back());
        ++out.evaluations_kept;
      }
    }
    if (!done.empty()) {
      Say(o.log, fmt::format("{}: {} evaluation{} kept from the bench that was cut short\n", task.name(), done.size(),
                             done.size() == 1 ? "" : "s"));
    }
    for (const SeedKernel* seed : plan.seeds) {
      if (plan.kept.contains(seed->name)) continue;
      if (o.max_faults > 0 && faults[seed->name] >= o.max_faults) {
        const std::string why = fmt::format("skipped after {} crashes or timeouts", faults[seed->name]);
        Say(o.log, fmt::format("  {} on {}: {}\n", seed->name, task.name(), why));
        sink.Emit({{"type", "skipped"}, {"task", task.name()}, {"seed", seed->name}, {"detail", why}});
        continue;
      }
      if (stop()) {
        out.interrupted = true;
        break;
      }
      const v1::Candidate candidate = SeedCandidate(task, *seed);
      const Clock::time_point asked = Clock::now();
      const auto evaluate = [&] {
        v1::EvalResult r;
        if (o.finalist) {
          r = evaluator.EvaluateFinalist(task, candidate, check_seed++);
        } else if (o.screen_margin > 0) {
          r = evaluator.EvaluateScreened(task, candidate, check_seed++, bar);
          if (r.timing_screen() && NearScreenBar(r.fitness(), {r.timings().begin(), r.timings().end()}, bar)) {
            r = evaluator.Evaluate(task, candidate, check_seed++);  // near the best: timed in full after all
          }
        } else {
          r = evaluator.Evaluate(task, candidate, check_seed++);
        }
        return r;
      };
      // Each evaluation is counted (returning its seconds since asked) and emitted: the evaluation, then its
      // failure, if any.
      const auto count = [&] {
        ++out.evaluations;
        return std::chrono::duration<double>(Clock::now() - asked).count();
      };
      const auto emit = [&](const v1::EvalResult& r, double seconds) {
        sink.Emit(EvaluationEvent(task.name(), candidate, r, seconds, out.evaluations, best_fitness));
        if (EventJson failure = FailureEvent(task.name(), r); !failure.is_null()) sink.Emit(std::move(failure));
      };
      v1::EvalResult r = evaluate();
      for (int retry = 0; retry < o.timing_rejection_retries && RejectedAtTiming(r) && !stop(); ++retry) {
        const double seconds = count();
        Say(o.log, fmt::format("  {} on {}: REJECTED at timing ({}); evaluated again\n", seed->name, task.name(),
                               r.failure_detail().substr(0, 300)));
        emit(r, seconds);
        r = evaluate();
      }
      const double seconds = count();
      if (!IsCorrect(r)) {
        Say(o.log, fmt::format("  {} on {}: {}: {}\n", seed->name, task.name(), v1::FailureCategory_Name(r.failure()),
                               r.failure_detail().substr(0, 300)));
      }
      done.push_back({.seed = seed->name, .source_hash = SourceHash(seed->source), .result = r});
      note(done.back());
      // The kept evaluation first, then its events (events.jsonl is not the truth, search_events.h).
      if (plan.partial_path.ok()) {
        AddError(&out.file_errors, WritePartialResults(*plan.partial_path, task.name(), done));
      } else {
        AddError(&out.file_errors, plan.partial_path.status());
      }
      emit(r, seconds);
    }
    if (out.interrupted) break;  // the task's rows wait for the resume; its evaluations are kept
    std::vector<v1::EvalResult> results;  // named by the seed in the table
    for (const KeptEvaluation& k : done) {
      results.push_back(k.result);
      results.back().set_candidate_id(k.seed);
    }
    const std::vector<BenchRow> rows = MakeBenchRows(task, setup, results, setup.matrix_rows(), setup.matrix_cols());
    Say(o.table, FormatBenchTable(rows));
    out.rows.insert(out.rows.end(), rows.begin(), rows.end());
    out.rows = OrderLikeSuite(out.rows, suite);
    ++out.tasks_benched;
    WriteBenchFiles(dir, out.rows, "", &out.file_errors);
    if (plan.partial_path.ok()) fs::remove(*plan.partial_path, error);  // its rows hold it now
    sink.Emit(RowsEvent(task.name(), rows));
  }
  fs::remove(dir / "bench-partial", error);  // when empty: nothing of an unfinished task is kept
  out.summary = BenchSummary(out.rows);
  Say(o.table, "\n" + out.summary);
  WriteBenchFiles(dir, out.rows, out.summary, &out.file_errors);
  sink.Emit({{"type", "stop"},
             {"reason", out.interrupted ? "interrupted" : "done"},
             {"detail", out.interrupted ? "stopped before an evaluation; --resume goes on from there" : ""},
             {"evaluations", out.evaluations},
             {"tasks_benched", out.tasks_benched},
             {"tasks_failed", out.tasks_failed},
             {"rows", out.rows.size()}});
  out.events_error = (*events)->first_error();
  return out;
}

}  // namespace sparseditto
