// The coordinator's side of distributed evaluation, without the network (the gRPC service,
// worker_service.h, is a thin class over it): the sessions of evaluator workers, the queue of
// evaluation jobs they pull (coordinator/jobs/job_queue.h), and the search's view of those workers as
// one EvaluationPipeline (each live session a taker) and one CandidateEvaluator (for what the search
// asks of "the evaluator" as a whole). The search code is embedded mode's, unchanged: RunBatchSearch
// over this object as evaluator and pipeline.
//
// Worker side (DESIGN.md §3.7): Register gives a session; Pull is a long poll for the jobs of the
// worker's platform, EvaluationPlatform(arch, gpu_name) (task/arch_populations.h: "sm_90/NVIDIA H200"),
// the jobs of no platform, and the jobs pinned to its session; Heartbeat renews the session
// and all its leases and carries cancels, revocations and drain; Report judges a result by its attempt
// (the first terminal result wins); Release gives a job back. A session ends session_ttl after its
// last call; its jobs' leases run out by themselves (lease), so they go to another worker, and after
// max_lost_attempts losses a job ends as a typed failure (JobEndedWithoutResult), never a score.
// Sessions and leases are durations on `clock`, never wall-clock times from a worker.
//
// Search side. A population is one task of one run (a task with several archs is searched as one
// population per arch, task/arch_populations.h). Its results are compared only within one arch and one
// GPU model: its first SetUp fixes its platform, that of the oldest live worker whose device arch serves
// the task's arch (an sm_90 worker for sm_90a), and every job of it carries that platform, so only
// workers of that arch and GPU model pull them; a worker of another model waits for other work. The
// platform is written in the journal with each job, so a restarted coordinator keeps it.
//   SetUp(task)        waits (wait_for_workers) until a worker that can serve the population has a
//                      live session (its arch; once fixed, its platform), then runs a set-up job (a job
//                      with no candidate) on one; its error is SetUp's. Each worker sets a task up
//                      itself when the task's first job reaches it (every job carries its task), and
//                      times its baselines on its own GPU.
//   Device()           the facts of the longest-lived session of the last SetUp's platform that knows
//                      them (a worker learns them at its first set-up and registers again with them);
//                      zero before any.
//   RetimeBaselines    a job pinned to one live session of the population's platform: that worker
//                      re-times the task's baselines;
//                      the direct evaluations after it (Evaluate*, the confirmation stage's) are pinned
//                      to the same worker, so candidates are compared on one GPU against fresh
//                      baselines. A pinned job whose session ends is cancelled.
//   Evaluate*          a job, submitted and awaited.
//   Submit / SubmitAll a job, or a batch of jobs journaled in one synced write.
//   Slots()            the slots of the live sessions of the last SetUp's platform summed (at least 1).
//   Hint               the latest hint goes to every session of its population's platform once, with
//                      its next pull, so that each worker compiles the search's window ahead as
//                      embedded mode's evaluator does.
// A job of a population never set up here (Submit without SetUp) carries no platform: any worker.
// A job that no live worker can pull does not wait silently: on_event says once that no evaluator of
// its GPU model and arch is registered (again each time the last one goes), and the job waits for one.
//
// Ownership: borrows `clock` (nullptr: a steady clock of its own), which must outlive it.
// Thread-safety: every method may be called from any thread; the search calls its side from one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/jobs/job_queue.h"
#include "coordinator/jobs/monotonic_clock.h"
#include "coordinator/search/candidate_evaluator.h"
#include "coordinator/search/evaluation_pipeline.h"
#include "coordinator/server/job_journal.h"
#include "services.pb.h"

