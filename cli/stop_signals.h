// SIGTERM and SIGINT for the long-running commands (search, coordinator, evaluator, mutator), one way:
// blocked by the constructor, which a command creates first, before anything starts a thread (the
// compile pool, gRPC), so that every thread inherits the mask and the default action never ends the
// process behind the command's back; then taken by one watcher thread with sigwait.
// Thread-safety: construct, Watch and Finish from the command's own thread.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace sparseditto {

class StopSignals {
 public:
  StopSignals();   // blocks SIGTERM and SIGINT in this thread (and so in every thread started after)
  ~StopSignals();  // Finish()
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Runs on_stop(signal number) on a thread of its own when SIGTERM or SIGINT comes. At most once.
  void Watch(std::function<void(int)> on_stop);
  // Ends the watch (wakes the watcher when no signal came) and returns the signal taken: SIGTERM,
  // SIGINT, or 0 for none. Idempotent.
  int Finish();

  // "SIGTERM" or "SIGINT".
  static const char* Name(int signal_number);

 private:
  sigset_t signals_;
  std::atomic<int> received_{0};
  std::atomic<bool> finishing_{false};
  std::thread watcher_;
};

}  // namespace sparseditto
