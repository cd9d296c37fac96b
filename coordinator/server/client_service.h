// The gRPC face of the coordinator's runs for clients: v1::ClientService (proto/services.proto), a thin
// class over RunQueue (run_queue.h: submissions, states, events) and run_reports.h (status and
// kernels from a run's store). Every call needs a client or admin token (rpc/role_tokens.h); an
// evaluator's or mutator's token is PERMISSION_DENIED. WatchRun streams a run's events until it ends;
// no lock is held while a message is written. The calls' logic is also public without the network
// (Submit, Status, Export, Watch): the JSON/HTTP front (http_api.h) serves the same.
// Ownership: borrows everything, which must outlive the server it is registered with.
// Thread-safety: gRPC calls it from its threads; what it borrows is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/model_work.h"
#include "coordinator/server/run_queue.h"
#include "rpc/role_tokens.h"
#include "services.grpc.pb.h"

namespace sparseditto {

// The roles whose tokens may call the client service, over gRPC and HTTP alike.
inline constexpr std::initializer_list<rpc::Role> kClientRoles = {rpc::Role::kClient, rpc::Role::kAdmin};

struct ClientServiceOptions {
  std::string runs_dir;              // the runs' folders: <runs_dir>/<run>/store
  EvaluationWork* work = nullptr;    // for the live workers in a status; null: none listed
  ModelWork* models = nullptr;       // for the live mutator services in a status; null: none listed
  // How long a WatchRun waits for the next event before it looks whether its caller has gone: 1 s.
  absl::Duration watch_poll = absl::Seconds(1);
};

class ClientServiceImpl final : public v1::ClientService::Service {
 public:
  ClientServiceImpl(RunQueue* queue, const rpc::RoleTokens* tokens, ClientServiceOptions options)
      : queue_(queue), tokens_(tokens), options_(std::move(options)) {}

  grpc::Status SubmitRun(grpc::ServerContext* context, const v1::SubmitRunRequest* request,
                         v1::SubmitRunResponse* response) override;
  grpc::Status GetRunStatus(grpc::ServerContext* context, const v1::RunStatusRequest* request,
                            v1::RunStatusResponse* response) override;
  grpc::Status WatchRun(grpc::ServerContext* context, const v1::WatchRunRequest* request,
                        grpc::ServerWriter<v1::RunEvent>* writer) override;
  grpc::Status ExportRun(grpc::ServerContext* context, const v1::ExportRunRequest* request,
                         v1::ExportRunResponse* response) override;

  // The calls without the network or a token check (tests, the HTTP front). Errors as the service's
  // (proto/services.proto): InvalidArgument (a bad run name or task, naming the field), NotFound (an
  // unknown run), AlreadyExists, ResourceExhausted (the queue is full), Unavailable (stopping),
  // FailedPrecondition (Export of a run not started), and a run store's own errors.
  absl::StatusOr<v1::SubmitRunResponse> Submit(const v1::SubmitRunRequest& request);
  absl::StatusOr<v1::RunStatusResponse> Status(const std::string& run);
  absl::StatusOr<v1::ExportRunResponse> Export(const std::string& run);
  // OK when `run` is a good name of a run the queue holds; InvalidArgument, NotFound otherwise.
  absl::Status CheckRun(const std::string& run);
  // Gives `write` each event of `run` after `after_sequence` in order, no lock held, until the run
  // ends (OK: its RunEnded event was written). Between events it asks `gone` (at least every
  // watch_poll). Errors: InvalidArgument (bad name), NotFound (unknown run), Unavailable "the
  // coordinator is stopping" (RunQueue::Close), Cancelled when `write` returns false or `gone` true.
  absl::Status Watch(const std::string& run, int64_t after_sequence,
                     const std::function<bool(const v1::RunEvent&)>& write, const std::function<bool()>& gone);

 private:
  RunQueue* queue_;
  const rpc::RoleTokens* tokens_;
  const ClientServiceOptions options_;
};

}  // namespace sparseditto
