#include "rpc/roles.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::rpc {
namespace {

using ::testing::HasSubstr;

TEST(Roles, NameAndParseRoundTripForEveryRole) {
  const std::vector<std::pair<Role, std::string>> names = {
      {Role::kEvaluator, "evaluator"}, {Role::kMutator, "mutator"}, {Role::kClient, "client"}, {Role::kAdmin, "admin"}};
  ASSERT_EQ(names.size(), kAllRoles.size());
  for (const auto& [role, name] : names) {
    SCOPED_TRACE(name);
    EXPECT_EQ(RoleName(role), name);
    absl::StatusOr<Role> parsed = ParseRole(name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, role);
  }
}

TEST(Roles, ParseRefusesOtherWordsNamingThemAndTheChoices) {
  for (const std::string word : {"", "Evaluator", "evaluater", "admin ", "root"}) {
    SCOPED_TRACE(word);
    absl::StatusOr<Role> parsed = ParseRole(word);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("'" + word + "'"));
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("choices: evaluator, mutator, client, admin"));
  }
}

}  // namespace
}  // namespace sparseditto::rpc
