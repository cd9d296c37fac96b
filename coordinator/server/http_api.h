// The coordinator's runs as JSON over HTTP (issue 26 item 5), for users who script from anything: the
// calls of ClientService (client_service.h) with the same logic, tokens and limits, as requests and
// answers that need no network (http_server.h serves them with cpp-httplib). Endpoints (README,
// "The HTTP API"):
//   POST /v1/runs              {"run": NAME, "task": <a task file's fields, or tasks/defaults>} -> 201
//   POST /generate_kernel      the same (the name the seed documents sketch)
//   GET  /v1/runs/{run}        the run's status (RunStatusResponse)
//   GET  /v1/runs/{run}/events one RunEvent per line (JSON lines) until the run ends; ?after=SEQUENCE
//   GET  /v1/runs/{run}/export the exported kernels (ExportRunResponse: files with names and texts)
// Answers are protobuf's JSON mapping of the service's messages with the proto's field names (64-bit
// integers are strings, as that mapping writes them). Every error is a JSON object
//   {"error": MESSAGE, "code": "INVALID_ARGUMENT", "where": {"request": "POST /v1/runs", "line": 3,
//    "column": 12, "field": "tasks[0].dtype"}}
// ("line", "column" and "field" where known), with the status: 400 bad JSON, task or run name; 401 no or
// unknown token; 403 another role's token; 404 unknown run or endpoint; 405 a method the endpoint does
// not take; 409 a run of that name exists, or an export before the run started; 413 a body over
// max_body_bytes; 429 the queue is full, or max_streams event streams are open; 503 the coordinator
// is stopping.
// Thread-safety: Handle may be called from any number of threads at once; a reply's stream runs on
// the caller's thread and holds no lock while it writes.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/server/client_service.h"
#include "rpc/role_tokens.h"

namespace sparseditto {

struct HttpApiOptions {
  // The largest request body: 1 MiB, the size of the largest task file the loader reads
  // (kMaxTaskFileBytes), and far below gRPC's message limit, which holds more than one task.
  size_t max_body_bytes = size_t{1} << 20;
  // Event streams open at once at most: 32. Each holds a server thread for as long as its run
  // searches, so more would leave none for the other calls; the 33rd is 429 until one ends.
  int max_streams = 32;
};

// What the server glue took from a request. The path is URL-decoded.
struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // "/v1/runs/nm24/events"
  std::multimap<std::string, std::string> query;
  std::vector<std::string> authorization;      // the value of every Authorization header, in order
  std::string body;
};

// Writes one chunk of a stream; false: the client went away.
using HttpWrite = std::function<bool(std::string_view chunk)>;

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;                                   // JSON, ending in a newline; empty with a stream
  std::vector<std::pair<std::string, std::string>> headers;  // Allow, WWW-Authenticate, Location
  // Set on a 200 of /events: writes its lines (with `write`) until the run ends, the coordinator
  // stops (a last line {"error": ..., "code": "UNAVAILABLE"}) or `gone` says the client left.
  std::function<void(const HttpWrite& write, const std::function<bool()>& gone)> stream;
};

class HttpApi {
 public:
  // Borrows both; they must outlive this and every stream it returned.
  HttpApi(ClientServiceImpl* runs, const rpc::RoleTokens* tokens, HttpApiOptions options = {})
      : runs_(runs), tokens_(tokens), options_(options), open_streams_(std::make_shared<std::atomic<int>>(0)) {}

  // The answer to `request`; never throws. The token is checked before the body is looked at.
  HttpReply Handle(const HttpRequest& request);

  // The error answer for `status` (its HTTP status from its code, the JSON body above); `where` names
  // the request ("POST /v1/runs"). For the server glue's own refusals (413, a malformed request).
  static HttpReply Error(const absl::Status& status, std::string_view where);
  // The HTTP status of an absl code, as the header's table says (500 for the codes not listed there).
  static int HttpStatusOf(absl::StatusCode code);

  const HttpApiOptions& options() const { return options_; }

 private:
  HttpReply Route(const HttpRequest& request);  // Handle without its catch
  HttpReply Submit(const HttpRequest& request, const std::string& where);
  HttpReply Events(const HttpRequest& request, const std::string& run, const std::string& where);

  ClientServiceImpl* const runs_;
  const rpc::RoleTokens* const tokens_;
  const HttpApiOptions options_;
  // The streams open now; shared with each stream, which gives its place back when it is destroyed.
  std::shared_ptr<std::atomic<int>> open_streams_;
};

}  // namespace sparseditto
