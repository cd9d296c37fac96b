// A unified diff of two texts by line, for the report's "what did this mutation change". The edit
// script is dtl's (Debian's libdtl-dev: the O(NP) diff of Wu, Manber and Myers, header-only); this
// file only splits lines, bounds the work and formats the hunks.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sparseditto::report {

// The lines of `text` without their '\n' (a final newline ends the last line, it does not start one).
std::vector<std::string> SplitLines(std::string_view text);

struct DiffOptions {
  size_t max_lines = 20000;      // either text longer (in lines): no diff, a note says why
  size_t max_output_lines = 400; // the diff is cut after this many lines, with a note of how many more
};

// "--- <from_name>\n+++ <to_name>\n@@ -a,b +c,d @@\n..." (each line of the texts prefixed by ' ', '-' or
// '+', with dtl's three lines of context); empty when the texts are equal. A text without a final newline is treated as if it had one.
// Not escaped: the caller escapes it for HTML.
std::string UnifiedDiff(std::string_view from, std::string_view to, std::string_view from_name,
                        std::string_view to_name, const DiffOptions& options = {});

}  // namespace sparseditto::report
