// What the search asks of the LLM mutator, and what it gets back (llm_mutator.h runs it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "llm_mutator/chat_client.h"
#include "task.pb.h"

namespace sparseditto::llm {

// The GPU the kernels are timed on. Zero / empty fields are left out of the prompt.
struct GpuInfo {
  std::string name;        // e.g. "NVIDIA H200"; never sent under privacy
  std::string arch;        // e.g. "sm_90"
  int sm_count = 0;
  int shared_memory_per_block_kib = 0;  // opt-in maximum
  int registers_per_thread_max = 0;
  double copy_bandwidth_gbs = 0;        // evaluator/gpu/device_limits.h
  double tensor_tflops = 0;
  double fp32_tflops = 0;
};

// A kernel with its evaluation: a parent, the mate of a crossover, or an inspiration.
struct EvaluatedCandidate {
  v1::Candidate candidate;  // id, source (the truth for tunables), seed_name, ...
  v1::EvalResult result;    // may be empty (not evaluated): the prompt says so
};

struct MutationRequest {
  v1::Task task;
  // LLM_DIFF and LLM_REWRITE: one parent; LLM_CROSSOVER: two (the child is built on the first).
  std::vector<EvaluatedCandidate> parents;
  std::vector<EvaluatedCandidate> inspirations;  // top and diverse kernels, best first
  v1::MutationOperator op = v1::MUTATION_OPERATOR_LLM_DIFF;
  std::string model;  // a model's name to use it; empty: the mutator's chooser picks one
  // The analyzer's features of the task's matrix (analyzer/pattern_analyzer.h FeaturesToJson),
  // pretty-printed JSON; empty: left out.
  std::string matrix_features_json;
  GpuInfo gpu;
  // Why this mutator's previous child of this parent failed ("SEARCH block 2 not found ..."), fed
  // back to the model; empty: none.
  std::string previous_failure;
  // What the search may still spend on this mutation (the task's max_tokens / max_money_usd less what
  // it spent); nullopt: no limit. Each request is reserved before it is sent: its worst case (every
  // byte of the prompt a token, plus the model's max_tokens of answer, at the model's prices) must fit
  // what is left after the requests this mutation already made, or it is not sent (kOverBudget).
  std::optional<int64_t> tokens_left;
  std::optional<double> usd_left;
};

enum class MutationOutcome {
  kOk,                // child holds a new source
  kModelFailed,       // the model's call failed: chat_outcome says how (rate limits after the retries,
                      // 5xx, time-out, truncated, malformed, empty, command failed, context too long
                      // even after shrinking)
  kModelDisabled,     // 401/403 now or earlier, or the key's variable is unset: the model takes no more work
  kDiffDidNotApply,   // SEARCH text not found or ambiguous (message names the block)
  kNoUsableCode,      // the answer has no well-formed diff / ```cuda block, or the child equals the parent
  kBadChild,          // the child's tunable declarations do not parse
  kInvalidRequest,    // the request itself is wrong (no parent, unknown model, an operator not for LLMs)
  kOverBudget,        // a request's worst case did not fit MutationRequest.tokens_left / usd_left: not sent
};

std::string_view MutationOutcomeName(MutationOutcome outcome);

struct MutationResult {
  MutationOutcome outcome = MutationOutcome::kOk;
  std::string message;   // why, when not kOk; fit to feed back as MutationRequest.previous_failure
  ChatOutcome chat_outcome = ChatOutcome::kOk;
  // The child when kOk: task_name, source, tunables, parent_ids, operator, mutator and model (the
  // model's name), generation (first parent's + 1), island and seed_name (first parent's), archs,
  // source_hash. The caller assigns id and created_unix_ms.
  v1::Candidate child;
  std::string model;           // the model asked (empty when none was)
  int64_t prompt_tokens = 0;   // summed over every attempt, shrunken retries included
  int64_t completion_tokens = 0;
  double cost_usd = 0;         // at the model's prices
  int attempts = 0;            // requests sent
  std::string over_limit;      // kOverBudget: "tokens" or "money", the limit the request did not fit
  int shrink_level = 0;        // 0: full prompt; 1: no inspirations; 2: parent logs trimmed; 3: no logs
  double seconds = 0;
  std::string prompt;          // the last prompt sent, as markdown (system, then user): prompt.md
  std::string response;        // the last raw answer (response body or command stdout): response.md
};

}  // namespace sparseditto::llm
