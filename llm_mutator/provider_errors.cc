#include "llm_mutator/provider_errors.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "fmt/format.h"
#include "llm_mutator/model_options.h"
#include "nlohmann/json.hpp"

namespace sparseditto::llm {

std::string_view ChatOutcomeName(ChatOutcome outcome) {
  switch (outcome) {
    case ChatOutcome::kOk: return "ok";
    case ChatOutcome::kRateLimited: return "rate_limited";
    case ChatOutcome::kOverloaded: return "overloaded";
    case ChatOutcome::kServerError: return "server_error";
    case ChatOutcome::kTimeout: return "timeout";
    case ChatOutcome::kConnectionFailed: return "connection_failed";
    case ChatOutcome::kAuthFailed: return "auth_failed";
    case ChatOutcome::kContextTooLong: return "context_too_long";
    case ChatOutcome::kBadRequest: return "bad_request";
    case ChatOutcome::kTruncated: return "truncated";
    case ChatOutcome::kMalformedResponse: return "malformed_response";
    case ChatOutcome::kEmptyAnswer: return "empty_answer";
    case ChatOutcome::kCommandFailed: return "command_failed";
  }
  return "unknown";
}

bool IsRetryable(ChatOutcome outcome) {
  return outcome == ChatOutcome::kRateLimited || outcome == ChatOutcome::kOverloaded;
}

std::optional<double> ParseRetryAfter(const std::map<std::string, std::string>& headers) {
  auto it = headers.find("retry-after");
  if (it == headers.end()) return std::nullopt;
  const std::string& v = it->second;
  double seconds = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || end != v.data() + v.size() || !(seconds >= 0) || seconds > 86400) return std::nullopt;
  return seconds;
}

bool SaysContextTooLong(std::string_view error_text) {
  std::string lower(error_text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view needle : {"context_length_exceeded", "maximum context length", "prompt is too long",
                                  "context length", "context size", "context window", "too many tokens"}) {
    if (lower.find(needle) != std::string::npos) return true;
  }
  return false;
}

namespace {

// "type: message" from either protocol's error body; the body itself (cut) when it is not JSON.
std::string ErrorText(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error")) {
    const nlohmann::json& e = j["error"];
    if (e.is_string()) return e.get<std::string>();  // some servers: {"error": "message"}
    if (e.is_object()) {
      std::string type, message, code;
      if (e.contains("type") && e["type"].is_string()) type = e["type"].get<std::string>();
      if (e.contains("message") && e["message"].is_string()) message = e["message"].get<std::string>();
      if (e.contains("code") && e["code"].is_string()) code = e["code"].get<std::string>();
      std::string text = type.empty() ? message : fmt::format("{}: {}", type, message);
      if (!code.empty() && code != type) text += fmt::format(" ({})", code);
      return text;
    }
  }
  if (j.is_object() && j.contains("detail") && j["detail"].is_string()) return j["detail"].get<std::string>();
  return body.size() > 300 ? body.substr(0, 300) + "..." : body;
}

}  // namespace

ChatResult ClassifyFailure(const HttpResponse& response, std::string_view secret) {
  ChatResult r;
  r.seconds = response.seconds;
  r.raw = RedactSecrets(response.body, secret);
  if (response.transport != TransportError::kNone) {
    r.outcome = response.transport == TransportError::kTimeout ? ChatOutcome::kTimeout : ChatOutcome::kConnectionFailed;
    r.message = RedactSecrets(response.error, secret);
    return r;
  }
  r.http_status = response.status;
  r.retry_after_seconds = ParseRetryAfter(response.headers);
  const std::string text = ErrorText(response.body);
  const long s = response.status;
  if (s == 401 || s == 403) {
    r.outcome = ChatOutcome::kAuthFailed;
  } else if (s == 429) {
    r.outcome = ChatOutcome::kRateLimited;
  } else if (s == 503 || s == 529) {
    r.outcome = ChatOutcome::kOverloaded;
  } else if ((s == 400 || s == 413) && SaysContextTooLong(text)) {
    r.outcome = ChatOutcome::kContextTooLong;
  } else if (s >= 400 && s < 500) {
    r.outcome = ChatOutcome::kBadRequest;
  } else if (s >= 500) {
    r.outcome = ChatOutcome::kServerError;
  } else {
    r.outcome = ChatOutcome::kMalformedResponse;  // 1xx/3xx: not an answer
  }
  r.message = RedactSecrets(fmt::format("HTTP {} {}", s, text), secret);
  return r;
}

}  // namespace sparseditto::llm
