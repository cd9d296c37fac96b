#include "rpc/roles.h"

#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace sparseditto::rpc {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kEvaluator:
      return "evaluator";
    case Role::kMutator:
      return "mutator";
    case Role::kClient:
      return "client";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

absl::StatusOr<Role> ParseRole(std::string_view word) {
  std::string choices;
  for (Role role : kAllRoles) {
    if (word == RoleName(role)) return role;
    if (!choices.empty()) choices += ", ";
    choices += RoleName(role);
  }
  return absl::InvalidArgumentError(fmt::format("unknown role '{}' (choices: {})", word, choices));
}

}  // namespace sparseditto::rpc
