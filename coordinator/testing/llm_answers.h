// Test code only: the local protocol server (llm_mutator/testing/fake_llm_server.h) as a model that
// answers every request with a new child of the LLM search tests' seed (llm_search_fixture.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "llm_mutator/testing/fake_llm_server.h"
#include "llm_mutator/testing/provider_bodies.h"

namespace sparseditto::testing {

inline constexpr int64_t kCompletionTokens = 300;

// A diff that applies to the seed and to every child of these answers (they keep the UNROLL line) and
// makes a new source each time: a #define no other answer adds.
inline std::string UniqueDiff(size_t tag) {
  return fmt::format(
      "<<<<<<< SEARCH\n"
      "#define UNROLL 4                 // sparseditto:tunable values=[1, 2, 4, 8]\n"
      "=======\n"
      "#define UNROLL 4                 // sparseditto:tunable values=[1, 2, 4, 8]\n"
      "#define SD_ASYNC_TAG_{} {}\n"
      ">>>>>>> REPLACE\n",
      tag, tag);
}

// Answers every request with a new child after `delay` seconds (spread by up to +-20% over the
// requests, so that answers do not all come in step with the evaluations), billing the prompt's
// bytes / 4 and kCompletionTokens tokens; counts what it billed.
inline void AnswerWithNewChildren(llm::testing::FakeLlmServer& server, double delay, std::atomic<int64_t>* billed) {
  server.SetResponder([delay, billed](const llm::testing::RecordedRequest& request, size_t number) {
    const int64_t prompt_tokens = static_cast<int64_t>(request.body.size() / 4);
    if (billed != nullptr) *billed += prompt_tokens + kCompletionTokens;
    llm::testing::ScriptedResponse r =
        llm::testing::OpenAiAnswer(UniqueDiff(number), "stop", prompt_tokens, kCompletionTokens);
    r.delay_seconds = delay * (0.8 + 0.2 * static_cast<double>(number % 3));
    return r;
  });
}

}  // namespace sparseditto::testing
