#include "coordinator/jobs/job_queue_types.h"

namespace sparseditto::jobs {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending: return "pending";
    case JobState::kLeased: return "leased";
    case JobState::kDone: return "done";
    case JobState::kLost: return "lost";
    case JobState::kCancelled: return "cancelled";
  }
  return "unknown";
}

std::string_view ReportOutcomeName(ReportOutcome outcome) {
  switch (outcome) {
    case ReportOutcome::kAccepted: return "accepted";
    case ReportOutcome::kDuplicate: return "duplicate";
    case ReportOutcome::kStale: return "stale";
    case ReportOutcome::kNotHeld: return "not_held";
  }
  return "unknown";
}

}  // namespace sparseditto::jobs
