// The gRPC face of EvaluationWork (evaluation_work.h): v1::WorkerService (proto/services.proto), a thin
// class that checks each call's token and hands the request to the logic. Every call needs an
// evaluator token (rpc/role_tokens.h); the status codes are the logic's (rpc/status_conversion.h).
// Ownership: borrows `work` and `tokens`, which outlive the server it is registered with.
// Thread-safety: gRPC calls it from its threads; EvaluationWork and RoleTokens are thread-safe.
#pragma once

#include "coordinator/server/evaluation_work.h"
#include "rpc/role_tokens.h"
#include "services.grpc.pb.h"

namespace sparseditto {

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  WorkerServiceImpl(EvaluationWork* work, const rpc::RoleTokens* tokens) : work_(work), tokens_(tokens) {}

  grpc::Status RegisterWorker(grpc::ServerContext* context, const v1::RegisterWorkerRequest* request,
                              v1::RegisterWorkerResponse* response) override;
  grpc::Status PullEvaluationJobs(grpc::ServerContext* context, const v1::PullEvaluationJobsRequest* request,
                                  v1::PullEvaluationJobsResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override;
  grpc::Status ReportEvaluation(grpc::ServerContext* context, const v1::ReportEvaluationRequest* request,
                                v1::ReportEvaluationResponse* response) override;
  grpc::Status ReleaseEvaluation(grpc::ServerContext* context, const v1::ReleaseEvaluationRequest* request,
                                 v1::ReleaseEvaluationResponse* response) override;

 private:
  EvaluationWork* work_;
  const rpc::RoleTokens* tokens_;
};

}  // namespace sparseditto
