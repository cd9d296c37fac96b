#include "llm_mutator/http_clients.h"

#include "fmt/format.h"
#include "llm_mutator/provider_errors.h"
#include "nlohmann/json.hpp"

namespace sparseditto::llm {
namespace {

using nlohmann::json;

// A 2xx body as JSON, or a kMalformedResponse result.
std::optional<json> ParseBody(const std::string& body, ChatResult* r) {
  r->raw = body;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    r->outcome = ChatOutcome::kMalformedResponse;
    r->message = fmt::format("the answer is not a JSON object ({} bytes)", body.size());
    return std::nullopt;
  }
  return j;
}

int64_t IntField(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return 0;
  return j[key].get<int64_t>();
}

}  // namespace

std::string OpenAiRequestBody(const ModelOptions& model, const ChatRequest& request) {
  json messages = json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  messages.push_back({{"role", "user"}, {"content", request.user}});
  json body = {{"model", model.model},
               {"messages", messages},
               {"temperature", model.temperature},
               {"max_tokens", model.max_tokens},
               {"stream", false}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string AnthropicRequestBody(const ModelOptions& model, const ChatRequest& request) {
  json body = {{"model", model.model},
               {"max_tokens", model.max_tokens},
               {"messages", json::array({{{"role", "user"}, {"content", request.user}}})},
               {"temperature", model.temperature}};
  if (!request.system.empty()) body["system"] = request.system;
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

ChatResult ParseOpenAiAnswer(const std::string& body) {
  ChatResult r;
  std::optional<json> j = ParseBody(body, &r);
  if (!j) return r;
  if (j->contains("usage")) {
    r.prompt_tokens = IntField((*j)["usage"], "prompt_tokens");
    r.completion_tokens = IntField((*j)["usage"], "completion_tokens");
  }
  const json* choices = j->contains("choices") ? &(*j)["choices"] : nullptr;
  if (choices == nullptr || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
    r.outcome = ChatOutcome::kMalformedResponse;
    r.message = "the answer has no choices[0]";
    return r;
  }
  const json& choice = (*choices)[0];
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    r.finish_reason = choice["finish_reason"].get<std::string>();
  }
  if (!choice.contains("message") || !choice["message"].is_object()) {
    r.outcome = ChatOutcome::kMalformedResponse;
    r.message = "choices[0] has no message";
    return r;
  }
  const json& message = choice["message"];
  if (message.contains("content") && message["content"].is_string()) r.text = message["content"].get<std::string>();
  if (r.finish_reason == "length") {
    r.outcome = ChatOutcome::kTruncated;
    r.message = fmt::format("the answer was cut at max_tokens ({} completion tokens)", r.completion_tokens);
  } else if (r.text.empty()) {
    r.outcome = ChatOutcome::kEmptyAnswer;
    r.message = fmt::format("the answer has no text (finish_reason '{}')", r.finish_reason);
  }
  return r;
}

ChatResult ParseAnthropicAnswer(const std::string& body) {
  ChatResult r;
  std::optional<json> j = ParseBody(body, &r);
  if (!j) return r;
  if (j->contains("usage")) {
    r.prompt_tokens = IntField((*j)["usage"], "input_tokens");
    r.completion_tokens = IntField((*j)["usage"], "output_tokens");
  }
  if (j->contains("stop_reason") && (*j)["stop_reason"].is_string()) {
    r.finish_reason = (*j)["stop_reason"].get<std::string>();
  }
  if (!j->contains("content") || !(*j)["content"].is_array()) {
    r.outcome = ChatOutcome::kMalformedResponse;
    r.message = "the answer has no content list";
    return r;
  }
  for (const json& block : (*j)["content"]) {
    if (block.is_object() && block.value("type", "") == "text" && block.contains("text") && block["text"].is_string()) {
      r.text += block["text"].get<std::string>();
    }
  }
  if (r.finish_reason == "max_tokens") {
    r.outcome = ChatOutcome::kTruncated;
    r.message = fmt::format("the answer was cut at max_tokens ({} output tokens)", r.completion_tokens);
  } else if (r.text.empty()) {
    r.outcome = ChatOutcome::kEmptyAnswer;
    r.message = fmt::format("the answer has no text block (stop_reason '{}')", r.finish_reason);
  }
  return r;
}

ChatResult HttpChatClient::Complete(const ChatRequest& request) {
  absl::StatusOr<std::string> key = ReadApiKey(model_);
  if (!key.ok()) {
    ChatResult r;
    r.outcome = ChatOutcome::kAuthFailed;
    r.message = std::string(key.status().message());
    return r;
  }
  const bool anthropic = model_.provider == Provider::kAnthropic;
  HttpRequest http;
  http.url = model_.endpoint + (anthropic ? "/v1/messages" : "/chat/completions");
  http.body = anthropic ? AnthropicRequestBody(model_, request) : OpenAiRequestBody(model_, request);
  http.timeout_seconds = model_.timeout_seconds;
  http.headers.emplace_back("Content-Type", "application/json");
  if (anthropic) {
    if (!key->empty()) http.headers.emplace_back("x-api-key", *key);
    http.headers.emplace_back("anthropic-version", std::string(kAnthropicVersion));
  } else if (!key->empty()) {
    http.headers.emplace_back("Authorization", "Bearer " + *key);
  }
  const HttpResponse response = transport_->Post(http);
  if (response.transport != TransportError::kNone || response.status < 200 || response.status >= 300) {
    return ClassifyFailure(response, *key);
  }
  ChatResult r = anthropic ? ParseAnthropicAnswer(response.body) : ParseOpenAiAnswer(response.body);
  r.http_status = response.status;
  r.seconds = response.seconds;
  r.message = RedactSecrets(r.message, *key);
  return r;
}

}  // namespace sparseditto::llm
