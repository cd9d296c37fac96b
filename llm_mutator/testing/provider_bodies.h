// Answers as the real servers send them, for the fake server's scripts: the bodies and headers of
// OpenAI's Chat Completions (vLLM and Ollama send the same shape) and Anthropic's Messages API,
// successes and their documented error bodies.
#pragma once

#include <cstdint>
#include <string>

#include "llm_mutator/testing/fake_llm_server.h"

namespace sparseditto::llm::testing {

// 200 with a chat.completion object: choices[0].message.content = `content`, finish_reason, usage.
ScriptedResponse OpenAiAnswer(const std::string& content, const std::string& finish_reason = "stop",
                              int64_t prompt_tokens = 1200, int64_t completion_tokens = 300);
// An error: {"error": {"message", "type", "param": null, "code"}} with OpenAI's headers.
ScriptedResponse OpenAiError(int status, const std::string& type, const std::string& code, const std::string& message);

// 200 with a message object: content [{"type": "text", "text"}], stop_reason, usage.
ScriptedResponse AnthropicAnswer(const std::string& text, const std::string& stop_reason = "end_turn",
                                 int64_t input_tokens = 1500, int64_t output_tokens = 400);
// An error: {"type": "error", "error": {"type", "message"}} with Anthropic's headers (request-id).
ScriptedResponse AnthropicError(int status, const std::string& type, const std::string& message);

// `r` with a Retry-After header.
ScriptedResponse WithRetryAfter(ScriptedResponse r, const std::string& value);

}  // namespace sparseditto::llm::testing