namespace sparseditto {

struct EvaluationWorkOptions {
  // A grant's lease, renewed by every heartbeat. 60 s: a worker heartbeats every heartbeat_interval,
  // so a lease survives five lost heartbeats (a slow network, a paused process), yet the job of a dead
  // worker goes to another within a minute. Evaluations run seconds to minutes; leases are renewed.
  absl::Duration lease = absl::Seconds(60);
  // Lease expiries after which a job ends as lost (a typed failure): 3, as the queue's default (one
  // worker death is retried twice; a candidate that kills every worker stops circling).
  int max_lost_attempts = 3;
  // A session ends this long after its worker's last call (pull, heartbeat, report): 60 s, six
  // heartbeats, so only a worker that is gone (or cut off) loses it; it may come back with
  // RegisterWorkerRequest.previous_session_id.
  absl::Duration session_ttl = absl::Seconds(60);
  // How often workers are told to heartbeat: 10 s, well inside lease and session_ttl.
  absl::Duration heartbeat_interval = absl::Seconds(10);
  // The longest a Pull is held when no job matches: 20 s, below the usual proxies' idle timeouts, and
  // the worker's call deadline is set above it.
  absl::Duration max_pull_wait = absl::Seconds(20);
  // The most grants one Pull hands out, whatever it asks: 16.
  int max_jobs_per_pull = 16;
  // How long SetUp waits for a first evaluator worker: unbounded, since a coordinator is usually
  // started before its workers (a Slurm array, a Kubernetes Deployment). Tests bound it.
  absl::Duration wait_for_workers = absl::InfiniteDuration();
  // Told each worker's arrival, return and departure ("evaluator gpu-7/gpu0 (NVIDIA H200, sm_90)
  // joined"), for the coordinator's log. Called under the object's lock: it must be quick and must not
  // call back. Null: silent.
  std::function<void(const std::string&)> on_event;
};

class EvaluationWork final : public CandidateEvaluator, public EvaluationPipeline {
 public:
  // In memory only: a restart loses the jobs (the search resumes from its store and asks again).
  explicit EvaluationWork(EvaluationWorkOptions options = {}, const jobs::MonotonicClock* clock = nullptr);
  // Durable: every job, grant and accepted result is written to `journal` (job_journal.h) before it
  // is pulled, sent or acknowledged, and what `journal` holds is taken back first: done jobs keep their
  // result (a resumed search that asks again gets it at once), leased ones get a fresh lease window for
  // their holder (a running worker that comes back as its session still reports), pending ones wait.
  // Job ids are made from the job's content (and how many times that content was asked for in this
  // process), so a resumed search asks for the same ids. Each population keeps the platform its jobs
  // carry (its arch and GPU model); a job pinned to a session is restored for any worker of its
  // population's platform (sessions do not survive a restart). Errors: the journal's, or a record it
  // cannot take.
  // Borrows `journal`, which must outlive the object.
  static absl::StatusOr<std::unique_ptr<EvaluationWork>> Restore(EvaluationWorkOptions options, JobJournal* journal,
                                                                 const jobs::MonotonicClock* clock = nullptr);
  // Closes (Close()).
  ~EvaluationWork() override;
  EvaluationWork(const EvaluationWork&) = delete;
  EvaluationWork& operator=(const EvaluationWork&) = delete;

  // ---- Worker side (worker_service.h). Errors: InvalidArgument for a malformed request (naming the
  // field), NotFound for an unknown or ended session ("register again"), FailedPrecondition once closed
  // (Register only).

  // A new session, or `previous_session_id` again when that session is live or holds leases (a
  // reconnect). InvalidArgument: not an evaluator, slots < 1, no arch.
  absl::StatusOr<v1::RegisterWorkerResponse> Register(const v1::RegisterWorkerRequest& request);
  // Grants up to min(max_jobs, max_jobs_per_pull) jobs, waiting up to min(wait_ms, max_pull_wait)
  // when none matches (a long poll, outside every lock of this object). Empty and draining once closed.
  // With a journal, the grants of one pull are journaled in one synced write before the answer;
  // Unavailable when it fails (the grants go back to the queue, none is sent).
  absl::StatusOr<v1::PullEvaluationJobsResponse> Pull(const v1::PullEvaluationJobsRequest& request);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request);
  // The queue's verdict on the result. InvalidArgument: a result naming another candidate or task
  // than the job's (nothing recorded).
  absl::StatusOr<v1::ReportEvaluationResponse> Report(const v1::ReportEvaluationRequest& request);
  // NotFound / FailedPrecondition as JobQueue::Release.
  absl::Status Release(const v1::ReleaseEvaluationRequest& request);

