#include "llm_mutator/testing/fake_llm_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

#include "fmt/format.h"

namespace sparseditto::llm::testing {
namespace {

constexpr size_t kMaxRequestBytes = 64 << 20;

bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Parses the head (request line and headers) of `data`; false when malformed.
bool ParseHead(std::string_view head, RecordedRequest* r) {
  size_t line_end = head.find("\r\n");
  const std::string_view request_line = head.substr(0, line_end);
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  r->method = std::string(request_line.substr(0, sp1));
  r->path = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
  while (line_end != std::string_view::npos && line_end + 2 < head.size()) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string_view line = head.substr(start, line_end == std::string_view::npos ? head.npos : line_end - start);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    r->headers[Lower(std::string(line.substr(0, colon)))] = std::string(value);
  }
  return true;
}

}  // namespace

std::unique_ptr<FakeLlmServer> FakeLlmServer::Start(bool concurrent) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int pipe_fds[2];
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || pipe2(pipe_fds, O_CLOEXEC) != 0) {
    close(fd);
    return nullptr;
  }
  std::unique_ptr<FakeLlmServer> server(new FakeLlmServer(fd, ntohs(addr.sin_port), pipe_fds[0], pipe_fds[1], concurrent));
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

FakeLlmServer::FakeLlmServer(int listen_fd, int port, int wake_read, int wake_write, bool concurrent)
    : listen_fd_(listen_fd), port_(port), wake_read_(wake_read), wake_write_(wake_write), concurrent_(concurrent) {}

FakeLlmServer::~FakeLlmServer() {
  const char byte = 'x';
  (void)!write(wake_write_, &byte, 1);
  if (thread_.joinable()) thread_.join();
  for (std::thread& t : connections_) t.join();  // each ends at once: the wake pipe is readable
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

std::string FakeLlmServer::url() const { return fmt::format("http://127.0.0.1:{}", port_); }

void FakeLlmServer::Enqueue(ScriptedResponse response) {
  absl::MutexLock lock(&mu_);
  script_.push_back(std::move(response));
}

std::vector<RecordedRequest> FakeLlmServer::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

void FakeLlmServer::SetResponder(std::function<ScriptedResponse(const RecordedRequest&, size_t)> responder) {
  absl::MutexLock lock(&mu_);
  responder_ = std::move(responder);
}

int FakeLlmServer::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

int FakeLlmServer::most_in_flight() const {
  absl::MutexLock lock(&mu_);
  return most_in_flight_;
}

size_t FakeLlmServer::pending() const {
  absl::MutexLock lock(&mu_);
  return script_.size() - next_;
}

void FakeLlmServer::Serve() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      const int conn = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      if (concurrent_) {
        connections_.emplace_back([this, conn] {
          HandleConnection(conn);
          close(conn);
        });
        continue;
      }
      HandleConnection(conn);
      close(conn);
    }
  }
}

void FakeLlmServer::HandleConnection(int fd) {
  std::string data;
  RecordedRequest request;
  size_t head_end = std::string::npos;
  size_t body_size = 0;
  bool continued = false;
  char buffer[65536];
  while (true) {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        if (!ParseHead(std::string_view(data).substr(0, head_end), &request)) return;
        body_size = static_cast<size_t>(std::strtoull(request.headers["content-length"].c_str(), nullptr, 10));
      }
    }
    if (head_end != std::string::npos) {
      if (!continued && Lower(request.headers["expect"]) == "100-continue") {
        continued = true;
        if (!SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return;
      }
      if (data.size() >= head_end + 4 + body_size) break;
    }
    if (data.size() > kMaxRequestBytes) return;
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(p, 2, 10000) <= 0 || p[1].revents != 0) return;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return;
    data.append(buffer, static_cast<size_t>(n));
  }
  request.body = data.substr(head_end + 4, body_size);
  ScriptedResponse response = {.status = 500, .reason = "Internal Server Error", .body = "no scripted response"};
  std::function<ScriptedResponse(const RecordedRequest&, size_t)> responder;
  size_t number = 0;
  {
    absl::MutexLock lock(&mu_);
    number = requests_.size();
    requests_.push_back(request);
    if (next_ < script_.size()) {
      response = script_[next_++];
    } else {
      responder = responder_;
    }
    most_in_flight_ = std::max(most_in_flight_, ++in_flight_);
  }
  if (responder) response = responder(request, number);
  Answer(fd, response);
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

void FakeLlmServer::Answer(int fd, const ScriptedResponse& response) {
  if (response.delay_seconds > 0) {
    // A hang: wait, but end early when the client gives up (closes) or the server stops.
    pollfd p[2] = {{fd, POLLIN | POLLRDHUP, 0}, {wake_read_, POLLIN, 0}};
    if (poll(p, 2, static_cast<int>(response.delay_seconds * 1000)) > 0) return;
  }
  if (response.close_without_answer) return;
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", response.status, response.reason);
  for (const auto& [name, value] : response.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += fmt::format("Content-Length: {}\r\nConnection: close\r\n\r\n", response.body.size());
  out += response.body;
  SendAll(fd, out);
}

}  // namespace sparseditto::llm::testing
