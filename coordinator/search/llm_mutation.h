// What the search loop and its callers know of LLM mutators (MutatorSpec kinds openai, anthropic,
// command): which kinds and operators are theirs. The loop reaches them only through the Mutator
// interface (mutator.h); the implementation over llm::LlmMutator is LlmSearchMutator
// (llm_search_mutator.h); tests may supply their own Mutator.
// Thread-safety: pure functions.
#pragma once

#include "candidate.pb.h"
#include "coordinator/search/mutator.h"
#include "task.pb.h"

namespace sparseditto {

// True for the MutatorSpec kinds served by LLM mutators: openai, anthropic, command.
bool IsLlmKind(v1::MutatorKind kind);
// True for LLM_DIFF, LLM_REWRITE, LLM_CROSSOVER.
bool IsLlmOperator(v1::MutationOperator op);
// True when one of the task's mutators is of an LLM kind.
bool HasLlmMutators(const v1::Task& task);

// The name the LLM mutator factories (BatchSearchOptions::make_llm, cli/llm_setup.h) return it by: one
// Mutator among the others.
using LlmMutation = Mutator;

}  // namespace sparseditto
