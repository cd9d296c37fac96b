// HttpApi (http_api.h) on a socket, with cpp-httplib (Debian's libcpp-httplib: a well-kept HTTP/1.1
// server with TLS through OpenSSL, so none of HTTP's parsing is ours). One thread accepts; a pool of
// threads answers, one connection each at a time.
// Ownership: borrows the HttpApi, which must outlive the server.
// Thread-safety: Start, port and Stop may be called from any thread; Stop is idempotent.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/server/http_api.h"
#include "rpc/tls.h"

namespace httplib {
class Server;
}

namespace sparseditto {

struct HttpServerOptions {
  // HOST:PORT to listen on; port 0: one the OS picks (port() tells it); an empty host ("":8080):
  // every interface. "[::1]:8080" for IPv6. Required.
  std::string listen;
  // Set: HTTPS with these PEM files (the gRPC port's --tls-* files); with client_ca_path, clients must
  // present a certificate signed by it. nullopt: plain HTTP, for loopback and trusted networks only.
  std::optional<rpc::ServerTls> tls;
  // A request whose headers or body do not arrive within this, or an answer the client does not
  // read within it, ends its connection: 10 s, so a slow or stalled client cannot hold a thread.
  absl::Duration io_timeout = absl::Seconds(10);
  // An idle kept-alive connection is closed after this: 5 s (it holds a thread while it waits).
  absl::Duration keep_alive = absl::Seconds(5);
};

class HttpServer {
 public:
  // Binds and starts serving on a thread of its own. The listening socket does not share its port
  // (no SO_REUSEPORT), so a port in use is an error, as for gRPC. Errors: InvalidArgument for a
  // listen address that is not HOST:PORT or TLS files that do not load (naming them); Unavailable
  // when the address cannot be bound (in use, not this machine's).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpApi* api, HttpServerOptions options);
  ~HttpServer();

  int port() const { return port_; }

  // Stops accepting and waits for the requests in progress. An event stream ends when its run ends or
  // its queue closes (RunQueue::Close): close the queue first, or this waits for the run.
  void Stop();

 private:
  HttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace sparseditto
