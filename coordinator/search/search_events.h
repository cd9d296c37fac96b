// The search's events: one JSON object per thing that happened (an evaluation committed, a mutation
// proposed, a failure, a finalist attempt, a stop), for people and programs that follow a run
// (`tail -f runs/<run>/events.jsonl | jq`, a report, a dashboard).
//
// The events are NOT the source of truth: the population store is (population_store/). An event is
// emitted after the store write it describes, so a crash between the two leaves the store ahead of
// the events, never behind; a resumed search does not replay the events of what it finds stored, so
// after a crash an event may be missing, and after a crash during an evaluation the evaluation made
// again has its event twice (the first one was never committed). Count from the store when it matters.
//
// Every event carries: "schema" (kEventSchemaVersion), "time" (UTC, RFC 3339 with milliseconds),
// "unix_ms", "type" and, when it is about a task, "task". Types and their fields (search_events.cc
// builds them; the README lists them):
//   start       budgets in force (max_evaluations, max_wall_seconds, target_fitness, ...), resumed
//   evaluation  candidate, parents, operator, mutator, outcome (CORRECT, SLOWER or the failure
//               category), stage, fitness, times [{n, ms, spread}], seconds, evaluations, best_fitness
//   mutation    parents, child (empty when none), mutator, outcome ("new", "duplicate", "failed"), detail
//   failure     candidate (or empty), category, stage, detail (trimmed) — evaluations that failed, and
//               task attempts that failed
//   finalist    candidate, attempt, passed, detail
//   stop        reason (a StopReasonName or "interrupted"; for the run: "signal", with "signal": SIGTERM),
//               detail, evaluations
// Thread-safety: an EventSink is called from the search's thread; JsonlEventFile is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "nlohmann/json.hpp"

namespace sparseditto {

inline constexpr int kEventSchemaVersion = 1;

// An event: a JSON object whose keys keep the order they were written in (schema, time, type first).
using EventJson = nlohmann::ordered_json;

// Where events go. The search never fails because an event could not be written (events are not the
// truth): Emit reports nothing; a sink that fails says so itself (JsonlEventFile::first_error).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // `event` holds "type", "task" and the type's fields; the sink adds schema and time.
  virtual void Emit(EventJson event) = 0;
};

// `runs/<run>/events.jsonl`: one event per line, appended. Each line is written whole with one
// write(2) on a file opened O_APPEND, and fsynced after each evaluation, failure, finalist and stop
// event (mutations ride with the next fsync), so after a crash the file ends with whole lines, except
// at most one last line cut by the crash: Open drops that partial line (and says so in a "resumed"
// event) before appending, so every line of the file parses.
class JsonlEventFile final : public EventSink {
 public:
  // Opens (creating it 0644 when absent) `path` for appending, first cutting a partial last line.
  // Errors: Unavailable naming the path and the system's reason.
  static absl::StatusOr<std::unique_ptr<JsonlEventFile>> Open(const std::string& path);
  ~JsonlEventFile() override;

  void Emit(EventJson event) override;
  // The first write error ("" when none): events after it may be missing.
  std::string first_error() const;
  // Bytes of a partial last line Open dropped (0 when the file ended whole).
  int64_t dropped_bytes() const { return dropped_bytes_; }

 private:
  JsonlEventFile(int fd, std::string path, int64_t dropped)
      : fd_(fd), path_(std::move(path)), dropped_bytes_(dropped) {}
  const int fd_;
  const std::string path_;
  const int64_t dropped_bytes_;
  mutable std::mutex mu_;
  std::string first_error_ ABSL_GUARDED_BY(mu_);
};

// The event of one committed evaluation of `candidate` (its parents, operator and mutator) with
// `result`; `seconds`: the evaluation's wall time; `evaluations`, `best_fitness`: the task's after it.
EventJson EvaluationEvent(const std::string& task, const v1::Candidate& candidate, const v1::EvalResult& result,
                               double seconds, int64_t evaluations, double best_fitness);
// The failure event of a failed evaluation (a result with a failure other than SLOWER); null json otherwise.
EventJson FailureEvent(const std::string& task, const v1::EvalResult& result);
// A mutation's event: `child` (null: none came), outcome "new", "duplicate" or "failed", and `detail`.
EventJson MutationEvent(const std::string& task, const std::vector<std::string>& parents, const std::string& mutator,
                             const v1::Candidate* child, const std::string& outcome, const std::string& detail);
// "CORRECT", "SLOWER" or the failure category's name without its prefix ("COMPILE", "WRONG", ...).
std::string OutcomeName(const v1::EvalResult& result);

}  // namespace sparseditto
