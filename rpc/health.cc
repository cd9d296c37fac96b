#include "rpc/health.h"

#include "grpcpp/health_check_service_interface.h"

namespace sparseditto::rpc {

void EnableHealthService() { grpc::EnableDefaultHealthCheckService(true); }

absl::Status SetServing(grpc::Server& server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  if (health == nullptr) {
    return absl::FailedPreconditionError(
        "this server has no health service (call EnableHealthService before BuildAndStart)");
  }
  health->SetServingStatus(serving);
  return absl::OkStatus();
}

}  // namespace sparseditto::rpc
