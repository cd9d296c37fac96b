#include "rpc/role_tokens.h"

#include <unistd.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/testing/test_files.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::rpc {
namespace {

using ::sparseditto::rpc::testing_support::ScopedEnv;
using ::sparseditto::rpc::testing_support::WriteFileWithMode;
using ::sparseditto::testing_support::TempFolder;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kEval1 = "evaluator-token-000000000001";
const std::string kEval2 = "evaluator-token-000000000002";
const std::string kAdmin = "admin-token-aaaaaaaaaaaaaaaa";
const std::string kClient = "client-token-cccccccccccccccc";
const std::string kShort = "short-tok-12";  // 12 characters
const std::vector<std::string> kAllTokenTexts = {kEval1, kEval2, kAdmin, kClient, kShort};

// Metadata holding exactly `headers` (name, value); the strings must outlive the map.
std::multimap<grpc::string_ref, grpc::string_ref> Metadata(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::multimap<grpc::string_ref, grpc::string_ref> metadata;
  for (const auto& [name, value] : headers) metadata.emplace(name, value);
  return metadata;
}

absl::StatusOr<Role> RoleOf(const RoleTokens& tokens, const std::string& token) {
  const std::vector<std::pair<std::string, std::string>> headers = {{"authorization", "Bearer " + token}};
  return tokens.Authenticate(Metadata(headers));
}

void ExpectNoTokenText(absl::string_view message) {
  for (const std::string& token : kAllTokenTexts) EXPECT_THAT(std::string(message), Not(HasSubstr(token)));
}

struct TokenFileCase {
  std::string name;
  std::optional<std::string> content;  // nullopt: no file
  mode_t mode = 0600;
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string where;    // expected after the path: ":3" for a line, "" for the file
  std::string message;  // a part of the message
};

TEST(RoleTokensFromFile, Table) {
  const std::vector<TokenFileCase> cases = {
      {"good file with comments, blanks, CRLF and several tokens per role",
       "# the coordinator's tokens\n\nevaluator " + kEval1 + "\n   # rotated in:\n\tevaluator\t" + kEval2 +
           "  \r\nadmin " + kAdmin + "\n",
       0600, absl::StatusCode::kOk, "", ""},
      {"owner read-only is fine", "client " + kClient + "\n", 0400, absl::StatusCode::kOk, "", ""},
      {"unknown role word", "evaluator " + kEval1 + "\nevaluater " + kEval2 + "\n", 0600,
       absl::StatusCode::kInvalidArgument, ":2", "unknown role 'evaluater' (choices: evaluator, mutator, client, admin)"},
      {"token where the role belongs is not quoted", "\n" + kEval1 + " evaluator\n", 0600,
       absl::StatusCode::kInvalidArgument, ":2", "is not a role"},
      {"short token", "mutator " + kShort + "\n", 0600, absl::StatusCode::kInvalidArgument, ":1",
       "a token of 12 characters; at least 16 are needed"},
      {"three words", "admin " + kAdmin + " # trailing comment\n", 0600, absl::StatusCode::kInvalidArgument, ":1",
       "expected '<role> <token>', found 5 words"},
      {"a token alone", "# x\n" + kAdmin + "\n", 0600, absl::StatusCode::kInvalidArgument, ":2", "found 1 words"},
      {"a control byte in the token", "admin " + kAdmin + "\x01x\n", 0600, absl::StatusCode::kInvalidArgument, ":1",
       "not printable ASCII"},
      {"one token for two roles", "evaluator " + kEval1 + "\nadmin " + kEval1 + "\n", 0600,
       absl::StatusCode::kInvalidArgument, ":2", "the same token as "},
      {"no token at all", "# nothing yet\n\n", 0600, absl::StatusCode::kInvalidArgument, "", "no token in the file"},
      {"group-readable file", "admin " + kAdmin + "\n", 0640, absl::StatusCode::kPermissionDenied, "",
       "readable or writable by group or others (mode 0640)"},
      {"other-readable file", "admin " + kAdmin + "\n", 0604, absl::StatusCode::kPermissionDenied, "", "chmod 600"},
      {"group-writable file", "admin " + kAdmin + "\n", 0620, absl::StatusCode::kPermissionDenied, "", "mode 0620"},
      {"missing file", std::nullopt, 0600, absl::StatusCode::kNotFound, "", "cannot open: No such file"},
  };
  for (const TokenFileCase& c : cases) {
    SCOPED_TRACE(c.name);
    TempFolder folder("rpc_token_file");
    ASSERT_TRUE(folder.ok());
    const std::string path = (folder / "tokens.txt").string();
    if (c.content.has_value()) {
      ASSERT_TRUE(WriteFileWithMode(path, *c.content, c.mode));
    }
    absl::StatusOr<RoleTokens> tokens = RoleTokens::FromFile(path);
    if (c.code != absl::StatusCode::kOk) {
      ASSERT_FALSE(tokens.ok());
      EXPECT_EQ(tokens.status().code(), c.code) << tokens.status();
      EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(path + c.where + (c.where.empty() ? "" : ": ")));
      EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(c.message));
      ExpectNoTokenText(tokens.status().message());
      continue;
    }
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    EXPECT_FALSE(tokens->empty());
  }
}

