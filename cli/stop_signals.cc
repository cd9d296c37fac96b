#include "cli/stop_signals.h"

#include <pthread.h>

namespace sparseditto {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGUSR2);  // Finish's word to the watcher; blocked everywhere too, so it is only waited for
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

StopSignals::~StopSignals() { Finish(); }

void StopSignals::Watch(std::function<void(int)> on_stop) {
  watcher_ = std::thread([this, on_stop = std::move(on_stop)] {
    for (;;) {
      int signal_number = 0;
      if (sigwait(&signals_, &signal_number) != 0) return;
      if (signal_number == SIGUSR2) {
        if (finishing_) return;
        continue;  // not ours
      }
      received_ = signal_number;
      on_stop(signal_number);
      return;
    }
  });
}

int StopSignals::Finish() {
  if (watcher_.joinable()) {
    finishing_ = true;
    if (received_ == 0) pthread_kill(watcher_.native_handle(), SIGUSR2);
    watcher_.join();
  }
  return received_;
}

const char* StopSignals::Name(int signal_number) { return signal_number == SIGTERM ? "SIGTERM" : "SIGINT"; }

}  // namespace sparseditto
