#include "evaluator/node/grpc_coordinator_link.h"

#include <utility>

#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"
#include "rpc/status_conversion.h"

namespace sparseditto {
namespace {

template <typename Response, typename Call>
absl::StatusOr<Response> Ask(Call call) {
  Response response;
  const grpc::Status status = call(&response);
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

}  // namespace

GrpcCoordinatorLink::GrpcCoordinatorLink(std::shared_ptr<grpc::Channel> channel, GrpcCoordinatorLinkOptions options)
    : channel_(std::move(channel)), stub_(v1::WorkerService::NewStub(channel_)), options_(std::move(options)) {}

std::unique_ptr<grpc::ClientContext> GrpcCoordinatorLink::Context(absl::Duration extra) const {
  auto context = std::make_unique<grpc::ClientContext>();
  rpc::AttachToken(*context, options_.token);
  rpc::SetDeadline(*context, options_.call_timeout + extra);
  return context;
}

absl::StatusOr<v1::RegisterWorkerResponse> GrpcCoordinatorLink::Register(const v1::RegisterWorkerRequest& request) {
  auto context = Context();
  return Ask<v1::RegisterWorkerResponse>([&](auto* r) { return stub_->RegisterWorker(context.get(), request, r); });
}

absl::StatusOr<v1::PullEvaluationJobsResponse> GrpcCoordinatorLink::Pull(const v1::PullEvaluationJobsRequest& request) {
  auto context = Context(absl::Milliseconds(request.wait_ms()));
  return Ask<v1::PullEvaluationJobsResponse>(
      [&](auto* r) { return stub_->PullEvaluationJobs(context.get(), request, r); });
}

absl::StatusOr<v1::HeartbeatResponse> GrpcCoordinatorLink::Heartbeat(const v1::HeartbeatRequest& request) {
  auto context = Context();
  return Ask<v1::HeartbeatResponse>([&](auto* r) { return stub_->Heartbeat(context.get(), request, r); });
}

absl::StatusOr<v1::ReportEvaluationResponse> GrpcCoordinatorLink::Report(const v1::ReportEvaluationRequest& request) {
  auto context = Context();
  return Ask<v1::ReportEvaluationResponse>(
      [&](auto* r) { return stub_->ReportEvaluation(context.get(), request, r); });
}

absl::Status GrpcCoordinatorLink::Release(const v1::ReleaseEvaluationRequest& request) {
  auto context = Context();
  return Ask<v1::ReleaseEvaluationResponse>(
             [&](auto* r) { return stub_->ReleaseEvaluation(context.get(), request, r); })
      .status();
}

}  // namespace sparseditto
