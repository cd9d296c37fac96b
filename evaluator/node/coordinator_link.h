// What an evaluator worker (evaluator_node.h) says to the coordinator: the calls of v1::WorkerService
// (proto/services.proto), behind an interface so that the worker's logic is tested against the
// coordinator's logic in-process as well as over real gRPC (grpc_coordinator_link.h).
// Errors are the service's: UNAVAILABLE / DEADLINE_EXCEEDED (the coordinator is unreachable or
// restarting: try again later), NOT_FOUND (the session ended: register again), UNAUTHENTICATED /
// PERMISSION_DENIED (a bad token: give up), INVALID_ARGUMENT (a malformed request).
// Thread-safety: implementations must allow calls from several threads at once (the worker's job
// loop and its heartbeat thread).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services.pb.h"

namespace sparseditto {

class CoordinatorLink {
 public:
  virtual ~CoordinatorLink() = default;
  virtual absl::StatusOr<v1::RegisterWorkerResponse> Register(const v1::RegisterWorkerRequest& request) = 0;
  // A long poll of up to request.wait_ms.
  virtual absl::StatusOr<v1::PullEvaluationJobsResponse> Pull(const v1::PullEvaluationJobsRequest& request) = 0;
  virtual absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportEvaluationResponse> Report(const v1::ReportEvaluationRequest& request) = 0;
  virtual absl::Status Release(const v1::ReleaseEvaluationRequest& request) = 0;
};

}  // namespace sparseditto
