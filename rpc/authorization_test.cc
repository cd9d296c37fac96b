// Tokens and roles over a real gRPC server on 127.0.0.1 (the Echo service of rpc/testing/).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"
#include "rpc/testing/echo_server.h"
#include "rpc/testing/test_files.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::rpc {
namespace {

namespace ts = ::sparseditto::rpc::testing_support;
using ::sparseditto::testing_support::TempFolder;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kEvaluatorToken = "evaluator-token-e1e1e1e1e1e1";
const std::string kAdminToken = "admin-token-a1a1a1a1a1a1a1a1";
const std::string kWrongToken = "wrong-token-w1w1w1w1w1w1w1w1";

struct CallCase {
  std::string name;
  std::string token;  // empty: none
  bool admin_only;
  grpc::StatusCode code;
  std::string message_or_role;  // a part of the message, or the role the server saw
};

TEST(Authorization, TokensAndRolesOverARealServer) {
  RoleTokens tokens;
  tokens.Add(Role::kEvaluator, kEvaluatorToken);
  tokens.Add(Role::kAdmin, kAdminToken);
  ts::EchoService service(&tokens);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), ConnectionOptions{});
  ASSERT_TRUE(server.ok()) << server.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), ConnectionOptions{});

  const std::vector<CallCase> cases = {
      {"no token", "", false, grpc::StatusCode::UNAUTHENTICATED, "no authorization header"},
      {"wrong token", kWrongToken, false, grpc::StatusCode::UNAUTHENTICATED, "unknown token"},
      {"wrong token on the admin method", kWrongToken, true, grpc::StatusCode::UNAUTHENTICATED, "unknown token"},
      {"evaluator calls an admin-only method", kEvaluatorToken, true, grpc::StatusCode::PERMISSION_DENIED,
       "an evaluator token cannot call Echo/AdminOnly"},
      {"evaluator calls a method for every role", kEvaluatorToken, false, grpc::StatusCode::OK, "evaluator"},
      {"admin calls the admin method", kAdminToken, true, grpc::StatusCode::OK, "admin"},
      {"admin calls a method for every role", kAdminToken, false, grpc::StatusCode::OK, "admin"},
  };
  std::vector<std::string> client_messages;
  for (const CallCase& c : cases) {
    SCOPED_TRACE(c.name);
    ts::EchoReply reply;
    const grpc::Status status = ts::CallEcho(channel, c.token, "hello", c.admin_only, absl::Seconds(10), &reply);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    if (c.code == grpc::StatusCode::OK) {
      EXPECT_EQ(reply.role(), c.message_or_role);
      EXPECT_EQ(reply.payload(), "hello");
    } else {
      EXPECT_THAT(status.error_message(), HasSubstr(c.message_or_role));
      client_messages.push_back(status.error_message());
    }
  }
  const std::vector<std::string> log = service.log();
  EXPECT_EQ(log.size(), 4u);
  for (const std::vector<std::string>* messages : std::initializer_list<const std::vector<std::string>*>{&client_messages, &log}) {
    for (const std::string& message : *messages) {
      for (const std::string& token : {kEvaluatorToken, kAdminToken, kWrongToken}) {
        EXPECT_THAT(message, Not(HasSubstr(token)));
      }
    }
  }
  server->server->Shutdown();
}

TEST(Authorization, TokenFileOnTheServerAndTokenFileOnTheClient) {
  TempFolder folder("rpc_authorization");
  ASSERT_TRUE(folder.ok());
  ASSERT_TRUE(ts::WriteFileWithMode(folder / "server_tokens", "# roles\nclient " + kWrongToken + "\nadmin " + kAdminToken + "\n", 0600));
  ASSERT_TRUE(ts::WriteFileWithMode(folder / "client_token", kAdminToken + "\n", 0600));
  absl::StatusOr<RoleTokens> tokens = RoleTokens::FromFile((folder / "server_tokens").string());
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ts::EchoService service(&*tokens);
  absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service, grpc::InsecureServerCredentials(), ConnectionOptions{});
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> token = LoadClientToken((folder / "client_token").string(), nullptr);
  ASSERT_TRUE(token.ok()) << token.status();
  const auto channel = MakeChannel(server->address(), grpc::InsecureChannelCredentials(), ConnectionOptions{});
  ts::EchoReply reply;
  const grpc::Status status = ts::CallEcho(channel, *token, "x", /*admin_only=*/true, absl::Seconds(10), &reply);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.role(), "admin");
  server->server->Shutdown();
}

}  // namespace
}  // namespace sparseditto::rpc
