// Strict parsing of a model's answer into a child source. Two forms:
//
// A diff: one or more blocks, each marker alone on its line (trailing spaces and '\r' ignored):
//     <<<<<<< SEARCH
//     lines of the parent, exactly
//     =======
//     their replacement
//     >>>>>>> REPLACE
//   Blocks apply in order, each to the text the previous ones left. Text outside blocks (prose,
//   ``` fences) is ignored. The search text must occur exactly once, as whole lines (from a line's start
//   to a line's end; a part of a line never matches): not found and ambiguous are
//   failures that name the block, so the reason can be fed back to the model in the next prompt.
// A rewrite: exactly one fenced block tagged cuda (or cu, c++, cpp) holding the whole file; fences
//   with other tags are ignored.
//
// Errors (absl::Status, messages written to be shown to a model):
//   InvalidArgument     no block at all; a block without its '=======' or '>>>>>>> REPLACE' line; an
//                       empty SEARCH text; no ```cuda block or several.
//   FailedPrecondition  the diff does not apply: "SEARCH block 2 not found in the parent (first
//                       line: '...')" or "SEARCH block 1 matches 3 places in the parent; ...".
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseditto::llm {

struct EditBlock {
  std::string search;   // without the final newline of its last line
  std::string replace;
};

absl::StatusOr<std::vector<EditBlock>> ParseEditBlocks(std::string_view answer);

// `source` with the blocks applied in order.
absl::StatusOr<std::string> ApplyEditBlocks(std::string_view source, const std::vector<EditBlock>& blocks);

// ParseEditBlocks then ApplyEditBlocks.
absl::StatusOr<std::string> ApplyDiffAnswer(std::string_view source, std::string_view answer);

// The one ```cuda block of a rewrite answer, ending in a newline.
absl::StatusOr<std::string> ExtractCudaBlock(std::string_view answer);

}  // namespace sparseditto::llm
