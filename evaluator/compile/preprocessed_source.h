// The candidate's own tokens in its preprocessed translation unit (the output of `nvcc -E`, which is
// gcc's -E: line markers `# <line> "<file>" <flags>`), each attributed to the line of the candidate's
// source it came from. Tokens of every other file (the toolkit's and the system's headers, the ABI
// header, the implicit -include cuda_runtime.h, <built-in>, <command-line>) are dropped, so a
// header's own syscall() or asm is never the candidate's; what a header's macro expands to on the
// candidate's line is kept (gcc puts a macro's expansion at its use). The markers themselves are
// dropped too; other directives that survive preprocessing (#pragma) stay, as the lexer marks them.
//
// The candidate cannot move its own code into another file's lines: the raw screen refuses #line
// and GNU line-marker directives, quoted includes other than the ABI header, and absolute or ".."
// include paths.
// Pure functions; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "evaluator/compile/source_lexer.h"

namespace sparseditto {

// Lexes the lines of `main_file` (the name nvcc was given, e.g. "candidate.cu") in `preprocessed`.
// Each token's `line` is its line in the candidate's source. Never fails: text before the first
// marker counts as the main file's, an unreadable marker is ignored.
std::vector<SourceToken> LexPreprocessedMainFile(std::string_view preprocessed, std::string_view main_file);

}  // namespace sparseditto
