// What the coordinator's work services (evaluation_work.h, model_work.h) share about sessions: their
// ids (secrets of a worker and the coordinator, 128 bits from the OS's entropy) and the wire form of
// a report's verdict.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "coordinator/jobs/job_queue_types.h"
#include "fmt/format.h"
#include "services.pb.h"

namespace sparseditto {

inline constexpr size_t kSessionIdLength = 32;  // hex digits

inline bool WellFormedSessionId(const std::string& id) {
  return id.size() == kSessionIdLength && std::all_of(id.begin(), id.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

// A new id for which `taken` is false.
inline std::string NewSessionId(const std::function<bool(const std::string&)>& taken) {
  std::random_device entropy;  // /dev/urandom on Linux
  std::string id;
  do {
    id.clear();
    while (id.size() < kSessionIdLength) id += fmt::format("{:08x}", entropy());
  } while (taken(id));
  return id;
}

inline int64_t Milliseconds(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

inline v1::ReportOutcome ReportOutcomeProto(jobs::ReportOutcome outcome) {
  switch (outcome) {
    case jobs::ReportOutcome::kAccepted: return v1::REPORT_OUTCOME_ACCEPTED;
    case jobs::ReportOutcome::kDuplicate: return v1::REPORT_OUTCOME_DUPLICATE;
    case jobs::ReportOutcome::kStale: return v1::REPORT_OUTCOME_STALE;
    case jobs::ReportOutcome::kNotHeld: return v1::REPORT_OUTCOME_NOT_HELD;
  }
  return v1::REPORT_OUTCOME_UNSPECIFIED;
}

}  // namespace sparseditto
