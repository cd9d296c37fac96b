// A tiny template renderer of our own (no Debian package renders mustache-like text from C++ without
// pulling in a web stack): the prompts in configs/prompts/ are plain text with
//   {{name}}               the variable's value, verbatim (no escaping: prompts are not HTML)
//   {{#name}}...{{/name}}  the section, only when the variable is non-empty
//   {{^name}}...{{/name}}  the section, only when the variable is empty
// Sections nest. A name is [A-Za-z0-9_]+; spaces inside the braces are allowed ("{{ name }}").
// Strict: a name not in `vars`, an unclosed or mismatched section, or a malformed tag is an error, so a
// typo in an edited template is found on the first render, not by a model.
// Pure; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace sparseditto::llm {

using TemplateVars = std::map<std::string, std::string, std::less<>>;

// InvalidArgument "<template_name>:<line>: <reason>" for the faults above.
absl::StatusOr<std::string> RenderTemplate(std::string_view text, const TemplateVars& vars,
                                           std::string_view template_name);

}  // namespace sparseditto::llm
