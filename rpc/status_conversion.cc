#include "rpc/status_conversion.h"

#include <string>

namespace sparseditto::rpc {
namespace {

// UNAUTHENTICATED (16) is the last code both define.
constexpr int kLastCode = 16;

bool Known(int code) { return code >= 0 && code <= kLastCode; }

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const int code = static_cast<int>(status.code());
  return grpc::Status(Known(code) ? static_cast<grpc::StatusCode>(code) : grpc::StatusCode::UNKNOWN,
                      std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const int code = static_cast<int>(status.error_code());
  return absl::Status(Known(code) ? static_cast<absl::StatusCode>(code) : absl::StatusCode::kUnknown,
                      status.error_message());
}

}  // namespace sparseditto::rpc
