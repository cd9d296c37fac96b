// A pool of worker threads running NvccCompiler::Compile, so the CPUs compile the next candidates
// while the GPU times the current one. Jobs run in submission order (FIFO), up to num_workers at once.
//
// Ownership: the pool borrows the compiler, which must outlive it. Each job owns its source and
// options (copied in at Submit).
// Thread-safety: every method may be called from any thread. Callbacks run on a worker thread (or on
// the caller's thread when the pool is already shut down) and must not call Shutdown() or destroy the
// pool.
#pragma once

#include <deque>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "evaluator/compile/nvcc_compiler.h"

namespace sparseditto {

class CompilePool {
 public:
  using Callback = std::function<void(absl::StatusOr<CompileResult>)>;

  // Starts `num_workers` threads; <= 0 means std::thread::hardware_concurrency() (at least 1).
  explicit CompilePool(const NvccCompiler* compiler, int num_workers = 0);
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;
  ~CompilePool();  // Shutdown()

  // Queues a compile. The future holds what NvccCompiler::Compile returned, or Cancelled if the pool
  // was shut down before the job started.
  std::future<absl::StatusOr<CompileResult>> Submit(std::string source, CompileOptions options);
  // The same, reporting through `done` (called exactly once).
  void Submit(std::string source, CompileOptions options, Callback done);

  // Stops taking jobs, completes queued-but-unstarted jobs with Cancelled, waits for running ones and
  // joins the threads. Idempotent.
  void Shutdown();

  int num_workers() const { return static_cast<int>(workers_.size()); }
  size_t queued() const;  // jobs waiting for a worker

 private:
  struct Job {
    std::string source;
    CompileOptions options;
    Callback done;
  };
  void WorkerLoop();

  const NvccCompiler* const compiler_;
  mutable absl::Mutex mutex_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> workers_;  // written by the constructor and Shutdown only
  absl::Mutex shutdown_mutex_;        // serialises Shutdown calls (joins happen under it)
};

}  // namespace sparseditto
