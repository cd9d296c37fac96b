#include "llm_mutator/model_options.h"

#include <cstdlib>

#include "fmt/format.h"

namespace sparseditto::llm {

std::string_view ProviderName(Provider provider) {
  switch (provider) {
    case Provider::kOpenAiCompatible: return "openai";
    case Provider::kAnthropic: return "anthropic";
    case Provider::kCommand: return "command";
  }
  return "unknown";
}

absl::StatusOr<ModelOptions> ModelOptionsFromSpec(const v1::MutatorSpec& spec) {
  ModelOptions m;
  m.name = spec.name();
  switch (spec.kind()) {
    case v1::MUTATOR_KIND_OPENAI_COMPATIBLE:
      m.provider = Provider::kOpenAiCompatible;
      m.endpoint = spec.endpoint().empty() ? std::string(kOpenAiDefaultEndpoint) : spec.endpoint();
      break;
    case v1::MUTATOR_KIND_ANTHROPIC:
      m.provider = Provider::kAnthropic;
      m.endpoint = spec.endpoint().empty() ? std::string(kAnthropicDefaultEndpoint) : spec.endpoint();
      break;
    case v1::MUTATOR_KIND_COMMAND:
      m.provider = Provider::kCommand;
      if (spec.command().empty()) return absl::InvalidArgumentError(fmt::format("{}: command is empty", spec.name()));
      m.command.assign(spec.command().begin(), spec.command().end());
      break;
    default:
      return absl::InvalidArgumentError(fmt::format("{}: not an LLM mutator kind", spec.name()));
  }
  while (!m.endpoint.empty() && m.endpoint.back() == '/') m.endpoint.pop_back();
  m.model = spec.model();
  if (m.provider != Provider::kCommand && m.model.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: model is empty", spec.name()));
  }
  m.api_key_env = spec.api_key_env();
  m.temperature = spec.temperature();
  if (spec.max_tokens() > 0) m.max_tokens = spec.max_tokens();
  m.concurrency = spec.concurrency();
  m.usd_per_million_input_tokens = spec.usd_per_million_input_tokens();
  m.usd_per_million_output_tokens = spec.usd_per_million_output_tokens();
  m.timeout_seconds = spec.timeout_seconds();
  if (spec.has_max_retries()) m.max_retries = spec.max_retries();
  m.privacy = spec.privacy();
  m.weight = spec.weight() > 0 ? spec.weight() : 1.0;
  if (m.concurrency < 1) return absl::InvalidArgumentError(fmt::format("{}: concurrency must be >= 1", m.name));
  if (!(m.timeout_seconds > 0)) return absl::InvalidArgumentError(fmt::format("{}: timeout must be > 0", m.name));
  if (m.max_retries < 0) return absl::InvalidArgumentError(fmt::format("{}: max_retries must be >= 0", m.name));
  return m;
}

double CostUsd(const ModelOptions& model, int64_t prompt_tokens, int64_t completion_tokens) {
  return (static_cast<double>(prompt_tokens) * model.usd_per_million_input_tokens +
          static_cast<double>(completion_tokens) * model.usd_per_million_output_tokens) /
         1e6;
}

absl::StatusOr<std::string> ReadApiKey(const ModelOptions& model) {
  if (model.api_key_env.empty()) return std::string();
  const char* value = std::getenv(model.api_key_env.c_str());
  if (value == nullptr || *value == '\0') {
    return absl::UnauthenticatedError(
        fmt::format("{}: environment variable {} is not set", model.name, model.api_key_env));
  }
  return std::string(value);
}

namespace {

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '*' || c == '.';
}

}  // namespace

std::string RedactSecrets(std::string_view text, std::string_view secret) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!secret.empty() && text.substr(i).starts_with(secret)) {
      out += "[redacted]";
      i += secret.size();
      continue;
    }
    const bool word_start = i == 0 || !IsKeyChar(text[i - 1]);
    const std::string_view rest = text.substr(i);
    size_t skip = 0;
    if (word_start && rest.starts_with("sk-")) skip = 3;
    if (rest.starts_with("Bearer ") || rest.starts_with("bearer ")) skip = 7;
    if (skip > 0) {
      size_t j = i + skip;
      while (j < text.size() && IsKeyChar(text[j])) ++j;
      if (j - i - skip >= 4) {
        out += rest.substr(0, skip == 7 ? 7 : 0);
        out += "[redacted]";
        i = j;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

}  // namespace sparseditto::llm
