#include "coordinator/server/load_coordinator.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "coordinator/search/evaluation_job.h"
#include "coordinator/server/load_measures.h"
#include "fmt/format.h"
#include "rpc/connection_options.h"
#include "rpc/health.h"

namespace sparseditto {
namespace {

constexpr absl::Duration kSamplePeriod = absl::Milliseconds(20);
constexpr absl::Duration kFeedPoll = absl::Milliseconds(1);

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

v1::EvaluationJob LoadJob(int64_t n) {
  v1::Task task;
  task.set_name("capacity");
  v1::Candidate candidate;
  candidate.set_id(fmt::format("bench-{}-{}", n, SteadyNanos()));
  candidate.set_task_name(task.name());
  candidate.set_source("__global__ void k() {}");
  return MakeEvaluationJob(task, candidate, static_cast<uint64_t>(n), EvaluationKind::kFull);
}

// The work in memory, or restored from (and so written to) a journal in options.journal_dir.
std::unique_ptr<EvaluationWork> MakeWork(const LoadCoordinatorOptions& options, std::unique_ptr<JobJournal>* journal) {
  if (options.journal_dir.empty()) return std::make_unique<EvaluationWork>(options.work);
  auto opened = JobJournal::Open(options.journal_dir);
  if (!opened.ok()) return nullptr;
  *journal = *std::move(opened);
  auto work = EvaluationWork::Restore(options.work, journal->get());
  return work.ok() ? *std::move(work) : nullptr;
}

}  // namespace

LoadCoordinator::LoadCoordinator(LoadCoordinatorOptions options)
    : options_(std::move(options)), work_(MakeWork(options_, &journal_)), service_(work_.get(), &tokens_) {
  if (work_ == nullptr) return;
  tokens_.Add(rpc::Role::kEvaluator, kLoadEvaluatorToken);
  rpc::EnableHealthService();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  rpc::ApplyServerOptions(builder, {});
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  address_ = fmt::format("127.0.0.1:{}", port);
  submitter_ = std::thread([this] { SubmitLoop(); });
  for (int i = 0; i < std::max(options_.awaiters, 1); ++i) awaiters_.emplace_back([this] { AwaitLoop(); });
}

LoadCoordinator::~LoadCoordinator() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (work_ == nullptr) return;
  work_->Close();  // Awaits of unfinished jobs end; pulls answer draining
  submitter_.join();
  for (std::thread& t : awaiters_) t.join();
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

void LoadCoordinator::SetFeed(Feed feed, double trickle_per_second) {
  absl::MutexLock lock(&mutex_);
  feed_ = feed;
  trickle_per_second_ = trickle_per_second;
}

void LoadCoordinator::ResetWindow() {
  absl::MutexLock lock(&mutex_);
  min_pending_ = -1;
}

void LoadCoordinator::SubmitLoop() {
  int64_t n = 0;
  absl::Time next_trickle = absl::Now();
  absl::Time next_sample = absl::Now();
  for (;;) {
    const absl::Time now = absl::Now();
    // The bound is on jobs not yet ended (pending or leased), not on jobs not yet awaited: the
    // awaiters take the oldest first, and a slow job would otherwise hold back the feed behind it.
    const jobs::JobQueueStats queue = work_->QueueStats();
    const int64_t room = std::max<int64_t>(options_.outstanding - (queue.pending + queue.leased), 0);
    const int64_t threads = now >= next_sample ? ProcStatusField("Threads") : -1;
    int64_t count = 0;  // jobs to submit now, in one batch
    {
      absl::MutexLock lock(&mutex_);
      if (stopping_) return;
      if (threads >= 0) {
        next_sample = now + kSamplePeriod;
        peak_threads_ = std::max(peak_threads_, threads);
        if (feed_ == Feed::kFeeding) min_pending_ = min_pending_ < 0 ? queue.pending : std::min(min_pending_, queue.pending);
      }
      if (feed_ == Feed::kFeeding) count = std::min<int64_t>(room, std::max(options_.max_batch, 1));
      if (feed_ == Feed::kTrickle && room > 0 && now >= next_trickle) {
        count = 1;
        next_trickle = std::max(next_trickle + absl::Seconds(1.0 / std::max(trickle_per_second_, 0.01)), now);
      }
      if (count == 0) {
        // Jobs end without telling this thread: look again soon (and sample, and trickle).
        const absl::Duration wait = feed_ == Feed::kFeeding ? kFeedPoll
                                    : feed_ == Feed::kTrickle ? std::min(kSamplePeriod, next_trickle - now)
                                                              : kSamplePeriod;
        mutex_.AwaitWithTimeout(absl::Condition(&stopping_), std::max(wait, absl::Microseconds(100)));
        continue;
      }
      outstanding_ += count;
    }
    std::vector<v1::EvaluationJob> batch;
    for (int64_t i = 0; i < count; ++i) batch.push_back(LoadJob(n++));
    std::vector<absl::StatusOr<v1::EvaluationJob>> queued = work_->SubmitAll(std::move(batch));
    absl::MutexLock lock(&mutex_);
    bool closed = false;
    for (absl::StatusOr<v1::EvaluationJob>& job : queued) {
      if (!job.ok()) {  // closed: the end
        --outstanding_;
        closed = true;
        continue;
      }
      ++submitted_;
      to_await_.push_back(*std::move(job));
    }
    if (closed) return;
  }
}

void LoadCoordinator::AwaitLoop() {
  for (;;) {
    v1::EvaluationJob job;
    {
      absl::MutexLock lock(&mutex_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return stopping_ || !to_await_.empty(); };
      mutex_.Await(absl::Condition(&ready));
      if (to_await_.empty()) return;  // stopping, nothing left
      job = std::move(to_await_.front());
      to_await_.pop_front();
    }
    const v1::EvalResult result = work_->Await(job);
    const bool is_result =
        result.failure() == v1::FAILURE_CATEGORY_NONE && result.candidate_id() == job.candidate().id();
    absl::MutexLock lock(&mutex_);
    ++(is_result ? results_ : without_result_);
    --outstanding_;
    if (options_.track_jobs) ++end_counts_[job.job_id()];
  }
}

bool LoadCoordinator::WaitAllAwaited(absl::Duration timeout) {
  absl::MutexLock lock(&mutex_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return outstanding_ == 0; };
  return mutex_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

LoadCoordinatorStats LoadCoordinator::Stats() {
  LoadCoordinatorStats s;
  s.queue = work_->QueueStats();
  s.cpu_seconds = ProcessCpuSeconds();
  s.rss_kib = ProcStatusField("VmRSS");
  s.peak_rss_kib = ProcStatusField("VmHWM");
  s.threads = ProcStatusField("Threads");
  absl::MutexLock lock(&mutex_);
  s.submitted = submitted_;
  s.results = results_;
  s.without_result = without_result_;
  s.peak_threads = std::max(peak_threads_, s.threads);
  s.min_pending = min_pending_;
  return s;
}

std::map<std::string, int> LoadCoordinator::EndCounts() {
  absl::MutexLock lock(&mutex_);
  return end_counts_;
}

}  // namespace sparseditto
