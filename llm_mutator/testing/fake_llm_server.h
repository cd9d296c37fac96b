// A local HTTP/1.1 server for the LLM client tests: raw POSIX sockets on 127.0.0.1 with an ephemeral
// port, so the tests control every byte of every answer (status line, headers, body, timing) and see
// every byte of every request.
//
// Answers come from a script, in order: each request takes the next ScriptedResponse (an empty script
// answers 500 "no scripted response"). A response can wait before answering (a hang the client's time
// limit must end; the wait ends early when the server stops) or close the connection without a word.
// Every request is recorded (method, path, headers with lower-case names, body). One connection at a
// time, "Connection: close" after each answer; "Expect: 100-continue" is honoured.
// Thread-safety: Enqueue and requests() may be called while the server thread runs; `mu_` guards the
// script and the record. The destructor stops the thread and closes the sockets.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sparseditto::llm::testing {

struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct ScriptedResponse {
  int status = 200;
  std::string reason = "OK";
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Length and Connection
  std::string body;
  double delay_seconds = 0;          // wait this long before answering (a hang)
  bool close_without_answer = false;  // read the request, then close
};

class FakeLlmServer {
 public:
  // Binds 127.0.0.1:0 and starts the server thread; nullptr if the socket cannot be set up (the
  // test should fail then).
  static std::unique_ptr<FakeLlmServer> Start();
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"

  void Enqueue(ScriptedResponse response) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<RecordedRequest> requests() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t pending() const ABSL_LOCKS_EXCLUDED(mu_);  // scripted responses not yet used

 private:
  FakeLlmServer(int listen_fd, int port, int wake_read, int wake_write);
  void Serve();
  void HandleConnection(int fd);

  const int listen_fd_;
  const int port_;
  const int wake_read_;
  const int wake_write_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  std::vector<ScriptedResponse> script_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sparseditto::llm::testing
