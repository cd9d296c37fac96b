// The roles of distributed mode's callers (DESIGN.md §3.7): every call carries a token, and the token
// names one role. A service method names the roles it accepts (RoleTokens::Authorize, role_tokens.h).
//   evaluator  a GPU worker: registers, pulls evaluation jobs, heartbeats, reports
//   mutator    a mutator service worker: pulls mutation jobs, reports candidates
//   client     a user's command line: submits searches, reads status and results
//   admin      the operator: drains workers, shuts the coordinator down
// Thread-safe (pure functions).
#pragma once

#include <array>
#include <string_view>

#include "absl/status/statusor.h"

namespace sparseditto::rpc {

enum class Role { kEvaluator, kMutator, kClient, kAdmin };

// Every role, in declaration order (for tables, loops and the choices of error messages).
inline constexpr std::array<Role, 4> kAllRoles = {Role::kEvaluator, Role::kMutator, Role::kClient, Role::kAdmin};

// "evaluator", "mutator", "client" or "admin": the word token files and messages use. A value outside
// the enum gives "unknown".
std::string_view RoleName(Role role);

// The role whose RoleName is `word` (exact, lower case). InvalidArgument naming the bad word and the
// choices otherwise: "unknown role 'evaluater' (choices: evaluator, mutator, client, admin)".
absl::StatusOr<Role> ParseRole(std::string_view word);

}  // namespace sparseditto::rpc
