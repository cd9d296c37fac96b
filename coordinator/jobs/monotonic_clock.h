// The clock that leases are judged on: time since an arbitrary origin of one process, never a wall
// clock. A lease is a duration on the queue owner's clock; no point in time read from one is ever
// compared with another machine's (a worker is told a lease's length, not when it ends), so clock skew
// and wall-clock steps cannot revoke or extend a lease.
//
// Ownership: whoever hands a clock to a JobQueue keeps it alive for the queue's lifetime.
// Thread-safety: Now() may be called from any thread on every implementation here.
#pragma once

#include <chrono>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sparseditto::jobs {

class MonotonicClock {
 public:
  virtual ~MonotonicClock() = default;
  // Time since this clock's origin. Never decreases between calls (from any threads).
  virtual absl::Duration Now() const = 0;
};

// std::chrono::steady_clock: the production clock.
class SteadyMonotonicClock final : public MonotonicClock {
 public:
  absl::Duration Now() const override {
    return absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
  }
};

// A clock that moves only when told to, for tests: starts at `start` (default zero).
class FakeMonotonicClock final : public MonotonicClock {
 public:
  explicit FakeMonotonicClock(absl::Duration start = absl::ZeroDuration()) : now_(start) {}

  absl::Duration Now() const override {
    absl::MutexLock lock(&mutex_);
    return now_;
  }
  // Moves the clock forward by `delta`; a negative `delta` is ignored (the clock never goes back).
  void Advance(absl::Duration delta) {
    absl::MutexLock lock(&mutex_);
    if (delta > absl::ZeroDuration()) now_ += delta;
  }

 private:
  mutable absl::Mutex mutex_;
  absl::Duration now_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace sparseditto::jobs
