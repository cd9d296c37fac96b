// HTTP POST for the LLM clients: the seam between the wire protocols (openai_client.h,
// anthropic_client.h) and the network. CurlTransport is the real one (libcurl); tests point it at a
// local server (llm_mutator/testing/fake_llm_server.h) so every byte is under their control.
//
// One call is one attempt: no retries here (the retry layer is retry.h, and only there) and no
// redirects followed. A transport failure (no connection, time-out, reset) is an HttpResponse with
// `transport` set, never an error status and never an exception.
// Headers are sent as given; header values are never logged or put into `error`.
// Thread-safety: CurlTransport::Post may be called from many threads at once (one curl handle per call).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sparseditto::llm {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // name, value
  std::string body;
  double timeout_seconds = 120;          // whole transfer, connection included (CURLOPT_TIMEOUT_MS)
  double connect_timeout_seconds = 10;   // CURLOPT_CONNECTTIMEOUT_MS (capped at timeout_seconds)
  // A transfer slower than low_speed_bytes_per_second for low_speed_seconds is ended (a stalled
  // server). 0: no such check, the default: a non-streaming answer sends nothing until the model has
  // finished, which may take minutes, so only timeout_seconds bounds it.
  long low_speed_bytes_per_second = 0;
  long low_speed_seconds = 60;
  size_t max_response_bytes = 16 << 20;  // more is a kTooLarge failure
};

enum class TransportError {
  kNone,         // a complete HTTP response arrived (any status)
  kTimeout,      // CURLE_OPERATION_TIMEDOUT (time limit or low-speed limit)
  kConnect,      // could not resolve or connect
  kTooLarge,     // the body passed max_response_bytes
  kOther,        // any other libcurl failure (reset, malformed HTTP, TLS)
};

struct HttpResponse {
  TransportError transport = TransportError::kNone;
  std::string error;  // libcurl's message when transport != kNone
  long status = 0;    // HTTP status code
  std::map<std::string, std::string> headers;  // names in lower case; the last value of a repeated one
  std::string body;
  double seconds = 0;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual HttpResponse Post(const HttpRequest& request) = 0;
};

// libcurl. curl_global_init runs once per process (thread-safe, on first construction).
class CurlTransport : public HttpTransport {
 public:
  CurlTransport();
  HttpResponse Post(const HttpRequest& request) override;
};

}  // namespace sparseditto::llm
