// What an HTTP answer that is not a success means, the same way for both protocols: the status code,
// the error body ({"error": {"message", "type", "code"}} for OpenAI-compatible servers,
// {"type": "error", "error": {"type", "message"}} for Anthropic) and Retry-After. Pure; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "llm_mutator/chat_client.h"
#include "llm_mutator/http_transport.h"

namespace sparseditto::llm {

// Retry-After in its seconds form ("7", "1.5"); nullopt for the HTTP-date form, a negative or
// malformed value, or no header.
std::optional<double> ParseRetryAfter(const std::map<std::string, std::string>& headers);

// True when an error message says the prompt does not fit the model's context (OpenAI code
// "context_length_exceeded", vLLM/OpenAI "maximum context length", Anthropic "prompt is too long",
// Ollama/llama.cpp "context length" / "exceeds the available context size").
bool SaysContextTooLong(std::string_view error_text);

// The outcome of a response that is not a 2xx success, or of a transport failure: fills outcome,
// message ("HTTP 429 rate_limit_error: <server message>", redacted of `secret`), http_status,
// retry_after_seconds and raw. 401/403 -> kAuthFailed; 429 -> kRateLimited; 503, 529 -> kOverloaded;
// 400/413 saying the context is too long -> kContextTooLong; other 4xx -> kBadRequest; other 5xx ->
// kServerError; transport time-out -> kTimeout; other transport failures -> kConnectionFailed.
ChatResult ClassifyFailure(const HttpResponse& response, std::string_view secret);

}  // namespace sparseditto::llm
