#include "coordinator/server/mutator_work_service.h"

#include <utility>

#include "rpc/serve.h"

namespace sparseditto {

grpc::Status MutatorWorkServiceImpl::RegisterMutator(grpc::ServerContext* context,
                                                     const v1::RegisterWorkerRequest* request,
                                                     v1::RegisterWorkerResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kMutator}, "RegisterMutator", response,
                    [&] { return work_->Register(*request); });
}

grpc::Status MutatorWorkServiceImpl::PullChatJobs(grpc::ServerContext* context, const v1::PullChatJobsRequest* request,
                                                  v1::PullChatJobsResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kMutator}, "PullChatJobs", response,
                    [&] { return work_->Pull(*request); });
}

grpc::Status MutatorWorkServiceImpl::HeartbeatMutator(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                                      v1::HeartbeatResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kMutator}, "HeartbeatMutator", response,
                    [&] { return work_->Heartbeat(*request); });
}

grpc::Status MutatorWorkServiceImpl::ReportChat(grpc::ServerContext* context, const v1::ReportChatRequest* request,
                                                v1::ReportChatResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kMutator}, "ReportChat", response,
                    [&] { return work_->Report(*request); });
}

}  // namespace sparseditto
