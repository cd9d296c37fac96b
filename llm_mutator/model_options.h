// One model a mutator can ask: where it is, how to ask it, what it costs. Built from the task's
// MutatorSpec (proto/task.proto; YAML documented in configs/tasks/README.md), so a model is configured
// in one place whether it comes from a task file or a mutator file (task/mutator_file.h).
//
// Secrets: only the NAME of the environment variable holding an API key is kept here. The key is read
// from the environment at the moment a request is made (ReadApiKey), is never stored in an object,
// logged, or put into a message, and every message built from a server's answer goes through
// RedactSecrets first.
// Pure values and functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto::llm {

enum class Provider { kOpenAiCompatible, kAnthropic, kCommand };

// "openai", "anthropic", "command".
std::string_view ProviderName(Provider provider);

inline constexpr std::string_view kOpenAiDefaultEndpoint = "https://api.openai.com/v1";
inline constexpr std::string_view kAnthropicDefaultEndpoint = "https://api.anthropic.com";
inline constexpr std::string_view kAnthropicVersion = "2023-06-01";
inline constexpr int kDefaultMaxRetries = 4;
inline constexpr int kDefaultMaxOutputTokens = 8192;

struct ModelOptions {
  std::string name;      // MutatorSpec.name; unique among the models of a mutator
  Provider provider = Provider::kOpenAiCompatible;
  std::string endpoint;  // base URL without a trailing '/'; the provider's when the spec has none
  std::string model;     // the model name the endpoint serves (a label for a command)
  std::string api_key_env;  // NAME of the variable with the key; empty: no key sent
  double temperature = 0;
  int32_t max_tokens = kDefaultMaxOutputTokens;  // output tokens per request
  int32_t concurrency = 1;                      // requests in flight at once, >= 1
  double usd_per_million_input_tokens = 0;
  double usd_per_million_output_tokens = 0;
  double timeout_seconds = 120;  // one request (one attempt), connection included
  int32_t max_retries = kDefaultMaxRetries;  // retries of a 429/503/529 answer; 0: none
  bool privacy = false;          // prompts carry only the kernel and the matrix statistics
  double weight = 1;             // share of requests under weighted model choice
  std::vector<std::string> command;  // kCommand: argv
};

// ModelOptions from a validated spec of kind openai, anthropic or command. InvalidArgument for
// builtin or unspecified kinds, an empty model (openai/anthropic), an empty command, concurrency < 1
// or a timeout <= 0.
absl::StatusOr<ModelOptions> ModelOptionsFromSpec(const v1::MutatorSpec& spec);

// Dollars for this many tokens at the model's prices.
double CostUsd(const ModelOptions& model, int64_t prompt_tokens, int64_t completion_tokens);

// The key from the variable model.api_key_env names. Empty when api_key_env is empty. When it names a
// variable that is unset or empty: Unauthenticated "<model name>: environment variable <NAME> is not
// set" (the name only).
absl::StatusOr<std::string> ReadApiKey(const ModelOptions& model);

// `text` with every occurrence of `secret` (when non-empty) and every token that looks like an API
// key (sk-..., sk-ant-..., "Bearer ...") replaced by "[redacted]".
std::string RedactSecrets(std::string_view text, std::string_view secret);

}  // namespace sparseditto::llm
