// Size limits, keepalive agreement and deadlines over a real gRPC server on 127.0.0.1.
#include "rpc/connection_options.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "grpcpp/create_channel.h"
#include "rpc/testing/echo_server.h"

namespace sparseditto::rpc {
namespace {

namespace ts = ::sparseditto::rpc::testing_support;

std::map<std::string, int> IntArguments(const grpc::ChannelArguments& args) {
  std::map<std::string, int> ints;
  const grpc_channel_args c = args.c_channel_args();
  for (size_t i = 0; i < c.num_args; ++i) {
    if (c.args[i].type == GRPC_ARG_INTEGER) ints[c.args[i].key] = c.args[i].value.integer;
  }
  return ints;
}

struct ArgumentsCase {
  std::string name;
  ConnectionOptions options;
  int max_message_bytes, keepalive_ms, keepalive_timeout_ms, min_ping_interval_ms, max_reconnect_ms;
};

TEST(ConnectionOptions, ChannelArgumentsAndInvalidValuesReadAsDefaults) {
  const std::vector<ArgumentsCase> cases = {
      {"defaults", ConnectionOptions{}, 16 << 20, 30000, 10000, 15000, 5000},
      {"custom",
       ConnectionOptions{.max_message_bytes = 1000, .keepalive_time = absl::Seconds(4), .keepalive_timeout = absl::Seconds(2),
                         .max_reconnect_backoff = absl::Milliseconds(200)},
       1000, 4000, 2000, 2000, 200},
      {"not positive reads as default",
       ConnectionOptions{.max_message_bytes = -1, .keepalive_time = absl::ZeroDuration(),
                         .keepalive_timeout = absl::Seconds(-3), .max_reconnect_backoff = absl::ZeroDuration()},
       16 << 20, 30000, 10000, 15000, 5000},
  };
  for (const ArgumentsCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, int> ints = IntArguments(MakeChannelArguments(c.options));
    EXPECT_EQ(ints[GRPC_ARG_MAX_SEND_MESSAGE_LENGTH], c.max_message_bytes);
    EXPECT_EQ(ints[GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH], c.max_message_bytes);
    EXPECT_EQ(ints[GRPC_ARG_KEEPALIVE_TIME_MS], c.keepalive_ms);
    EXPECT_EQ(ints[GRPC_ARG_KEEPALIVE_TIMEOUT_MS], c.keepalive_timeout_ms);
    EXPECT_EQ(ints[GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS], 1);
    EXPECT_EQ(ints[GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA], 0);
    EXPECT_EQ(ints[GRPC_ARG_MAX_RECONNECT_BACKOFF_MS], c.max_reconnect_ms);
    EXPECT_LE(ints[GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS], c.max_reconnect_ms);
    EXPECT_EQ(absl::ToInt64Milliseconds(ServerMinPingInterval(c.options)), c.min_ping_interval_ms);
    EXPECT_LE(c.min_ping_interval_ms, c.keepalive_ms) << "the server would refuse the client's pings";
  }
}

grpc::Status CallWithReplySize(const std::shared_ptr<grpc::Channel>& channel, const std::string& payload,
                               int reply_bytes) {
  std::unique_ptr<ts::Echo::Stub> stub = ts::Echo::NewStub(channel);
  grpc::ClientContext context;
  SetDeadline(context, absl::Seconds(10));
  ts::EchoRequest request;
  request.set_payload(payload);
  request.set_reply_bytes(reply_bytes);
  ts::EchoReply reply;
  return stub->Echo(&context, request, &reply);
}

TEST(ConnectionOptions, MessagesOverTheLimitAreRefusedAndTheServerGoesOn) {
  const ConnectionOptions options{.max_message_bytes = 64 << 10};
  ts::EchoService service(nullptr);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), options);
  ASSERT_TRUE(server.ok()) << server.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), options);
  // A client without our limits, so that the server's own receive limit is what refuses.
  grpc::ChannelArguments unlimited;
  unlimited.SetMaxSendMessageSize(-1);
  unlimited.SetMaxReceiveMessageSize(-1);
  const auto raw = grpc::CreateCustomChannel(server->address(), grpc::InsecureChannelCredentials(), unlimited);
  const std::string big(100 << 10, 'b');
  const std::string small(1000, 's');

  struct Case {
    std::string name;
    std::shared_ptr<grpc::Channel> channel;
    std::string payload;
    int reply_bytes;
    grpc::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"small request and reply", channel, small, 0, grpc::StatusCode::OK},
      {"our client refuses to send a big request", channel, big, 0, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {"the server refuses a big request", raw, big, 0, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {"the server keeps serving", raw, small, 0, grpc::StatusCode::OK},
      {"the server refuses to send a big reply", raw, small, 100 << 10, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {"just under the limit passes", channel, std::string((64 << 10) - 64, 'u'), 0, grpc::StatusCode::OK},
      {"still serving our client", channel, small, 0, grpc::StatusCode::OK},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const grpc::Status status = CallWithReplySize(c.channel, c.payload, c.reply_bytes);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
  }
  server->server->Shutdown();
}

// Watches `channel` for `idle` without calls; true when it stayed READY (its connection was kept).
bool StaysReady(grpc::Channel& channel, absl::Duration idle) {
  const absl::Time end = absl::Now() + idle;
  while (absl::Now() < end) {
    if (channel.GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

const ConnectionOptions kFastKeepalive{.keepalive_time = absl::Seconds(1), .keepalive_timeout = absl::Seconds(1)};

TEST(ConnectionOptions, KeepaliveOfOneSecondOnBothSidesKeepsAnIdleConnection) {
  ts::EchoService service(nullptr);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), kFastKeepalive);
  ASSERT_TRUE(server.ok()) << server.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), kFastKeepalive);
  ASSERT_TRUE(ts::CallEcho(channel, "", "first", false).ok());
  EXPECT_TRUE(StaysReady(*channel, absl::Seconds(4))) << "the connection was closed while idle (too_many_pings?)";
  const grpc::Status status = ts::CallEcho(channel, "", "after idling", false);
  EXPECT_TRUE(status.ok()) << status.error_message();
  server->server->Shutdown();
}

