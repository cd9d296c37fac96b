// A local HTTP/1.1 server for the LLM client tests: raw POSIX sockets on 127.0.0.1 with an ephemeral
// port, so the tests control every byte of every answer (status line, headers, body, timing) and see
// every byte of every request.
//
// Answers come from a script, in order: each request takes the next ScriptedResponse (an empty script
// answers 500 "no scripted response"). A response can wait before answering (a hang the client's time
// limit must end; the wait ends early when the server stops) or close the connection without a word.
// Every request is recorded (method, path, headers with lower-case names, body). By default one
// connection at a time; Start(true) serves each connection on a thread of its own, so that requests
// overlap (a model that answers several calls at once), and most_in_flight() tells how many requests
// were being answered at once at most (received in full, not yet answered). Once the script is used
// up, a responder (SetResponder) answers, when set. "Connection: close" after each answer;
// "Expect: 100-continue" is honoured.
// Thread-safety: Enqueue, SetResponder and the accessors may be called while the server's threads
// run; `mu_` guards the script, the responder, the counts and the record. The responder is called on
// a connection's thread, outside `mu_`. The destructor stops the threads and closes the sockets.
#pragma once

#include <functional>
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
  static std::unique_ptr<FakeLlmServer> Start(bool concurrent = false);
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"

  void Enqueue(ScriptedResponse response) ABSL_LOCKS_EXCLUDED(mu_);
  // Answers the requests that come once the script is used up (`number`: the request's, from 0).
  void SetResponder(std::function<ScriptedResponse(const RecordedRequest& request, size_t number)> responder)
      ABSL_LOCKS_EXCLUDED(mu_);
  int in_flight() const ABSL_LOCKS_EXCLUDED(mu_);       // requests being answered now
  int most_in_flight() const ABSL_LOCKS_EXCLUDED(mu_);  // the most ever at once
  std::vector<RecordedRequest> requests() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t pending() const ABSL_LOCKS_EXCLUDED(mu_);  // scripted responses not yet used

 private:
  FakeLlmServer(int listen_fd, int port, int wake_read, int wake_write, bool concurrent);
  void Serve();
  void HandleConnection(int fd);
  void Answer(int fd, const ScriptedResponse& response);

  const int listen_fd_;
  const int port_;
  const int wake_read_;
  const int wake_write_;
  const bool concurrent_;
  std::thread thread_;
  std::vector<std::thread> connections_;  // the server thread's (concurrent_), joined by the destructor

  mutable absl::Mutex mu_;
  std::vector<ScriptedResponse> script_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::function<ScriptedResponse(const RecordedRequest&, size_t)> responder_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int most_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sparseditto::llm::testing
