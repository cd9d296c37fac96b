#include "coordinator/server/http_server.h"

#include <sys/socket.h>

#include <charconv>

#include "fmt/format.h"
#include "httplib.h"

namespace sparseditto {
namespace {

// SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, with which a second coordinator on the
// same port would silently share it.
void ExclusiveSocketOptions(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

absl::StatusOr<std::pair<std::string, int>> SplitListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const auto bad = [&listen](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("--http-listen {}: {} (expected HOST:PORT, e.g. 127.0.0.1:8080 "
                                                  "or :0 for a port the OS picks)",
                                                  listen, why));
  };
  if (colon == std::string::npos) return bad("no port");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  const std::string_view port_text = std::string_view(listen).substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return bad("the port is not a number from 0 to 65535");
  }
  return std::make_pair(host, port);
}

HttpRequest ToApiRequest(const httplib::Request& req) {
  HttpRequest out;
  out.method = req.method;
  out.path = req.path;
  out.body = req.body;
  for (const auto& [key, value] : req.params) out.query.emplace(key, value);
  const size_t n = req.get_header_value_count("Authorization");
  for (size_t i = 0; i < n; ++i) out.authorization.push_back(req.get_header_value("Authorization", i));
  return out;
}

void ToResponse(HttpReply reply, httplib::Response& res) {
  res.status = reply.status;
  for (auto& [key, value] : reply.headers) res.set_header(key, value);
  if (!reply.stream) {
    res.set_content(reply.body, reply.content_type);
    return;
  }
  // The stream runs on this connection's thread once the headers are out, and holds its place among
  // the open streams until httplib drops the provider.
  res.set_chunked_content_provider(reply.content_type, [stream = std::move(reply.stream)](size_t, httplib::DataSink& sink) {
    stream([&sink](std::string_view chunk) { return sink.write(chunk.data(), chunk.size()); },
           [&sink] { return !sink.is_writable(); });
    sink.done();
    return true;
  });
}

std::string StatusText(int status) {
  switch (status) {
    case 400: return "malformed HTTP request";
    case 413: return "request body too large";
    case 414: return "request line too long";
    default: return fmt::format("HTTP status {}", status);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpApi* api, HttpServerOptions options) {
  auto address = SplitListen(options.listen);
  if (!address.ok()) return address.status();
  std::unique_ptr<HttpServer> server(new HttpServer());
  if (options.tls) {
    const rpc::ServerTls& tls = *options.tls;
    auto ssl = std::make_unique<httplib::SSLServer>(
        tls.cert_chain_path.c_str(), tls.private_key_path.c_str(),
        tls.client_ca_path.empty() ? nullptr : tls.client_ca_path.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(fmt::format("HTTPS: cannot load --tls-cert {}, --tls-key {}{}",
                                                    tls.cert_chain_path, tls.private_key_path,
                                                    tls.client_ca_path.empty() ? "" : " or --tls-client-ca " +
                                                                                          tls.client_ca_path));
    }
    server->server_ = std::move(ssl);
  } else {
    server->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *server->server_;
  s.set_socket_options(ExclusiveSocketOptions);
  // Room for every stream and as many other calls at once.
  const size_t threads = static_cast<size_t>(api->options().max_streams) + 16;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(api->options().max_body_bytes);
  const auto io = absl::ToChronoMicroseconds(options.io_timeout);
  s.set_read_timeout(io);
  s.set_write_timeout(io);
  s.set_keep_alive_timeout(std::max<time_t>(1, absl::ToInt64Seconds(options.keep_alive)));
  const auto handle = [api](const httplib::Request& req, httplib::Response& res) {
    ToResponse(api->Handle(ToApiRequest(req)), res);
  };
  for (auto route : {&httplib::Server::Get, &httplib::Server::Post, &httplib::Server::Put,
                     &httplib::Server::Delete, &httplib::Server::Patch, &httplib::Server::Options}) {
    (s.*route)(".*", handle);
  }
  // httplib's own refusals (a body over the limit, a malformed request) get the API's JSON errors.
  s.set_error_handler([api](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // an answer of the API's
    const std::string where = fmt::format("{} {}", req.method, req.path);
    std::string message = StatusText(res.status);
    if (res.status == 413) message = fmt::format("request body over the {} bytes allowed", api->options().max_body_bytes);
    // httplib limits a form-encoded body (curl -d's default type) to 8 KiB, whatever its length.
    if (res.status == 413 && req.get_header_value("Content-Type") == "application/x-www-form-urlencoded") {
      message = "a form-encoded body may have 8192 bytes at most: send the JSON with 'Content-Type: application/json'";
    }
    HttpReply reply = HttpApi::Error(absl::InvalidArgumentError(message), where);
    if (res.status >= 500) reply = HttpApi::Error(absl::InternalError(message), where);
    res.set_content(reply.body, reply.content_type);
  });
  const auto& [host, port] = *address;
  server->port_ = port == 0 ? s.bind_to_any_port(host) : (s.bind_to_port(host, port) ? port : -1);
  if (server->port_ <= 0) {
    return absl::UnavailableError(
        fmt::format("--http-listen {}: cannot listen there (in use, or not an address of this machine)", options.listen));
  }
  server->thread_ = std::thread([&s] { s.listen_after_bind(); });
  // httplib's stop() does nothing before the thread runs its loop, which would then never end: Start
  // returns once it runs (its first statement), so a Stop right after Start is safe.
  while (!s.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return server;
}

void HttpServer::Stop() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace sparseditto
