// Text from a run's store made safe for an HTML page. Candidate sources, compile and run logs, failure
// details and model answers are written by hostile code or models (DESIGN.md §3.6): they may hold
// markup ("</script>", "<img onerror=...>"), bytes that are not UTF-8, control characters and megabytes.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sparseditto::report {

// `text` as HTML character data or a quoted attribute value: & < > " ' as entities; every byte sequence
// that is not valid UTF-8, every control character but tab, newline and carriage return, and U+FFFE/F,
// each become U+FFFD. The result holds no markup and is valid UTF-8.
std::string EscapeHtml(std::string_view text);

// `text` if it is at most `max_bytes`, else its head and tail (each about half of max_bytes, cut at a
// line break near the cut when there is one) around a line "[... N bytes left out ...]". Not escaped.
std::string TrimMiddle(std::string_view text, size_t max_bytes);

// A JSON text (nlohmann's dump) made safe inside <script type="application/json">: < > & as \u003c,
// \u003e, \u0026 (they can only occur inside JSON strings, where the escapes mean the same), so no
// "</script>" or "<!--" ends or changes the element.
std::string JsonForScript(std::string_view json);

}  // namespace sparseditto::report
