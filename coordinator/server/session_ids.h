// What the coordinator's work services (evaluation_work.h, model_work.h) share about sessions: their
// ids (secrets of a worker and the coordinator, 128 bits from the OS's entropy) and the wire form of
// a report's verdict.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
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

// A session's heartbeat answered from its queue: the leases of the jobs it names renewed, the jobs to
// stop, whether to drain, and the lease length. `Queue` is a jobs::JobQueue of any job type.
template <typename Queue>
v1::HeartbeatResponse RenewHeldLeases(Queue& queue, const v1::HeartbeatRequest& request, absl::Duration lease) {
  const std::set<std::string> holding(request.holding_job_ids().begin(), request.holding_job_ids().end());
  const jobs::HeartbeatReply reply = queue.Heartbeat(request.session_id(), &holding);
  v1::HeartbeatResponse response;
  for (const std::string& id : reply.cancelled_job_ids) response.add_stop_job_ids(id);
  for (const std::string& id : reply.revoked_job_ids) response.add_stop_job_ids(id);
  response.set_draining(reply.closing);
  response.set_lease_ms(Milliseconds(lease));
  return response;
}

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
