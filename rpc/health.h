// The standard gRPC health service (grpc.health.v1.Health, DESIGN.md §3.7), as gRPC provides it
// (grpc::EnableDefaultHealthCheckService): load balancers, orchestrators and our own workers probe it
// with any stock health client (grpc_health_probe, Kubernetes' gRPC probes). It answers without a
// token: it tells only whether the server serves.
#pragma once

#include "absl/status/status.h"
#include "grpcpp/server.h"

namespace sparseditto::rpc {

// Makes every grpc::Server built after this call in this process serve the health service, its
// overall ("") status SERVING once started. Process-wide (gRPC's own switch) and idempotent; call it
// before ServerBuilder::BuildAndStart. Thread-safe.
void EnableHealthService();

// Sets the overall ("") status, and that of every service name set before, to SERVING or NOT_SERVING
// (NOT_SERVING while draining, so balancers send new callers elsewhere while calls in flight finish).
// After server.Shutdown() the status stays NOT_SERVING whatever is set. FailedPrecondition when
// `server` was built without EnableHealthService. Thread-safe.
absl::Status SetServing(grpc::Server& server, bool serving);

}  // namespace sparseditto::rpc
