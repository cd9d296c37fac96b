// The static screen's matcher (static_screen.h has the rules): one pass over the tokens of a source,
// tracking braces (namespace, class, function and whether a function is __device__/__global__/
// __host__), #if regions over __CUDA_ARCH__, macros that carry asm, and namespace aliases and
// using-directives that make a namespace stand for std. Used on the candidate's own spelling and on
// its preprocessed translation unit (preprocessed_source.h).
// Internal to evaluator/compile; pure; thread-safe.
#pragma once

#include <vector>

#include "evaluator/compile/source_lexer.h"
#include "evaluator/compile/static_screen.h"

namespace sparseditto {

// Every refused construct among `tokens`, in token order (not sorted by line).
std::vector<ScreenFinding> RunScreener(std::vector<SourceToken> tokens);

}  // namespace sparseditto
