// The runs a coordinator serves (issue 25): clients submit a batch of tasks as a run (ClientService,
// client_service.h), the coordinator searches the queued runs one after another (Next, Finish), and
// each run's events (progress, result lines, its end) are kept for the clients that watch it.
//
// Durability: Submit writes <dir>/<sequence>.run (a QueuedRun, job_journal.proto) before it answers,
// and every change of a run's state rewrites that file (through a temporary file and a rename), so a
// coordinator killed and started again on the same dir has every run back: a run that was running is
// queued again first (its search resumes from its store), queued runs keep their order, ended runs
// keep their state. Events are in memory only: a watcher of a restarted coordinator sees the events
// from the restart on (the run's status, GetRunStatus, is in its store).
//
// Thread-safety: every method may be called from any thread (the gRPC handlers, the search's thread).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "job_journal.pb.h"
#include "services.pb.h"

namespace sparseditto {

struct RunQueueOptions {
  // The queue's folder (created if missing): the coordinator's state dir's runs/.
  std::string dir;
  // Runs queued and not started at most: 64, so that a client cannot fill the coordinator's disk or
  // queue a year of searches by mistake; more are RESOURCE_EXHAUSTED until some end.
  int max_queued = 64;
  // Tasks in one run at most: 256, far above a suite (the DLMC suite is 36 tasks).
  int max_tasks = 256;
  // Events kept per run for its watchers: 4096, the oldest dropped first (progress events of one task
  // in a row are coalesced into the latest, so this holds hours of a search's result lines).
  int max_events_per_run = 4096;
  // A submitted task may name only the built-in mutator: an LLM mutator names an endpoint and the
  // environment variable of a key, a command mutator a program, and the coordinator would use them on
  // the client's say (its keys sent where the client points, a client's program run). True; false when
  // the coordinator replaces every submitted task's mutators with its own (--mutators).
  bool builtin_mutators_only = true;
  // Run names the coordinator keeps for itself (its state dir inside the runs folder).
  std::vector<std::string> reserved_names;
};

// What Wait returns: the events after the asked sequence, and whether the run ended (every event it
// will have is in `events` or was returned before) or the queue closed.
struct RunEvents {
  std::vector<v1::RunEvent> events;
  bool ended = false;
  bool closed = false;
};

class RunQueue {
 public:
  // Reads what `options.dir` holds. Errors: the folder cannot be made or read (Unavailable, naming
  // it); a record that does not parse or whose run is another's (DataLoss, naming the file: nothing is
  // removed or rewritten, so a person can look).
  static absl::StatusOr<std::unique_ptr<RunQueue>> Open(RunQueueOptions options);

  // Queues the run, durably, and answers how many runs are ahead of it. Errors: InvalidArgument for a
  // bad or reserved run name, no tasks, too many, a task ValidateTask refuses, one naming a mutator
  // other than the built-in one (builtin_mutators_only), or two of one name (the message names the task); AlreadyExists for a run of that name in the queue, unless it ended and
  // `requeue_ended` (the command line's own run, searched again: a resumed search); ResourceExhausted
  // when max_queued runs wait; Unavailable when the record cannot be written (nothing queued) or once
  // closed.
  absl::StatusOr<v1::SubmitRunResponse> Submit(const v1::SubmitRunRequest& request, bool requeue_ended = false);

  // The first queued run, now running; waits for one when `wait`. nullopt once closed, or when none is
  // queued and not `wait`.
  std::optional<v1::QueuedRun> Next(bool wait = true);
  // The running run ended (DONE or FAILED, with why); its watchers get a RunEnded event. The record is
  // rewritten (Unavailable when it cannot be: the run stays running on disk and is searched again by a
  // restarted coordinator, which resumes it from its store). NotFound: not the running run.
  absl::Status Finish(const std::string& run, v1::RunState state, const std::string& detail);

  // Appends an event to the run's (its sequence is set here); ignored for an unknown run.
  void Publish(const std::string& run, v1::RunEvent event);
  // The events of `run` after `after_sequence`, waiting up to `wait` for one when there is none yet.
  // NotFound: an unknown run.
  absl::StatusOr<RunEvents> Wait(const std::string& run, int64_t after_sequence, absl::Duration wait);

  // The run's record (its state and tasks) and the runs ahead of it while queued. NotFound: unknown.
  absl::StatusOr<std::pair<v1::QueuedRun, int>> Find(const std::string& run);
  // The running run's name; empty when none runs.
  std::string Running();

  // Next returns nullopt, Submit is Unavailable, and every Wait returns with closed. Idempotent.
  void Close();

 private:
  struct Entry {
    v1::QueuedRun record;
    std::deque<v1::RunEvent> events;
  };
  explicit RunQueue(RunQueueOptions options) : options_(std::move(options)) {}
  absl::Status WriteLocked(const v1::QueuedRun& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void PublishLocked(Entry& entry, v1::RunEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  int RunsAheadLocked(const v1::QueuedRun& record) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  Entry* FirstQueuedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);  // the oldest queued; null: none
  bool ClosedOrQueuedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);  // Next's wait condition

  const RunQueueOptions options_;
  absl::Mutex mutex_;
  std::map<std::string, Entry> runs_ ABSL_GUARDED_BY(mutex_);
  int64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 1;
  int64_t next_event_ ABSL_GUARDED_BY(mutex_) = 1;
  std::string running_ ABSL_GUARDED_BY(mutex_);
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace sparseditto
