// absl::Status, the project's error type, across gRPC: a service handler returns ToGrpcStatus(status)
// and a client turns the call's grpc::Status back with FromGrpcStatus, so a code (NOT_FOUND,
// RESOURCE_EXHAUSTED, UNAVAILABLE for "retry elsewhere") means on the client what it meant on the
// server. The numeric codes of absl::StatusCode and grpc::StatusCode are the same, 0 to 16.
// Not carried: absl payloads (such as the NonRetryable mark, common/non_retryable.h) and gRPC's
// error_details; say what a caller must act on in the code. Thread-safe (pure functions).
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace sparseditto::rpc {

// Same code and message. A code outside 0..16 becomes UNKNOWN with the message kept.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Same code and message (an OK status has no message). A code outside 0..16 becomes UNKNOWN.
absl::Status FromGrpcStatus(const grpc::Status& status);

// A coordinator's answer that retrying will not change (a bad or wrong-role token, a request it calls
// invalid): a worker stops instead of backing off.
inline bool IsPermanentRefusal(const absl::Status& s) {
  return absl::IsUnauthenticated(s) || absl::IsPermissionDenied(s) || absl::IsInvalidArgument(s);
}

}  // namespace sparseditto::rpc
