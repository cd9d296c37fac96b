#include "evaluator/compile/compile_pool.h"

#include <memory>

namespace sparseditto {

CompilePool::CompilePool(const NvccCompiler* compiler, int num_workers) : compiler_(compiler) {
  if (num_workers <= 0) num_workers = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(num_workers);
  for (int i = 0; i < num_workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

CompilePool::~CompilePool() { Shutdown(); }

std::future<absl::StatusOr<CompileResult>> CompilePool::Submit(std::string source, CompileOptions options) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<CompileResult>>>();
  std::future<absl::StatusOr<CompileResult>> future = promise->get_future();
  Submit(std::move(source), std::move(options),
         [promise](absl::StatusOr<CompileResult> result) { promise->set_value(std::move(result)); });
  return future;
}

void CompilePool::Submit(std::string source, CompileOptions options, Callback done) {
  {
    absl::MutexLock lock(&mutex_);
    if (!stopping_) {
      queue_.push_back({std::move(source), std::move(options), std::move(done)});
      return;
    }
  }
  done(absl::CancelledError("the compile pool is shut down"));
}

size_t CompilePool::queued() const {
  absl::MutexLock lock(&mutex_);
  return queue_.size();
}

void CompilePool::WorkerLoop() {
  for (;;) {
    Job job;
    {
      absl::MutexLock lock(&mutex_);
      mutex_.Await(absl::Condition(
          +[](CompilePool* pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pool->mutex_) {
            return pool->stopping_ || !pool->queue_.empty();
          },
          this));
      if (stopping_) return;  // Shutdown cancels what is left in the queue
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job.done(compiler_->Compile(job.source, job.options));
  }
}

void CompilePool::Shutdown() {
  absl::MutexLock serial(&shutdown_mutex_);
  std::deque<Job> cancelled;
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    cancelled.swap(queue_);
  }
  for (Job& job : cancelled) job.done(absl::CancelledError("the compile pool was shut down before this job started"));
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

}  // namespace sparseditto
