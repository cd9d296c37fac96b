// The shape of every unary handler of distributed mode's services: check the call's token against the
// roles that may call it, run the logic, and answer with its response or its error (status codes as
// rpc/status_conversion.h maps them). Header-only; thread-safe as RoleTokens is.
#pragma once

#include <initializer_list>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"
#include "rpc/role_tokens.h"
#include "rpc/status_conversion.h"

namespace sparseditto::rpc {

// `call` returns absl::StatusOr<Response>.
template <typename Response, typename Call>
grpc::Status Serve(const RoleTokens& tokens, const grpc::ServerContext& context, std::initializer_list<Role> roles,
                   std::string_view method, Response* response, Call call) {
  if (absl::StatusOr<Role> role = tokens.Authorize(context, roles, method); !role.ok()) {
    return ToGrpcStatus(role.status());
  }
  absl::StatusOr<Response> answer = call();
  if (!answer.ok()) return ToGrpcStatus(answer.status());
  *response = *std::move(answer);
  return grpc::Status::OK;
}

}  // namespace sparseditto::rpc