TEST(RoleTokensFromFile, GoodFileMapsEveryTokenToItsRole) {
  TempFolder folder("rpc_token_file");
  const std::string path = (folder / "tokens.txt").string();
  ASSERT_TRUE(WriteFileWithMode(path, "evaluator " + kEval1 + "\nevaluator " + kEval2 + "\nadmin " + kAdmin + "\n", 0600));
  absl::StatusOr<RoleTokens> tokens = RoleTokens::FromFile(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(RoleOf(*tokens, kEval1).value(), Role::kEvaluator);
  EXPECT_EQ(RoleOf(*tokens, kEval2).value(), Role::kEvaluator);
  EXPECT_EQ(RoleOf(*tokens, kAdmin).value(), Role::kAdmin);
  EXPECT_EQ(RoleOf(*tokens, kClient).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(RoleTokensFromFile, NotARegularFile) {
  TempFolder folder("rpc_token_file");
  absl::StatusOr<RoleTokens> tokens = RoleTokens::FromFile(folder.path().string());
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tokens.status().message()), HasSubstr("not a regular file"));
}

TEST(RoleTokensFromFile, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads a file of mode 0000";
  TempFolder folder("rpc_token_file");
  const std::string unreadable = (folder / "unreadable.txt").string();
  ASSERT_TRUE(WriteFileWithMode(unreadable, "admin " + kAdmin + "\n", 0000));
  absl::StatusOr<RoleTokens> tokens = RoleTokens::FromFile(unreadable);
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(unreadable));
}

struct EnvironmentCase {
  std::string name;
  std::map<std::string, std::string> variables;  // the others are unset
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string message;
  std::vector<std::pair<std::string, Role>> accepted;  // when OK
};