// The control: the same client against a server with gRPC's default ping policy is sent GOAWAY
// (too_many_pings) within a few seconds, so the test above would see a mismatch.
TEST(ConnectionOptions, KeepaliveAgainstADefaultServerIsRefused) {
  ts::EchoService service(nullptr);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), std::nullopt);
  ASSERT_TRUE(server.ok()) << server.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), kFastKeepalive);
  ASSERT_TRUE(ts::CallEcho(channel, "", "first", false).ok());
  EXPECT_FALSE(StaysReady(*channel, absl::Seconds(8))) << "a default server accepted 1 s pings: the test above shows nothing";
  server->server->Shutdown();
}

TEST(SetDeadline, ZeroTimeoutFailsAtOnceAndAnInfiniteOneSetsNone) {
  ts::EchoService service(nullptr);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), ConnectionOptions{});
  ASSERT_TRUE(server.ok()) << server.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), ConnectionOptions{});
  EXPECT_EQ(ts::CallEcho(channel, "", "x", false, absl::ZeroDuration()).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(ts::CallEcho(channel, "", "x", false, absl::Seconds(-1)).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(ts::CallEcho(channel, "", "x", false, absl::InfiniteDuration()).ok());

  grpc::ClientContext context;
  const auto before = std::chrono::system_clock::now();
  SetDeadline(context, absl::Seconds(7));
  const auto seconds = std::chrono::duration_cast<std::chrono::milliseconds>(context.deadline() - before).count();
  EXPECT_NEAR(seconds, 7000, 500);
  grpc::ClientContext infinite;
  SetDeadline(infinite, absl::InfiniteDuration());
  EXPECT_EQ(infinite.deadline(), std::chrono::system_clock::time_point::max());
  server->server->Shutdown();
}

}  // namespace
}  // namespace sparseditto::rpc
