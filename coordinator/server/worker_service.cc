#include "coordinator/server/worker_service.h"

#include <utility>

#include "rpc/status_conversion.h"

namespace sparseditto {
namespace {

// The evaluator role may call; the reply is the logic's answer or its error.
template <typename Response, typename Call>
grpc::Status Serve(const rpc::RoleTokens& tokens, const grpc::ServerContext& context, std::string_view method,
                   Response* response, Call call) {
  if (absl::StatusOr<rpc::Role> role = tokens.Authorize(context, {rpc::Role::kEvaluator}, method); !role.ok()) {
    return rpc::ToGrpcStatus(role.status());
  }
  absl::StatusOr<Response> answer = call();
  if (!answer.ok()) return rpc::ToGrpcStatus(answer.status());
  *response = *std::move(answer);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status WorkerServiceImpl::RegisterWorker(grpc::ServerContext* context, const v1::RegisterWorkerRequest* request,
                                               v1::RegisterWorkerResponse* response) {
  return Serve(*tokens_, *context, "RegisterWorker", response, [&] { return work_->Register(*request); });
}

grpc::Status WorkerServiceImpl::PullEvaluationJobs(grpc::ServerContext* context,
                                                   const v1::PullEvaluationJobsRequest* request,
                                                   v1::PullEvaluationJobsResponse* response) {
  return Serve(*tokens_, *context, "PullEvaluationJobs", response, [&] { return work_->Pull(*request); });
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                          v1::HeartbeatResponse* response) {
  return Serve(*tokens_, *context, "Heartbeat", response, [&] { return work_->Heartbeat(*request); });
}

grpc::Status WorkerServiceImpl::ReportEvaluation(grpc::ServerContext* context,
                                                 const v1::ReportEvaluationRequest* request,
                                                 v1::ReportEvaluationResponse* response) {
  return Serve(*tokens_, *context, "ReportEvaluation", response, [&] { return work_->Report(*request); });
}

grpc::Status WorkerServiceImpl::ReleaseEvaluation(grpc::ServerContext* context,
                                                  const v1::ReleaseEvaluationRequest* request,
                                                  v1::ReleaseEvaluationResponse* response) {
  return Serve(*tokens_, *context, "ReleaseEvaluation", response,
               [&]() -> absl::StatusOr<v1::ReleaseEvaluationResponse> {
                 if (absl::Status s = work_->Release(*request); !s.ok()) return s;
                 return v1::ReleaseEvaluationResponse();
               });
}

}  // namespace sparseditto