TEST(RoleTokensFromEnvironment, Table) {
  const std::vector<EnvironmentCase> cases = {
      {"nothing set gives no tokens", {}, absl::StatusCode::kOk, "", {}},
      {"two roles",
       {{"SPARSEDITTO_TOKEN_EVALUATOR", kEval1}, {"SPARSEDITTO_TOKEN_ADMIN", kAdmin}},
       absl::StatusCode::kOk,
       "",
       {{kEval1, Role::kEvaluator}, {kAdmin, Role::kAdmin}}},
      {"rotation: two tokens in one variable",
       {{"SPARSEDITTO_TOKEN_EVALUATOR", kEval1 + " " + kEval2}, {"SPARSEDITTO_TOKEN_CLIENT", kClient}},
       absl::StatusCode::kOk,
       "",
       {{kEval1, Role::kEvaluator}, {kEval2, Role::kEvaluator}, {kClient, Role::kClient}}},
      {"short token", {{"SPARSEDITTO_TOKEN_MUTATOR", kShort}}, absl::StatusCode::kInvalidArgument,
       "$SPARSEDITTO_TOKEN_MUTATOR: a token of 12 characters", {}},
      {"set but empty", {{"SPARSEDITTO_TOKEN_ADMIN", " "}}, absl::StatusCode::kInvalidArgument,
       "$SPARSEDITTO_TOKEN_ADMIN is set but empty", {}},
      {"one token for two roles",
       {{"SPARSEDITTO_TOKEN_EVALUATOR", kAdmin}, {"SPARSEDITTO_TOKEN_ADMIN", kAdmin}},
       absl::StatusCode::kInvalidArgument,
       "$SPARSEDITTO_TOKEN_ADMIN: the same token as $SPARSEDITTO_TOKEN_EVALUATOR",
       {}},
  };
  for (const EnvironmentCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::unique_ptr<ScopedEnv>> env;
    for (Role role : kAllRoles) {
      const std::string name = TokenEnvironmentVariable(role);
      const auto it = c.variables.find(name);
      env.push_back(std::make_unique<ScopedEnv>(
          name, it == c.variables.end() ? std::nullopt : std::optional<std::string>(it->second)));
    }
    absl::StatusOr<RoleTokens> tokens = RoleTokens::FromEnvironment();
    if (c.code != absl::StatusCode::kOk) {
      ASSERT_FALSE(tokens.ok());
      EXPECT_EQ(tokens.status().code(), c.code);
      EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(c.message));
      ExpectNoTokenText(tokens.status().message());
      continue;
    }
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    EXPECT_EQ(tokens->empty(), c.accepted.empty());
    for (const auto& [token, role] : c.accepted) EXPECT_EQ(RoleOf(*tokens, token).value(), role);
  }
}

struct ClientTokenCase {
  std::string name;
  std::optional<std::string> file_content;  // nullopt: no path given
  mode_t mode = 0600;
  std::optional<std::string> env_value;     // of SPARSEDITTO_TEST_CLIENT_TOKEN
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string expected;  // the token, or a part of the message
};

TEST(LoadClientToken, Table) {
  const std::vector<ClientTokenCase> cases = {
      {"file, trimmed", "\n  " + kClient + " \n", 0600, std::nullopt, absl::StatusCode::kOk, kClient},
      {"the file wins over the variable", kClient + "\n", 0400, kAdmin, absl::StatusCode::kOk, kClient},
      {"variable when no file is given", std::nullopt, 0600, kAdmin + "\n", absl::StatusCode::kOk, kAdmin},
      {"neither", std::nullopt, 0600, std::nullopt, absl::StatusCode::kNotFound,
       "no token file given and $SPARSEDITTO_TEST_CLIENT_TOKEN is not set"},
      {"empty variable is none", std::nullopt, 0600, "", absl::StatusCode::kNotFound, "is not set"},
      {"group-readable file", kClient + "\n", 0640, std::nullopt, absl::StatusCode::kPermissionDenied, "chmod 600"},
      {"blank file", " \n\n", 0600, kAdmin, absl::StatusCode::kInvalidArgument, "empty (no token)"},
      {"short token in the file", kShort + "\n", 0600, std::nullopt, absl::StatusCode::kInvalidArgument,
       "a token of 12 characters"},
      {"a space inside", "abc " + kClient, 0600, std::nullopt, absl::StatusCode::kInvalidArgument,
       "not printable ASCII"},
      {"short token in the variable", std::nullopt, 0600, kShort, absl::StatusCode::kInvalidArgument,
       "$SPARSEDITTO_TEST_CLIENT_TOKEN: a token of 12 characters"},
  };
  for (const ClientTokenCase& c : cases) {
    SCOPED_TRACE(c.name);
    TempFolder folder("rpc_client_token");
    std::string path;
    if (c.file_content.has_value()) {
      path = (folder / "token").string();
      ASSERT_TRUE(WriteFileWithMode(path, *c.file_content, c.mode));
    }
    ScopedEnv env("SPARSEDITTO_TEST_CLIENT_TOKEN", c.env_value);
    absl::StatusOr<std::string> token = LoadClientToken(path, "SPARSEDITTO_TEST_CLIENT_TOKEN");
    if (c.code == absl::StatusCode::kOk) {
      ASSERT_TRUE(token.ok()) << token.status();
      EXPECT_EQ(*token, c.expected);
      continue;
    }
    ASSERT_FALSE(token.ok());
    EXPECT_EQ(token.status().code(), c.code) << token.status();
    EXPECT_THAT(std::string(token.status().message()), HasSubstr(c.expected));
    if (!path.empty()) {
      EXPECT_THAT(std::string(token.status().message()), HasSubstr(path));
    }
    ExpectNoTokenText(token.status().message());
  }
  EXPECT_EQ(LoadClientToken("", nullptr).status().code(), absl::StatusCode::kNotFound);
  TempFolder folder("rpc_client_token");
  EXPECT_EQ(LoadClientToken((folder / "missing").string(), nullptr).status().code(), absl::StatusCode::kNotFound);
}

