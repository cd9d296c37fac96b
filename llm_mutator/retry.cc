#include "llm_mutator/retry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace sparseditto::llm {

void SleepSeconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

double BackoffSeconds(const RetryOptions& options, int retry, const ChatResult& last, Rng& rng) {
  const double factor = 1.0 - std::clamp(options.jitter, 0.0, 1.0) * rng.Uniform();  // drawn always: stable sequence
  if (last.retry_after_seconds) return std::min(*last.retry_after_seconds, options.max_backoff_seconds);
  const double base = options.initial_backoff_seconds * std::pow(options.multiplier, std::max(0, retry - 1));
  return std::min(options.max_backoff_seconds, base) * factor;
}

ChatResult CallWithRetries(ChatClient& client, const ChatRequest& request, const RetryOptions& options, Rng& rng,
                           const Sleeper& sleep) {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  double seconds = 0;
  for (int attempt = 1;; ++attempt) {
    ChatResult r = client.Complete(request);
    prompt_tokens += r.prompt_tokens;
    completion_tokens += r.completion_tokens;
    seconds += r.seconds;
    if (!IsRetryable(r.outcome) || attempt > options.max_retries) {
      r.attempts = attempt;
      r.prompt_tokens = prompt_tokens;
      r.completion_tokens = completion_tokens;
      r.seconds = seconds;
      if (IsRetryable(r.outcome) && options.max_retries > 0) {
        r.message += " (gave up after " + std::to_string(attempt) + " attempts)";
      }
      return r;
    }
    const double pause = BackoffSeconds(options, attempt, r, rng);
    sleep(pause);
    seconds += pause;
  }
}

}  // namespace sparseditto::llm
