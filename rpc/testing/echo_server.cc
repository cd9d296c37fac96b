#include "rpc/testing/echo_server.h"

#include <future>

#include "absl/status/status.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "rpc/status_conversion.h"

namespace sparseditto::rpc::testing_support {

grpc::Status EchoService::Echo(grpc::ServerContext* context, const EchoRequest* request, EchoReply* reply) {
  return Handle(*context, {Role::kEvaluator, Role::kMutator, Role::kClient, Role::kAdmin}, "Echo/Echo", *request,
                *reply);
}

grpc::Status EchoService::AdminOnly(grpc::ServerContext* context, const EchoRequest* request, EchoReply* reply) {
  return Handle(*context, {Role::kAdmin}, "Echo/AdminOnly", *request, *reply);
}

std::vector<std::string> EchoService::log() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_;
}

grpc::Status EchoService::Handle(grpc::ServerContext& context, std::initializer_list<Role> allowed,
                                 std::string_view method, const EchoRequest& request, EchoReply& reply) {
  if (tokens_ != nullptr) {
    absl::StatusOr<Role> role = tokens_->Authorize(context, allowed, method);
    if (!role.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      log_.push_back(role.status().ToString());
      return ToGrpcStatus(role.status());
    }
    reply.set_role(std::string(RoleName(*role)));
  }
  if (request.reply_bytes() > 0) {
    reply.set_payload(std::string(static_cast<size_t>(request.reply_bytes()), 'r'));
  } else {
    reply.set_payload(request.payload());
  }
  return grpc::Status::OK;
}

absl::StatusOr<RunningServer> StartServer(grpc::Service* service, std::shared_ptr<grpc::ServerCredentials> credentials,
                                          const std::optional<ConnectionOptions>& options) {
  RunningServer running;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", std::move(credentials), &running.port);
  if (service != nullptr) builder.RegisterService(service);
  if (options.has_value()) ApplyServerOptions(builder, *options);
  running.server = builder.BuildAndStart();
  if (running.server == nullptr || running.port == 0) return absl::InternalError("the test server did not start");
  return running;
}

grpc::Status CallEcho(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                      const std::string& payload, bool admin_only, absl::Duration timeout, EchoReply* reply) {
  std::unique_ptr<Echo::Stub> stub = Echo::NewStub(channel);
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  if (!token.empty()) AttachToken(context, token);
  EchoRequest request;
  request.set_payload(payload);
  EchoReply ignored;
  EchoReply& answer = reply != nullptr ? *reply : ignored;
  return admin_only ? stub->AdminOnly(&context, request, &answer) : stub->Echo(&context, request, &answer);
}

absl::StatusOr<int> CheckHealth(const std::shared_ptr<grpc::Channel>& channel, const std::string& service) {
  // HealthCheckRequest { string service = 1; }: tag (1 << 3 | 2), length, bytes (names < 128 bytes).
  if (service.size() >= 128) return absl::InvalidArgumentError("service name too long for this test helper");
  std::string request_bytes;
  if (!service.empty()) request_bytes = std::string{'\x0a', static_cast<char>(service.size())} + service;
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  SetDeadline(context, absl::Seconds(10));
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) return FromGrpcStatus(status);
  grpc::Slice single;
  if (!response.DumpToSingleSlice(&single).ok()) return absl::InternalError("unreadable health response");
  const std::string bytes(reinterpret_cast<const char*>(single.begin()), single.size());
  // HealthCheckResponse { ServingStatus status = 1; }: tag (1 << 3 | 0), a one-byte varint; absent = 0.
  if (bytes.empty()) return 0;
  if (bytes.size() != 2 || bytes[0] != '\x08') return absl::InternalError("unexpected health response bytes");
  return static_cast<int>(bytes[1]);
}

}  // namespace sparseditto::rpc::testing_support
