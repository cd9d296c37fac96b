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

absl::StatusOr<v1::SubmitRunResponse> ClientServiceImpl::Submit(const v1::SubmitRunRequest& request) {
  return queue_->Submit(request);
}

absl::StatusOr<v1::ExportRunResponse> ClientServiceImpl::Export(const std::string& run) {
  absl::StatusOr<std::string> dir = RunDir(options_.runs_dir, run);
  if (!dir.ok()) return dir.status();
  auto found = queue_->Find(run);
  if (!found.ok()) return found.status();
  return ExportRunKernels(*dir, run, found->first.tasks());
}

absl::Status ClientServiceImpl::CheckRun(const std::string& run) {
  if (absl::StatusOr<std::string> dir = RunDir(options_.runs_dir, run); !dir.ok()) return dir.status();
  return queue_->Find(run).status();
}

absl::Status ClientServiceImpl::Watch(const std::string& run, int64_t after_sequence,
                                      const std::function<bool(const v1::RunEvent&)>& write,
                                      const std::function<bool()>& gone) {
  if (absl::Status s = CheckRunName(run, "run"); !s.ok()) return s;
  while (!gone()) {
    absl::StatusOr<RunEvents> batch = queue_->Wait(run, after_sequence, options_.watch_poll);
    if (!batch.ok()) return batch.status();
    for (const v1::RunEvent& event : batch->events) {  // a copy: no lock of the queue's is held here
      if (!write(event)) return absl::CancelledError("the watcher went away");
      after_sequence = event.sequence();
    }
    if (batch->ended) return absl::OkStatus();  // every event of the run was in this batch or before
    if (batch->closed) return absl::UnavailableError("the coordinator is stopping");
  }
  return absl::CancelledError("the watcher went away");
}

grpc::Status ClientServiceImpl::SubmitRun(grpc::ServerContext* context, const v1::SubmitRunRequest* request,
                                          v1::SubmitRunResponse* response) {
  return rpc::Serve(*tokens_, *context, kClientRoles, "SubmitRun", response, [&] { return Submit(*request); });
}

grpc::Status ClientServiceImpl::GetRunStatus(grpc::ServerContext* context, const v1::RunStatusRequest* request,
                                             v1::RunStatusResponse* response) {
  return rpc::Serve(*tokens_, *context, kClientRoles, "GetRunStatus", response,
                    [&] { return Status(request->run()); });
}

grpc::Status ClientServiceImpl::ExportRun(grpc::ServerContext* context, const v1::ExportRunRequest* request,
                                          v1::ExportRunResponse* response) {
  return rpc::Serve(*tokens_, *context, kClientRoles, "ExportRun", response,
                    [&] { return Export(request->run()); });
}

grpc::Status ClientServiceImpl::WatchRun(grpc::ServerContext* context, const v1::WatchRunRequest* request,
                                         grpc::ServerWriter<v1::RunEvent>* writer) {
  if (absl::StatusOr<rpc::Role> role = tokens_->Authorize(*context, kClientRoles, "WatchRun"); !role.ok()) {
    return rpc::ToGrpcStatus(role.status());
  }
  return rpc::ToGrpcStatus(Watch(
      request->run(), request->after_sequence(), [writer](const v1::RunEvent& e) { return writer->Write(e); },
      [context] { return context->IsCancelled(); }));
}

}  // namespace sparseditto
