// The gRPC face of ModelWork (model_work.h): v1::MutatorWorkService (proto/services.proto), a thin
// class that checks each call's mutator token and hands the request to the logic.
// Ownership: borrows `work` and `tokens`, which outlive the server it is registered with.
// Thread-safety: gRPC calls it from its threads; ModelWork and RoleTokens are thread-safe.
#pragma once

#include "coordinator/server/model_work.h"
#include "rpc/role_tokens.h"
#include "services.grpc.pb.h"

namespace sparseditto {

class MutatorWorkServiceImpl final : public v1::MutatorWorkService::Service {
 public:
  MutatorWorkServiceImpl(ModelWork* work, const rpc::RoleTokens* tokens) : work_(work), tokens_(tokens) {}

  grpc::Status RegisterMutator(grpc::ServerContext* context, const v1::RegisterWorkerRequest* request,
                               v1::RegisterWorkerResponse* response) override;
  grpc::Status PullChatJobs(grpc::ServerContext* context, const v1::PullChatJobsRequest* request,
                            v1::PullChatJobsResponse* response) override;
  grpc::Status HeartbeatMutator(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                v1::HeartbeatResponse* response) override;
  grpc::Status ReportChat(grpc::ServerContext* context, const v1::ReportChatRequest* request,
                          v1::ReportChatResponse* response) override;

 private:
  ModelWork* work_;
  const rpc::RoleTokens* tokens_;
};

}  // namespace sparseditto
