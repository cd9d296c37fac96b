// The one retry layer of the LLM mutator: a request answered 429 (rate limited), 503 or 529
// (overloaded) is asked again after a pause, at most `max_retries` times. Every other outcome is
// returned at once (other 5xx, time-outs, truncated or malformed answers are typed outcomes for the
// caller, not retried here; clients and transports never retry).
//
// The pause before retry k (k = 1, 2, ...): Retry-After when the answer has one in seconds form
// (capped at max_backoff_seconds), else min(max_backoff_seconds, initial_backoff_seconds *
// multiplier^(k-1)) scaled by a factor drawn uniformly from [1 - jitter, 1] ("equal-ish jitter").
// Draws come from the Rng passed in, so a seeded caller gets the same pauses every time.
// Thread-safety: CallWithRetries is reentrant; the client must be thread-safe, the Rng not shared.
#pragma once

#include <functional>

#include "common/rng.h"
#include "llm_mutator/chat_client.h"

namespace sparseditto::llm {

struct RetryOptions {
  int max_retries = 4;                  // ModelOptions.max_retries
  double initial_backoff_seconds = 2;
  double multiplier = 2;
  double max_backoff_seconds = 60;
  double jitter = 0.5;                  // in [0, 1]
};

// Sleeps for the given seconds; the seam tests replace (the default sleeps the thread).
using Sleeper = std::function<void(double seconds)>;
void SleepSeconds(double seconds);

// The pause before retry `retry` (1-based) after `last`.
double BackoffSeconds(const RetryOptions& options, int retry, const ChatResult& last, Rng& rng);

// Calls client.Complete until it is not retryable or the retries are spent; the result's `attempts`
// counts the calls and its token counts are the sum over all attempts (a rate-limited answer has
// none, but a server may charge for one).
ChatResult CallWithRetries(ChatClient& client, const ChatRequest& request, const RetryOptions& options, Rng& rng,
                           const Sleeper& sleep = SleepSeconds);

}  // namespace sparseditto::llm
