// The standard health service, checked through grpc.health.v1.Health/Check on a real server.
#include "rpc/health.h"

#include "gmock/gmock.h"
#include "grpcpp/health_check_service_interface.h"
#include "gtest/gtest.h"
#include "rpc/connection_options.h"
#include "rpc/testing/echo_server.h"

namespace sparseditto::rpc {
namespace {

namespace ts = ::sparseditto::rpc::testing_support;

constexpr int kServing = 1;     // grpc.health.v1.HealthCheckResponse.SERVING
constexpr int kNotServing = 2;  // NOT_SERVING

TEST(Health, ServingThenNotServingThenServingAgain) {
  EnableHealthService();
  ts::EchoService service(nullptr);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), ConnectionOptions{});
  ASSERT_TRUE(server.ok()) << server.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), ConnectionOptions{});
  EXPECT_EQ(ts::CheckHealth(channel, "").value(), kServing);

  ASSERT_TRUE(SetServing(*server->server, false).ok());
  EXPECT_EQ(ts::CheckHealth(channel, "").value(), kNotServing);
  ASSERT_TRUE(SetServing(*server->server, true).ok());
  EXPECT_EQ(ts::CheckHealth(channel, "").value(), kServing);

  EXPECT_EQ(ts::CheckHealth(channel, "no.such.Service").status().code(), absl::StatusCode::kNotFound);
  server->server->Shutdown();
}

TEST(Health, SetServingWithoutTheServiceIsAFailedPrecondition) {
  grpc::EnableDefaultHealthCheckService(false);  // process-wide: as if EnableHealthService was never called
  ts::EchoService service(nullptr);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), ConnectionOptions{});
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::Status status = SetServing(*server->server, false);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("EnableHealthService"));
  server->server->Shutdown();
}

}  // namespace
}  // namespace sparseditto::rpc