struct HeaderCase {
  std::string name;
  std::vector<std::pair<std::string, std::string>> headers;
  absl::StatusCode code;
  std::string message;
};

TEST(RoleTokensAuthenticate, HeaderTable) {
  RoleTokens tokens;
  tokens.Add(Role::kEvaluator, kEval1);
  tokens.Add(Role::kAdmin, kAdmin);
  const std::string wrong = "wrong-token-but-long-enough-0123";
  const std::vector<HeaderCase> cases = {
      {"right token", {{"authorization", "Bearer " + kAdmin}}, absl::StatusCode::kOk, ""},
      {"scheme in any case, several spaces", {{"authorization", "bEARER   " + kEval1}}, absl::StatusCode::kOk, ""},
      {"other headers do not matter", {{"x-trace", "1"}, {"authorization", "Bearer " + kEval1}}, absl::StatusCode::kOk,
       ""},
      {"no header", {{"x-trace", "1"}}, absl::StatusCode::kUnauthenticated, "no authorization header"},
      {"unknown token", {{"authorization", "Bearer " + wrong}}, absl::StatusCode::kUnauthenticated, "unknown token"},
      {"a token that is a prefix", {{"authorization", "Bearer " + kAdmin.substr(0, 20)}},
       absl::StatusCode::kUnauthenticated, "unknown token"},
      {"another scheme", {{"authorization", "Basic " + kAdmin}}, absl::StatusCode::kUnauthenticated,
       "not 'Bearer <token>'"},
      {"no space after the scheme", {{"authorization", "Bearer" + kAdmin}}, absl::StatusCode::kUnauthenticated,
       "not 'Bearer <token>'"},
      {"the scheme alone", {{"authorization", "Bearer "}}, absl::StatusCode::kUnauthenticated, "not 'Bearer <token>'"},
      {"two words", {{"authorization", "Bearer " + kAdmin + " " + wrong}}, absl::StatusCode::kUnauthenticated,
       "not 'Bearer <token>'"},
      {"two headers", {{"authorization", "Bearer " + kAdmin}, {"authorization", "Bearer " + wrong}},
       absl::StatusCode::kUnauthenticated, "more than one authorization header"},
  };
  for (const HeaderCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Role> role = tokens.Authenticate(Metadata(c.headers));
    EXPECT_EQ(role.status().code(), c.code) << role.status();
    EXPECT_THAT(std::string(role.status().message()), HasSubstr(c.message));
    ExpectNoTokenText(role.status().message());
    EXPECT_THAT(std::string(role.status().message()), Not(HasSubstr(wrong)));
  }
  const std::vector<std::pair<std::string, std::string>> admin = {{"authorization", "Bearer " + kAdmin}};
  absl::StatusOr<Role> none = RoleTokens().Authenticate(Metadata(admin));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("accepts no token"));
}

TEST(TokenEnvironmentVariable, NamesPerRole) {
  EXPECT_EQ(TokenEnvironmentVariable(Role::kEvaluator), "SPARSEDITTO_TOKEN_EVALUATOR");
  EXPECT_EQ(TokenEnvironmentVariable(Role::kMutator), "SPARSEDITTO_TOKEN_MUTATOR");
  EXPECT_EQ(TokenEnvironmentVariable(Role::kClient), "SPARSEDITTO_TOKEN_CLIENT");
  EXPECT_EQ(TokenEnvironmentVariable(Role::kAdmin), "SPARSEDITTO_TOKEN_ADMIN");
}

}  // namespace
}  // namespace sparseditto::rpc
