#include "rpc/status_conversion.h"

#include <string>

#include "gtest/gtest.h"

namespace sparseditto::rpc {
namespace {

TEST(StatusConversion, EveryCodeRoundTripsWithItsMessage) {
  for (int code = 0; code <= 16; ++code) {
    SCOPED_TRACE(code);
    const std::string message = "message of code " + std::to_string(code);
    const absl::Status original(static_cast<absl::StatusCode>(code), message);
    const grpc::Status wire = ToGrpcStatus(original);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(wire.error_message(), code == 0 ? "" : message);
    EXPECT_EQ(FromGrpcStatus(wire), original);

    const grpc::Status from_server(static_cast<grpc::StatusCode>(code), message);
    const absl::Status back = FromGrpcStatus(from_server);
    EXPECT_EQ(static_cast<int>(back.code()), code);
    EXPECT_EQ(back.message(), code == 0 ? "" : message);
    EXPECT_EQ(ToGrpcStatus(back).error_code(), from_server.error_code());
  }
}

TEST(StatusConversion, UnknownCodesBecomeUnknownKeepingTheMessage) {
  const grpc::Status wire = ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(42), "odd"));
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(wire.error_message(), "odd");
  const absl::Status back = FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(42), "odder"));
  EXPECT_EQ(back.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(back.message(), "odder");
}

}  // namespace
}  // namespace sparseditto::rpc
