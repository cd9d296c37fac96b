// CoordinatorLink over gRPC: a v1::WorkerService stub on one channel, the worker's token on every
// call, and a deadline on every call (a pull's is its wait plus call_timeout).
// Ownership: holds the channel. Thread-safety: any thread (gRPC stubs are thread-safe).
#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "evaluator/node/coordinator_link.h"
#include "grpcpp/grpcpp.h"
#include "services.grpc.pb.h"

namespace sparseditto {

struct GrpcCoordinatorLinkOptions {
  // The token presented as "authorization: Bearer <token>" (rpc/role_tokens.h); never logged.
  std::string token;
  // The deadline of each call beyond its own wait: 10 s, so a coordinator that stalls (or a network
  // that drops packets) is noticed and the call retried, while a loaded one has time to answer.
  absl::Duration call_timeout = absl::Seconds(10);
};

class GrpcCoordinatorLink final : public CoordinatorLink {
 public:
  GrpcCoordinatorLink(std::shared_ptr<grpc::Channel> channel, GrpcCoordinatorLinkOptions options);

  absl::StatusOr<v1::RegisterWorkerResponse> Register(const v1::RegisterWorkerRequest& request) override;
  absl::StatusOr<v1::PullEvaluationJobsResponse> Pull(const v1::PullEvaluationJobsRequest& request) override;
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request) override;
  absl::StatusOr<v1::ReportEvaluationResponse> Report(const v1::ReportEvaluationRequest& request) override;
  absl::Status Release(const v1::ReleaseEvaluationRequest& request) override;

 private:
  // A context with the token and a deadline `extra` beyond call_timeout.
  std::unique_ptr<grpc::ClientContext> Context(absl::Duration extra = absl::ZeroDuration()) const;

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  const GrpcCoordinatorLinkOptions options_;
};

}  // namespace sparseditto