  // Drain: no more grants or registrations, workers are told `draining`, and Awaits of unfinished
  // jobs end (JobEndedWithoutResult). Idempotent.
  void Close();

  // The live sessions' workers, oldest session first (for status and logs).
  std::vector<v1::WorkerInfo> LiveWorkers();

  // ---- Search side (see the file comment).
  absl::Status SetUp(const v1::Task& task) override;
  absl::Status RetimeBaselines(const v1::Task& task) override;
  DeviceFacts Device() const override;
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override;
  v1::EvalResult EvaluateScreened(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed,
                                  const v1::ScreenBar& bar) override;
  v1::EvalResult EvaluateFinalist(const v1::Task& task, const v1::Candidate& candidate, uint64_t check_seed) override;

  int Slots() const override;
  // The job id is "<candidate id, or setup / baselines>/<hash of the job's content>.<times that content
  // was asked for before>". A job restored from the journal under that id is taken over, not queued
  // again. Unavailable: the journal could not be written (nothing queued).
  absl::StatusOr<v1::EvaluationJob> Submit(v1::EvaluationJob job) override;
  // Submit of each job, with the journal's records of the whole batch in one synced write (one WAL
  // sync for all; job_journal.h WriteAll) before any of them can be pulled: a caller with many jobs at
  // once (the search's window ahead) pays one sync, not one per job. The answers are in `jobs`' order;
  // a journal write that fails fails every job of the batch not taken over from the journal
  // (Unavailable, nothing of them queued).
  std::vector<absl::StatusOr<v1::EvaluationJob>> SubmitAll(std::vector<v1::EvaluationJob> jobs) override;
  // Kept as the latest hint, handed to each session with its next pull (its worker compiles them).
  void Hint(const v1::Task& task, const std::vector<v1::Candidate>& candidates) override;
  v1::EvalResult Await(const v1::EvaluationJob& job) override;

  jobs::JobQueueStats QueueStats() { return queue_->Stats(); }

  // The run the jobs submitted from now on serve (EvaluationJob.run): a coordinator that searches
  // several runs one after another, on one journal, sets it before each. Empty until set.
  void SetRun(const std::string& run);

 private:
  struct Session {
    v1::WorkerInfo worker;
    std::string platform;         // EvaluationPlatform(worker.arch, worker.gpu_name): what it pulls
    int64_t order = 0;            // registration order, for "oldest first"
    absl::Duration last_seen;     // on clock_; set only through SeeLocked (by_last_seen_ follows it)
    bool seen = false;            // in by_last_seen_
    int64_t hint_seen = 0;        // the hint generation last handed to it
  };

