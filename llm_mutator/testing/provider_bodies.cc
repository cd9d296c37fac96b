#include "llm_mutator/testing/provider_bodies.h"

#include "nlohmann/json.hpp"

namespace sparseditto::llm::testing {
namespace {

using nlohmann::json;

std::string Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 413: return "Request Entity Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 529: return "";  // Anthropic's own code; servers send no standard reason phrase
    default: return "Status";
  }
}

ScriptedResponse OpenAiResponse(int status, std::string body) {
  return {.status = status,
          .reason = Reason(status),
          .headers = {{"Content-Type", "application/json"},
                      {"x-request-id", "req_8d3c1f0e9b2a4c6d"},
                      {"openai-processing-ms", "1834"},
                      {"openai-version", "2020-10-01"}},
          .body = std::move(body)};
}

ScriptedResponse AnthropicResponse(int status, std::string body) {
  return {.status = status,
          .reason = Reason(status),
          .headers = {{"Content-Type", "application/json"},
                      {"request-id", "req_011CPW2nq5gHRsd3jm2mC8n7"},
                      {"anthropic-organization-id", "00000000-0000-0000-0000-000000000000"}},
          .body = std::move(body)};
}

}  // namespace

ScriptedResponse OpenAiAnswer(const std::string& content, const std::string& finish_reason, int64_t prompt_tokens,
                              int64_t completion_tokens) {
  json body = {{"id", "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"},
               {"object", "chat.completion"},
               {"created", 1741569952},
               {"model", "gpt-4.1-2025-04-14"},
               {"choices",
                json::array({{{"index", 0},
                              {"message", {{"role", "assistant"}, {"content", content}, {"refusal", nullptr},
                                           {"annotations", json::array()}}},
                              {"logprobs", nullptr},
                              {"finish_reason", finish_reason}}})},
               {"usage",
                {{"prompt_tokens", prompt_tokens},
                 {"completion_tokens", completion_tokens},
                 {"total_tokens", prompt_tokens + completion_tokens},
                 {"prompt_tokens_details", {{"cached_tokens", 0}, {"audio_tokens", 0}}}}},
               {"service_tier", "default"},
               {"system_fingerprint", "fp_b3f1157249"}};
  return OpenAiResponse(200, body.dump());
}

ScriptedResponse OpenAiError(int status, const std::string& type, const std::string& code, const std::string& message) {
  json error = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code.empty() ? json(nullptr) : json(code)}};
  return OpenAiResponse(status, json{{"error", error}}.dump(2));
}

ScriptedResponse AnthropicAnswer(const std::string& text, const std::string& stop_reason, int64_t input_tokens,
                                 int64_t output_tokens) {
  json body = {{"id", "msg_013Zva2CMHLNnXjNJJKqJ2EF"},
               {"type", "message"},
               {"role", "assistant"},
               {"model", "claude-sonnet-4-5-20250929"},
               {"content", json::array({{{"type", "text"}, {"text", text}}})},
               {"stop_reason", stop_reason},
               {"stop_sequence", nullptr},
               {"usage",
                {{"input_tokens", input_tokens},
                 {"cache_creation_input_tokens", 0},
                 {"cache_read_input_tokens", 0},
                 {"output_tokens", output_tokens},
                 {"service_tier", "standard"}}}};
  return AnthropicResponse(200, body.dump());
}

ScriptedResponse AnthropicError(int status, const std::string& type, const std::string& message) {
  json body = {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}, {"request_id", "req_011CSHoEeqs5C35K2UUqR7Fy"}};
  return AnthropicResponse(status, body.dump());
}

ScriptedResponse WithRetryAfter(ScriptedResponse r, const std::string& value) {
  r.headers.emplace_back("retry-after", value);
  return r;
}

}  // namespace sparseditto::llm::testing
