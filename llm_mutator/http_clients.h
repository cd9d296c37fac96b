// The two HTTP wire protocols, each a ChatClient over an HttpTransport (http_transport.h):
//
// OpenAI-compatible Chat Completions (OpenAI, vLLM, SGLang, Ollama, llama.cpp):
//   POST {endpoint}/chat/completions, "Authorization: Bearer <key>" when a key is configured,
//   body {"model", "messages": [{"role": "system"}, {"role": "user"}], "temperature", "max_tokens"};
//   answer choices[0].message.content, choices[0].finish_reason ("length": truncated),
//   usage.prompt_tokens / usage.completion_tokens.
// Anthropic Messages:
//   POST {endpoint}/v1/messages, headers x-api-key, anthropic-version: 2023-06-01,
//   content-type: application/json; body {"model", "max_tokens", "system", "messages": [{"role":
//   "user"}], "temperature"}; answer content[] (the "text" blocks joined), stop_reason
//   ("max_tokens": truncated), usage.input_tokens / usage.output_tokens.
//
// Outcomes of HttpChatClient (chat_client.h): a 2xx answer is kOk, kTruncated, kEmptyAnswer or kMalformedResponse;
// anything else is ClassifyFailure's (provider_errors.h). An unset key variable is kAuthFailed
// without a request. The key is read from the environment for each request and is never kept,
// logged or put into a message. JSON is parsed without exceptions.
// Thread-safety: HttpChatClient::Complete may be called from many threads at once if the transport allows it
// (CurlTransport does). The transport must outlive the client.
#pragma once

#include <string>

#include "llm_mutator/chat_client.h"
#include "llm_mutator/http_transport.h"
#include "llm_mutator/model_options.h"

namespace sparseditto::llm {

// The request bodies (JSON text) the clients send.
std::string OpenAiRequestBody(const ModelOptions& model, const ChatRequest& request);
std::string AnthropicRequestBody(const ModelOptions& model, const ChatRequest& request);

// A 2xx body into a ChatResult (outcome, text, finish_reason, tokens, raw); pure.
ChatResult ParseOpenAiAnswer(const std::string& body);
ChatResult ParseAnthropicAnswer(const std::string& body);

// The client of an openai or anthropic model (ModelOptions.provider picks the protocol).
class HttpChatClient : public ChatClient {
 public:
  HttpChatClient(ModelOptions model, HttpTransport* transport) : model_(std::move(model)), transport_(transport) {}
  ChatResult Complete(const ChatRequest& request) override;

 private:
  const ModelOptions model_;
  HttpTransport* const transport_;
};

}  // namespace sparseditto::llm
