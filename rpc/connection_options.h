// The connection settings that must agree between distributed mode's servers and clients (DESIGN.md
// §3.7: deadlines and size limits on every call), applied from one struct on both sides so they
// cannot drift apart. Thread-safe (no shared state).
#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"

namespace sparseditto::rpc {

// A value that is not positive reads as its default (ApplyServerOptions and MakeChannelArguments say
// so by applying the default); give the same struct to both sides.
struct ConnectionOptions {
  // The largest message either side sends or accepts. A Task, a Candidate (kernel source of tens of
  // KiB) and an EvalResult together are well under 1 MiB, and matrices are never sent (each machine
  // builds them from the task's pattern spec and seed), so 16 MiB leaves room for batches of jobs and
  // long logs while a hostile or broken peer cannot make the other side buffer gigabytes. A message
  // over the limit fails that call with RESOURCE_EXHAUSTED; the connection and the server go on.
  int max_message_bytes = 16 << 20;
  // The client pings an idle connection this often, so that a dead coordinator or a NAT that dropped
  // the flow is noticed within keepalive_time + keepalive_timeout instead of at the next call; the
  // server pings its clients as often, so a vanished worker's long poll ends. 30 s is below the idle
  // timeouts of common NATs and load balancers (60 s and more).
  absl::Duration keepalive_time = absl::Seconds(30);
  // How long a ping may go unanswered before the connection is closed (its calls fail UNAVAILABLE).
  absl::Duration keepalive_timeout = absl::Seconds(10);
  // The client's longest wait between two tries to reconnect a lost connection (gRPC's own default
  // grows to 120 s). A coordinator restarted after kill -9 gives the jobs its workers held a fresh
  // lease: a worker must be back well within it to report, or its job is evaluated again elsewhere.
  // 5 s; the worker's own backoff (with jitter) spaces its calls beyond that. Client side only.
  absl::Duration max_reconnect_backoff = absl::Seconds(5);
};

// The least interval between a client's pings that the server accepts without a strike (gRPC sends
// GOAWAY "too_many_pings" after two strikes): half the keepalive_time, so a client pinging every
// keepalive_time, a little early because of timer slack, is never taken for a flood.
absl::Duration ServerMinPingInterval(const ConnectionOptions& options);

// Sets on `builder`: the send and receive size limits; keepalive pings at keepalive_time with
// keepalive_timeout, also without calls in flight; and the ping policy that accepts the client side's
// pings (ServerMinPingInterval, also without calls in flight); no SO_REUSEPORT, so that a port in
// use (another coordinator) fails the bind instead of being shared; and up to kServerIdleThreads idle
// threads kept (per completion queue) for the synchronous API's calls instead of ended after each
// call. Call before BuildAndStart.
inline constexpr int kServerIdleThreads = 64;
void ApplyServerOptions(grpc::ServerBuilder& builder, const ConnectionOptions& options);

// The matching client side: the size limits, keepalive pings at keepalive_time with keepalive_timeout,
// sent also without calls in flight and with no cap on pings between data frames (so an idle worker's
// connection stays checked). Add more arguments to the result as needed.
grpc::ChannelArguments MakeChannelArguments(const ConnectionOptions& options);

// A channel to `target` ("host:port", or any gRPC target URI) with `credentials` (tls.h) and
// MakeChannelArguments(options). Connects lazily, at the first call. nullptr credentials give a channel
// whose every call fails (gRPC's lame channel): never insecure by accident.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           std::shared_ptr<grpc::ChannelCredentials> credentials,
                                           const ConnectionOptions& options);

// Every client call gets a deadline: context.set_deadline(now + timeout). gRPC sends it as a duration
// (grpc-timeout), so no wall clocks are compared across machines. A timeout that is not positive makes
// the call fail at once with DEADLINE_EXCEEDED; absl::InfiniteDuration() (or over a century) means no
// deadline, and must be asked for. Call before the call starts.
void SetDeadline(grpc::ClientContext& context, absl::Duration timeout);

}  // namespace sparseditto::rpc
