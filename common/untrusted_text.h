// Text that came from a candidate (DESIGN.md §3.6): its compile log, its run log (the runner child's
// stdout and stderr), the messages and notes its process reports. Such text is untrusted wherever it
// goes: a terminal, the population store, a log file, an LLM prompt. CleanUntrustedText is the one
// pass it takes before any of those:
//   1. invalid UTF-8 becomes U+FFFD;
//   2. anything shaped like a secret becomes "[redacted]": API keys (sk-..., sk-ant-..., AKIA/ASIA...,
//      ghp_/gho_/ghs_/ghu_/ghr_..., github_pat_..., xox[abprs]-...), the token after "Bearer ",
//      PEM private-key blocks (-----BEGIN ... PRIVATE KEY----- through its END line), a long
//      high-entropy run right after a word like key, token, secret, password or auth (with ':', '='
//      or quotes between), and every value, 8 bytes or longer, of an environment variable of ours
//      whose name looks like a credential (*KEY, *TOKEN, *SECRET, *PASSWORD, *PASSWD, *CREDENTIALS,
//      *_PAT; case-insensitive);
//   3. control bytes other than \n and \t are shown escaped ("\x1b", "\r", "\x00"), and so are C1
//      controls, DEL and the Unicode bidirectional overrides ("\u009b", "\u202e"), so no ANSI escape
//      sequence, cursor move or line rewrite reaches a terminal and no text reorders itself;
//   4. the result is capped at max_bytes: the head and the tail are kept (on UTF-8 boundaries) with
//      "\n[... N bytes cut ...]\n" between them.
// A cleaned text cleans to itself (idempotent), so applying it again at a later sink is harmless.
//
// This catches accidents (a candidate printing its environment, a log echoing a token); it cannot
// stop a process that can read a secret from encoding it some other way. Keeping secrets out of the
// candidate's reach is the sandbox's job.
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "eval_result.pb.h"

namespace sparseditto {

struct UntrustedTextOptions {
  size_t max_bytes = 64 * 1024;  // of the result, marker included (at least 256)
  // Exact strings to redact besides the patterns (each at least 8 bytes; shorter ones are ignored).
  std::vector<std::string> secret_values;
  // Also redact the values of our own credential-like environment variables (read once per process).
  bool secrets_from_environment = true;
};

std::string CleanUntrustedText(std::string_view text, const UntrustedTextOptions& options = {});

// Whether an environment variable named `name` holds a credential by its name (OPENAI_API_KEY,
// GH_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, ...).
bool IsCredentialVariableName(std::string_view name);

// The values (8 bytes or longer) of the credential-like variables in `environment` ("NAME=value"
// entries, as `environ` holds them; null-terminated array).
std::vector<std::string> CredentialValues(char* const* environment);

// Cleans every text field of an evaluation that the candidate's process could have written: the
// compile log and run log (64 KiB each), failure_detail (8 KiB), each check's detail and each
// baseline's note (1 KiB each).
void CleanUntrustedFields(v1::EvalResult& result, const UntrustedTextOptions& options = {});

}  // namespace sparseditto
