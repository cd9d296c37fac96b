#include "llm_mutator/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>

#include "fmt/format.h"

namespace sparseditto::llm {
namespace {

struct Sink {
  HttpResponse* response;
  size_t max_bytes;
  bool too_large = false;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  Sink* sink = static_cast<Sink*>(user);
  const size_t bytes = size * count;
  if (sink->response->body.size() + bytes > sink->max_bytes) {
    sink->too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  sink->response->body.append(data, bytes);
  return bytes;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  HttpResponse* response = static_cast<HttpResponse*>(user);
  const size_t bytes = size * count;
  std::string_view line(data, bytes);
  if (line.starts_with("HTTP/")) {
    response->headers.clear();  // a new response (after 100 Continue)
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
  response->headers[name] = std::string(value);
  return bytes;
}

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

long Millis(double seconds) { return static_cast<long>(std::max(1.0, seconds * 1000.0)); }

}  // namespace

CurlTransport::CurlTransport() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpResponse CurlTransport::Post(const HttpRequest& request) {
  HttpResponse response;
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    response.transport = TransportError::kOther;
    response.error = "curl_easy_init failed";
    return response;
  }
  curl_slist* raw_headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    raw_headers = curl_slist_append(raw_headers, fmt::format("{}: {}", name, value).c_str());
  }
  raw_headers = curl_slist_append(raw_headers, "Expect:");  // no 100-continue round trip
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw_headers);
  Sink sink{&response, request.max_response_bytes};
  char error[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &response);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // thread-safe time-outs
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, Millis(request.timeout_seconds));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   Millis(std::min(request.connect_timeout_seconds, request.timeout_seconds)));
  if (request.low_speed_bytes_per_second > 0 && request.low_speed_seconds > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, request.low_speed_bytes_per_second);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, request.low_speed_seconds);
  }
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever the build supports (gzip)
  curl_easy_setopt(c, CURLOPT_USERAGENT, "sparseditto-llm-mutator/1");
  const CURLcode code = curl_easy_perform(c);
  response.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (sink.too_large) {
    response.transport = TransportError::kTooLarge;
    response.error = fmt::format("response body larger than {} bytes", request.max_response_bytes);
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    response.transport = TransportError::kTimeout;
  } else if (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
             code == CURLE_COULDNT_RESOLVE_PROXY) {
    response.transport = TransportError::kConnect;
  } else if (code != CURLE_OK) {
    response.transport = TransportError::kOther;
  }
  if (response.transport != TransportError::kNone && response.error.empty()) {
    response.error = error[0] != '\0' ? std::string(error) : std::string(curl_easy_strerror(code));
    while (!response.error.empty() && response.error.back() == '\n') response.error.pop_back();
  }
  return response;
}

}  // namespace sparseditto::llm
