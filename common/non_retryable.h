// A failure that retrying cannot fix (no NVIDIA driver on the machine, a task the runner refuses), told
// apart from one that may pass on a second try (a runner child that died, a store busy for a moment) by
// a payload on the absl::Status, so that it survives being passed up and re-worded.
// `search` retries a failed task (coordinator/search/batch_search.h) unless its error IsNonRetryable.
// Header-only; thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace sparseditto {

inline constexpr absl::string_view kNonRetryablePayloadUrl = "type.sparseditto/non_retryable";

// `status` marked as one that retrying cannot fix; OK stays OK.
inline absl::Status NonRetryable(absl::Status status) {
  if (!status.ok()) status.SetPayload(kNonRetryablePayloadUrl, absl::Cord("retrying cannot fix this"));
  return status;
}

inline bool IsNonRetryable(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kNonRetryablePayloadUrl).has_value();
}

// A new message for `status`, keeping its code and its payloads (NonRetryable among them).
inline absl::Status Reworded(const absl::Status& status, std::string_view message) {
  absl::Status reworded(status.code(), std::string(message));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) { reworded.SetPayload(url, payload); });
  return reworded;
}

}  // namespace sparseditto