  // Ends sessions unseen for session_ttl, least recently seen first; cancels the jobs pinned to them.
  // O(log sessions) a call plus the work of each session ended (by_last_seen_).
  void ExpireSessionsLocked(absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Notes that session `id` was seen at `now` (its last_seen and by_last_seen_).
  void SeeLocked(const std::string& id, Session& session, absl::Duration now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The session, seen now; NotFound when unknown or expired.
  absl::StatusOr<Session*> TouchLocked(const std::string& session_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Submit under a platform (empty, or pinned), and note a pinned job.
  absl::StatusOr<v1::EvaluationJob> SubmitOn(v1::EvaluationJob job, const std::string& session_id);
  // SubmitAll under a platform: ids and records made under mutex_, one journal write for the batch
  // outside it, then the jobs queued under mutex_.
  std::vector<absl::StatusOr<v1::EvaluationJob>> SubmitAllOn(std::vector<v1::EvaluationJob> jobs,
                                                             const std::string& session_id);
  // A direct evaluation: pinned to the confirmation's session when one is chosen.
  v1::EvalResult EvaluateDirect(v1::EvaluationJob job);
  std::string NewSessionIdLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // ---- Populations (evaluation_work_populations.cc).
  // The key of population_platforms_.
  static std::string PopulationKey(const std::string& run, const std::string& task_name);
  // The platform fixed for the population of `task_name` in `run`; empty when none is.
  std::string PlatformOfLocked(const std::string& run, const std::string& task_name) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);
  // Whether some live session pulls jobs of `platform`.
  bool ServedLocked(const std::string& platform) const ABSL_SHARED_LOCKS_REQUIRED(mutex_);
  // Tells on_event `line` unless it was told under `key` since a worker of `key` last registered.
  void TellOnceLocked(const std::string& key, const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Tells, once, that no live worker pulls `platform`'s jobs (nothing when one does, or for "").
  void TellIfUnservedLocked(const std::string& platform, const std::string& whose)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The id of the oldest live session that could serve `task`'s population in the current run: of its
  // platform when fixed, else of a device arch that serves the task. Empty when none.
  std::string OldestServingLocked(const v1::Task& task) const ABSL_SHARED_LOCKS_REQUIRED(mutex_);

  using Queue = jobs::JobQueue<v1::EvaluationJob, v1::EvalResult>;
  // Writes the journal's record of `job_id` after `change` (nothing without a journal). The write
  // is outside mutex_ (a synced write takes milliseconds; RocksDB groups concurrent ones).
  absl::Status Journal(const std::string& job_id, const std::function<void(v1::JournalJob&)>& change);
  // The same for several jobs at once, `change(i, record)` applied to the record of job_ids[i], all
  // written in one synced write (JobJournal::WriteAll): all durable, or an error. Ids that are not jobs
  // of ours are skipped.
  absl::Status JournalAll(const std::vector<std::string>& job_ids,
                          const std::function<void(size_t, v1::JournalJob&)>& change);

  const EvaluationWorkOptions options_;
  std::unique_ptr<jobs::MonotonicClock> own_clock_;
  const jobs::MonotonicClock* clock_;
  std::unique_ptr<Queue> queue_;
  JobJournal* journal_ = nullptr;  // null: in memory only

  mutable absl::Mutex mutex_;
  std::map<std::string, Session> sessions_ ABSL_GUARDED_BY(mutex_);
  // (last_seen, id) of every session in sessions_: the next to expire first.
  std::set<std::pair<absl::Duration, std::string>> by_last_seen_ ABSL_GUARDED_BY(mutex_);
  int64_t next_order_ ABSL_GUARDED_BY(mutex_) = 0;
  std::map<std::string, std::set<std::string>> pinned_jobs_ ABSL_GUARDED_BY(mutex_);  // session -> job ids
  struct Subject {
    std::string candidate_id;
    std::string task_name;
  };
  std::map<std::string, Subject> job_subjects_ ABSL_GUARDED_BY(mutex_);  // every job submitted, by id
  std::map<std::string, int64_t> occurrences_ ABSL_GUARDED_BY(mutex_);   // content hash -> times asked
  std::map<std::string, v1::JournalJob> records_ ABSL_GUARDED_BY(mutex_);  // with a journal: as written
  int64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 0;
  std::string confirmation_session_ ABSL_GUARDED_BY(mutex_);  // RetimeBaselines' choice; empty: none
  // "<run>\n<task name>" -> the platform its jobs carry: fixed by its first SetUp, or restored.
  std::map<std::string, std::string> population_platforms_ ABSL_GUARDED_BY(mutex_);
  std::string current_platform_ ABSL_GUARDED_BY(mutex_);  // the last SetUp's population's; empty: none
  std::set<std::string> told_ ABSL_GUARDED_BY(mutex_);    // TellOnceLocked's keys
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
  std::string run_ ABSL_GUARDED_BY(mutex_);
  v1::Task hint_task_ ABSL_GUARDED_BY(mutex_);
  std::string hint_platform_ ABSL_GUARDED_BY(mutex_);  // the hint's population's platform; empty: every session
  std::vector<v1::Candidate> hint_ ABSL_GUARDED_BY(mutex_);
  int64_t hint_generation_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace sparseditto
