#include "coordinator/server/client_service.h"

#include <filesystem>
#include <utility>

#include "coordinator/server/run_reports.h"
#include "fmt/format.h"
#include "rpc/serve.h"
#include "rpc/status_conversion.h"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

absl::Status AuthorizeClient(const rpc::RoleTokens& tokens, const grpc::ServerContext& context,
                             std::string_view method) {
  return tokens.Authorize(context, {rpc::Role::kClient, rpc::Role::kAdmin}, method).status();
}


// <runs_dir>/<run>, the run's name checked first (it comes from the network).
absl::StatusOr<std::string> RunDir(const std::string& runs_dir, const std::string& run) {
  if (absl::Status s = CheckRunName(run, "run"); !s.ok()) return s;
  absl::StatusOr<std::filesystem::path> dir = PathInside(runs_dir, {run});
  if (!dir.ok()) return dir.status();
  return dir->string();
}

}  // namespace

absl::StatusOr<v1::RunStatusResponse> ClientServiceImpl::Status(const std::string& run) {
  absl::StatusOr<std::string> dir = RunDir(options_.runs_dir, run);
  if (!dir.ok()) return dir.status();
  auto found = queue_->Find(run);
  if (!found.ok()) return found.status();
  const auto& [record, ahead] = *found;
  v1::RunStatusResponse response;
  response.set_run(run);
  response.set_state(record.state());
  response.set_detail(record.detail());
  response.set_runs_ahead(ahead);
  absl::StatusOr<std::vector<v1::TaskStatus>> tasks = ReadTaskStatuses(*dir, run, record.tasks());
  if (!tasks.ok()) return tasks.status();
  for (v1::TaskStatus& t : *tasks) *response.add_tasks() = std::move(t);
  if (options_.work != nullptr) {
    for (v1::WorkerInfo& w : options_.work->LiveWorkers()) *response.add_workers() = std::move(w);
  }
  if (options_.models != nullptr) {
    for (v1::WorkerInfo& w : options_.models->LiveServices()) *response.add_workers() = std::move(w);
  }
  return response;
}

grpc::Status ClientServiceImpl::SubmitRun(grpc::ServerContext* context, const v1::SubmitRunRequest* request,
                                          v1::SubmitRunResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kClient, rpc::Role::kAdmin}, "SubmitRun", response,
                    [&] { return queue_->Submit(*request); });
}

grpc::Status ClientServiceImpl::GetRunStatus(grpc::ServerContext* context, const v1::RunStatusRequest* request,
                                             v1::RunStatusResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kClient, rpc::Role::kAdmin}, "GetRunStatus", response,
                    [&] { return Status(request->run()); });
}

grpc::Status ClientServiceImpl::ExportRun(grpc::ServerContext* context, const v1::ExportRunRequest* request,
                                          v1::ExportRunResponse* response) {
  return rpc::Serve(*tokens_, *context, {rpc::Role::kClient, rpc::Role::kAdmin}, "ExportRun", response,
                    [&]() -> absl::StatusOr<v1::ExportRunResponse> {
    absl::StatusOr<std::string> dir = RunDir(options_.runs_dir, request->run());
    if (!dir.ok()) return dir.status();
    auto found = queue_->Find(request->run());
    if (!found.ok()) return found.status();
    return ExportRunKernels(*dir, request->run(), found->first.tasks());
  });
}

grpc::Status ClientServiceImpl::WatchRun(grpc::ServerContext* context, const v1::WatchRunRequest* request,
                                         grpc::ServerWriter<v1::RunEvent>* writer) {
  if (absl::Status s = AuthorizeClient(*tokens_, *context, "WatchRun"); !s.ok()) return rpc::ToGrpcStatus(s);
  if (absl::Status s = CheckRunName(request->run(), "run"); !s.ok()) return rpc::ToGrpcStatus(s);
  int64_t after = request->after_sequence();
  while (!context->IsCancelled()) {
    absl::StatusOr<RunEvents> batch = queue_->Wait(request->run(), after, options_.watch_poll);
    if (!batch.ok()) return rpc::ToGrpcStatus(batch.status());
    for (const v1::RunEvent& event : batch->events) {
      if (!writer->Write(event)) return grpc::Status(grpc::StatusCode::CANCELLED, "the watcher went away");
      after = event.sequence();
    }
    if (batch->ended) return grpc::Status::OK;  // every event of the run was in this batch or before
    if (batch->closed) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is stopping");
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "the watcher went away");
}

}  // namespace sparseditto
