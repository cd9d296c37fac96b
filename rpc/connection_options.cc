#include "rpc/connection_options.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "grpcpp/create_channel.h"

namespace sparseditto::rpc {
namespace {

ConnectionOptions WithDefaults(const ConnectionOptions& options) {
  const ConnectionOptions defaults;
  ConnectionOptions valid = options;
  if (valid.max_message_bytes <= 0) valid.max_message_bytes = defaults.max_message_bytes;
  if (valid.keepalive_time <= absl::ZeroDuration()) valid.keepalive_time = defaults.keepalive_time;
  if (valid.keepalive_timeout <= absl::ZeroDuration()) valid.keepalive_timeout = defaults.keepalive_timeout;
  if (valid.max_reconnect_backoff <= absl::ZeroDuration()) valid.max_reconnect_backoff = defaults.max_reconnect_backoff;
  return valid;
}

// gRPC's channel arguments are int milliseconds; longer durations are clamped (24 days).
int Milliseconds(absl::Duration d) {
  const int64_t ms = absl::ToInt64Milliseconds(d);
  return ms > INT_MAX ? INT_MAX : (ms < 1 ? 1 : static_cast<int>(ms));
}

}  // namespace

absl::Duration ServerMinPingInterval(const ConnectionOptions& options) {
  return WithDefaults(options).keepalive_time / 2;
}

void ApplyServerOptions(grpc::ServerBuilder& builder, const ConnectionOptions& options) {
  const ConnectionOptions valid = WithDefaults(options);
  builder.SetMaxReceiveMessageSize(valid.max_message_bytes);
  builder.SetMaxSendMessageSize(valid.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, Milliseconds(valid.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, Milliseconds(valid.keepalive_timeout));
  // On a server this also governs the policy: without it, a client's pings while no call is in flight
  // count as strikes whatever their interval.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             Milliseconds(ServerMinPingInterval(valid)));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // gRPC binds with SO_REUSEPORT by default: a second coordinator started on the same port would then
  // share it with the first, the kernel splitting the workers' connections between them. Refuse.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // The synchronous API runs each call on a thread of its own and lets a thread that finished a call
  // end when more than MAX_POLLERS (gRPC's default: 2) are idle: a coordinator whose calls block for a
  // synced journal write (milliseconds) then makes and ends a thread per call. With 2,048 evaluators
  // on 2 cores that churn cost a tenth of its CPU and doubled its median latency (capacity_bench).
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, kServerIdleThreads);
}

grpc::ChannelArguments MakeChannelArguments(const ConnectionOptions& options) {
  const ConnectionOptions valid = WithDefaults(options);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(valid.max_message_bytes);
  args.SetMaxSendMessageSize(valid.max_message_bytes);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, Milliseconds(valid.keepalive_time));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, Milliseconds(valid.keepalive_timeout));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // gRPC's default (2) stops keepalive pings after two without data: an idle connection would go
  // unchecked until its next call.
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, Milliseconds(valid.max_reconnect_backoff));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              Milliseconds(std::min(absl::Seconds(1), valid.max_reconnect_backoff)));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, Milliseconds(std::min(absl::Milliseconds(100), valid.max_reconnect_backoff)));
  return args;
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           std::shared_ptr<grpc::ChannelCredentials> credentials,
                                           const ConnectionOptions& options) {
  return grpc::CreateCustomChannel(target, credentials, MakeChannelArguments(options));
}

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  // Beyond a century is no deadline either (and now + it would overflow the clock's count).
  if (timeout > absl::Hours(24 * 365 * 100)) {
    context.set_deadline(std::chrono::system_clock::time_point::max());
    return;
  }
  // A deadline already past: "now" itself could still be met by a quick call, as gRPC rounds it up to
  // its clock's millisecond.
  if (timeout <= absl::ZeroDuration()) timeout = absl::Seconds(-1);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(absl::ToChronoNanoseconds(timeout)));
}

}  // namespace sparseditto::rpc
