// Test fixtures of rpc_test: the Echo service (echo.proto) guarded by RoleTokens, a server on
// 127.0.0.1 at a port the OS picks, and client calls of Echo and of the standard health service.
// Not thread-safe unless said.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "echo.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"

namespace sparseditto::rpc::testing_support {

// Echo answers every role, AdminOnly the admin role. Each refused call's message goes to log(), as a
// real server would log it. Handlers are thread-safe.
class EchoService final : public Echo::Service {
 public:
  // `tokens` (borrowed, must outlive the service; nullptr: no token checks).
  explicit EchoService(const RoleTokens* tokens) : tokens_(tokens) {}

  grpc::Status Echo(grpc::ServerContext* context, const EchoRequest* request, EchoReply* reply) override;
  grpc::Status AdminOnly(grpc::ServerContext* context, const EchoRequest* request, EchoReply* reply) override;

  std::vector<std::string> log() const;

 private:
  grpc::Status Handle(grpc::ServerContext& context, std::initializer_list<Role> allowed, std::string_view method,
                      const EchoRequest& request, EchoReply& reply);

  const RoleTokens* tokens_;
  mutable std::mutex mutex_;
  std::vector<std::string> log_;
};

struct RunningServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  std::string localhost() const { return "localhost:" + std::to_string(port); }
};

// Serves `service` (borrowed) on 127.0.0.1:0 with `credentials`, with ApplyServerOptions(options) when
// given (gRPC's defaults otherwise). Internal when the server does not start or gets no port.
absl::StatusOr<RunningServer> StartServer(grpc::Service* service, std::shared_ptr<grpc::ServerCredentials> credentials,
                                          const std::optional<ConnectionOptions>& options);

// Calls Echo (or AdminOnly) with `payload`, presenting `token` when non-empty, under `timeout`.
grpc::Status CallEcho(const std::shared_ptr<grpc::Channel>& channel, const std::string& token, const std::string& payload,
                      bool admin_only = false, absl::Duration timeout = absl::Seconds(10), EchoReply* reply = nullptr);

// grpc.health.v1.Health/Check for `service` ("" = overall), called generically (grpc::GenericStub
// with a hand-serialized HealthCheckRequest: Debian ships no generated health stubs): the
// ServingStatus number of the answer (1 SERVING, 2 NOT_SERVING), or the call's error.
absl::StatusOr<int> CheckHealth(const std::shared_ptr<grpc::Channel>& channel, const std::string& service);

}  // namespace sparseditto::rpc::testing_support
