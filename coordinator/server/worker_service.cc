#include "coordinator/server/worker_service.h"

#include <utility>

#include "rpc/serve.h"

namespace sparseditto {

// Only the evaluator role may call; the reply is the logic's answer or its error.

grpc::Status WorkerServiceImpl::RegisterWorker(grpc::ServerContext* context, const v1::RegisterWorkerRequest* request,
                                               v1::RegisterWorkerResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kEvaluator}, "RegisterWorker", response,
                    [&] { return work_->Register(*request); });
}

grpc::Status WorkerServiceImpl::PullEvaluationJobs(grpc::ServerContext* context,
                                                   const v1::PullEvaluationJobsRequest* request,
                                                   v1::PullEvaluationJobsResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kEvaluator}, "PullEvaluationJobs", response,
                    [&] { return work_->Pull(*request); });
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                          v1::HeartbeatResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kEvaluator}, "Heartbeat", response,
                    [&] { return work_->Heartbeat(*request); });
}

grpc::Status WorkerServiceImpl::ReportEvaluation(grpc::ServerContext* context,
                                                 const v1::ReportEvaluationRequest* request,
                                                 v1::ReportEvaluationResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kEvaluator}, "ReportEvaluation", response,
                    [&] { return work_->Report(*request); });
}

grpc::Status WorkerServiceImpl::ReleaseEvaluation(grpc::ServerContext* context,
                                                  const v1::ReleaseEvaluationRequest* request,
                                                  v1::ReleaseEvaluationResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kEvaluator}, "ReleaseEvaluation", response,
               [&]() -> absl::StatusOr<v1::ReleaseEvaluationResponse> {
                 if (absl::Status s = work_->Release(*request); !s.ok()) return s;
                 return v1::ReleaseEvaluationResponse();
               });
}

}  // namespace sparseditto
