#include "common/untrusted_text.h"

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstring>

#include "fmt/format.h"

extern char** environ;

namespace sparseditto {
namespace {

constexpr std::string_view kRedacted = "[redacted]";
constexpr size_t kMinSecretValueBytes = 8;

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsWordChar(char c) { return IsAlnum(c) || c == '_'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithNoCase(std::string_view text, size_t at, std::string_view prefix) {
  if (text.size() - at < prefix.size()) return false;
  for (size_t k = 0; k < prefix.size(); ++k) {
    if (Lower(text[at + k]) != Lower(prefix[k])) return false;
  }
  return true;
}

// Length of the run at `at` of bytes accepted by `accept`.
template <typename Accept>
size_t RunLength(std::string_view text, size_t at, Accept accept) {
  size_t end = at;
  while (end < text.size() && accept(text[end])) ++end;
  return end - at;
}

// --- 1. UTF-8 ---------------------------------------------------------------------------------

// Length of the valid UTF-8 sequence at `at` (1-4), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s, size_t at) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[at + k]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 ? 2 : 0;
  if (n == 0 || b0 > 0xF4 || at + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
  }
  if (n == 3 && ((b0 == 0xE0 && byte(1) < 0xA0) || (b0 == 0xED && byte(1) >= 0xA0))) return 0;  // overlong, surrogate
  if (n == 4 && ((b0 == 0xF0 && byte(1) < 0x90) || (b0 == 0xF4 && byte(1) >= 0x90))) return 0;  // overlong, > U+10FFFF
  return n;
}

std::string RepairUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

// --- 2. Secrets -------------------------------------------------------------------------------

struct PrefixRule {
  std::string_view prefix;
  bool (*accept)(char);
  size_t min_after, max_after;  // max_after 0: unbounded
};

bool KeyChar(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
bool UpperDigit(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool SlackChar(char c) { return IsAlnum(c) || c == '-'; }
bool TokenChar(char c) {
  return IsAlnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
}

constexpr PrefixRule kPrefixRules[] = {
    {"sk-ant-", KeyChar, 20, 0}, {"sk-", KeyChar, 20, 0},
    {"AKIA", UpperDigit, 16, 16}, {"ASIA", UpperDigit, 16, 16},
    {"ghp_", IsAlnum, 30, 0}, {"gho_", IsAlnum, 30, 0}, {"ghu_", IsAlnum, 30, 0}, {"ghs_", IsAlnum, 30, 0},
    {"ghr_", IsAlnum, 30, 0}, {"github_pat_", IsWordChar, 20, 0},
    {"xoxb-", SlackChar, 10, 0}, {"xoxp-", SlackChar, 10, 0}, {"xoxa-", SlackChar, 10, 0},
    {"xoxr-", SlackChar, 10, 0}, {"xoxs-", SlackChar, 10, 0},
};

constexpr std::string_view kSecretWords[] = {"key", "token", "secret", "password", "passwd", "auth", "credential"};

double EntropyBitsPerByte(std::string_view run) {
  std::array<int, 256> counts{};
  for (char c : run) ++counts[static_cast<unsigned char>(c)];
  double bits = 0;
  for (int count : counts) {
    if (count == 0) continue;
    const double p = static_cast<double>(count) / static_cast<double>(run.size());
    bits -= p * std::log2(p);
  }
  return bits;
}

// A value that looks generated: long, letters and digits mixed, or hex of 32 or more, and not low entropy.
bool LooksRandom(std::string_view run, size_t min_length) {
  if (run.size() < min_length) return false;
  bool letter = false, digit = false;
  for (char c : run) {
    letter |= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    digit |= c >= '0' && c <= '9';
  }
  return letter && digit && EntropyBitsPerByte(run) >= 3.0;
}

// Where a match starts replacing, and where it ends.
struct Match {
  size_t keep = 0;  // bytes at the start kept as they are ("Bearer ", "api_key=")
  size_t end = 0;   // 0: no match
};

Match MatchPem(std::string_view text, size_t i) {
  if (text.compare(i, 11, "-----BEGIN ") != 0) return {};
  const size_t label_end = text.find("-----", i + 11);
  if (label_end == std::string_view::npos || text.substr(i, label_end - i).find("PRIVATE KEY") == std::string_view::npos ||
      text.substr(i, label_end - i).find('\n') != std::string_view::npos) {
    return {};
  }
  const size_t end_line = text.find("-----END ", label_end + 5);
  if (end_line == std::string_view::npos) return {0, text.size()};
  const size_t close = text.find("-----", end_line + 9);
  return {0, close == std::string_view::npos ? text.size() : close + 5};
}

Match MatchPrefixToken(std::string_view text, size_t i) {
  for (const PrefixRule& rule : kPrefixRules) {
    if (text.compare(i, rule.prefix.size(), rule.prefix) != 0) continue;
    const size_t after = i + rule.prefix.size();
    const size_t run = RunLength(text, after, rule.accept);
    if (run >= rule.min_after && (rule.max_after == 0 || run == rule.max_after)) return {0, after + run};
  }
  return {};
}

// "Bearer <token>", "Basic <base64>", "token <token>" (HTTP Authorization schemes).
Match MatchAuthScheme(std::string_view text, size_t i) {
  for (std::string_view scheme : {"bearer", "basic", "token"}) {
    if (!StartsWithNoCase(text, i, scheme)) continue;
    const size_t spaces = RunLength(text, i + scheme.size(), [](char c) { return c == ' '; });
    if (spaces == 0) continue;
    const size_t at = i + scheme.size() + spaces;
    const size_t run = RunLength(text, at, TokenChar);
    if (run >= (scheme == "basic" ? 12u : 16u) && LooksRandom(text.substr(at, run), 12)) return {at - i, at + run};
  }
  return {};
}

// "api_key=...", "\"token\": \"...\"", "password: ...": a secret-looking word, a separator, a value.
Match MatchKeyValue(std::string_view text, size_t i, size_t word_length) {
  std::string word(text.substr(i, word_length));
  for (char& c : word) c = Lower(c);
  bool secret_word = false, password = false;
  for (std::string_view w : kSecretWords) {
    if (word.find(w) == std::string::npos) continue;
    secret_word = true;
    password |= w == "password" || w == "passwd";
  }
  if (!secret_word) return {};
  size_t at = i + word_length;
  at += RunLength(text, at, [](char c) { return c == '"' || c == '\'' || c == ' '; });
  if (at >= text.size() || (text[at] != ':' && text[at] != '=')) return {};
  ++at;
  at += RunLength(text, at, [](char c) { return c == '"' || c == '\'' || c == ' ' || c == '>'; });
  const size_t run = RunLength(text, at, TokenChar);
  const std::string_view value = text.substr(at, run);
  const bool redact = LooksRandom(value, 16) || (password && value.size() >= kMinSecretValueBytes);
  return redact ? Match{at - i, at + run} : Match{};
}

void ReplaceAll(std::string& text, std::string_view value) {
  if (value.size() < kMinSecretValueBytes) return;
  for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at + kRedacted.size())) {
    text.replace(at, value.size(), kRedacted);
  }
}

const std::vector<std::string>& EnvironmentSecrets() {
  static const std::vector<std::string>* secrets = new std::vector<std::string>(CredentialValues(environ));
  return *secrets;
}

std::string ScrubSecrets(std::string text, const UntrustedTextOptions& options) {
  for (const std::string& value : options.secret_values) ReplaceAll(text, value);
  if (options.secrets_from_environment) {
    for (const std::string& value : EnvironmentSecrets()) ReplaceAll(text, value);
  }
  std::string out;
  out.reserve(text.size());
  const std::string_view view = text;
  for (size_t i = 0; i < view.size();) {
    const bool boundary = i == 0 || !IsAlnum(view[i - 1]);
    Match match;
    if (boundary) {
      match = MatchPem(view, i);
      if (match.end == 0) match = MatchPrefixToken(view, i);
      if (match.end == 0) match = MatchAuthScheme(view, i);
    }
    size_t word = 0;
    if (match.end == 0 && (i == 0 || !IsWordChar(view[i - 1]))) {
      word = RunLength(view, i, IsWordChar);
      if (word > 0) match = MatchKeyValue(view, i, word);
    }
    if (match.end > 0) {
      out.append(view.substr(i, match.keep));
      out += kRedacted;
      i = match.end;
    } else {  // one byte on: a token may start inside this word ("MY_sk-...")
      out += view[i++];
    }
  }
  return out;
}

// --- 3. Terminal safety -----------------------------------------------------------------------

std::string EscapeControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += c == '\r' ? std::string("\\r") : fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      const size_t n = Utf8SequenceLength(text, i);  // the text is valid UTF-8 here
      uint32_t code = 0;
      if (n == 2) code = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      if (n == 3) {
        code = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6) |
               (static_cast<unsigned char>(text[i + 2]) & 0x3Fu);
      }
      const bool c1 = code >= 0x80 && code <= 0x9F;
      const bool bidi = code == 0x200E || code == 0x200F || (code >= 0x202A && code <= 0x202E) ||
                        (code >= 0x2066 && code <= 0x2069) || code == 0x061C;
      if (c1 || bidi) {
        out += fmt::format("\\u{:04x}", code);
      } else {
        out.append(text.substr(i, n == 0 ? 1 : n));
      }
      i += n == 0 ? 1 : n;
    }
  }
  return out;
}

// --- 4. Length --------------------------------------------------------------------------------

// Moves `at` back to the start of a UTF-8 sequence.
size_t Utf8Boundary(std::string_view text, size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

std::string CapHeadAndTail(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  // The marker's digits are bounded by the text's size; reserve for the longest.
  const size_t marker_room = fmt::format("\n[... {} bytes cut ...]\n", text.size()).size();
  const size_t keep = max_bytes > marker_room ? max_bytes - marker_room : 0;
  const size_t head = Utf8Boundary(text, keep / 2);
  const size_t tail_start = Utf8Boundary(text, text.size() - (keep - keep / 2));
  const size_t tail_begin = tail_start < head ? head : tail_start;
  return text.substr(0, head) + fmt::format("\n[... {} bytes cut ...]\n", tail_begin - head) + text.substr(tail_begin);
}

}  // namespace

bool IsCredentialVariableName(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
  for (std::string_view suffix : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS", "_PAT"}) {
    if (upper.ends_with(suffix)) return true;
  }
  return upper.find("SECRET") != std::string::npos;
}

std::vector<std::string> CredentialValues(char* const* environment) {
  std::vector<std::string> values;
  for (char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view variable = *entry;
    const size_t equals = variable.find('=');
    if (equals == std::string_view::npos || !IsCredentialVariableName(variable.substr(0, equals))) continue;
    if (variable.size() - equals - 1 >= kMinSecretValueBytes) values.emplace_back(variable.substr(equals + 1));
  }
  return values;
}

std::string CleanUntrustedText(std::string_view text, const UntrustedTextOptions& options) {
  const size_t max_bytes = options.max_bytes < 256 ? 256 : options.max_bytes;
  return CapHeadAndTail(EscapeControls(ScrubSecrets(RepairUtf8(text), options)), max_bytes);
}

void CleanUntrustedFields(v1::EvalResult& result, const UntrustedTextOptions& options) {
  const auto clean = [&options](const std::string& text, size_t max_bytes) {
    UntrustedTextOptions sized = options;
    sized.max_bytes = max_bytes;
    return CleanUntrustedText(text, sized);
  };
  result.set_compile_log(clean(result.compile_log(), 64 * 1024));
  result.set_run_log(clean(result.run_log(), 64 * 1024));
  result.set_failure_detail(clean(result.failure_detail(), 8 * 1024));
  for (v1::CorrectnessCheck& check : *result.mutable_checks()) check.set_detail(clean(check.detail(), 1024));
  for (std::string& verdict : *result.mutable_sanitizer_verdicts()) verdict = clean(verdict, 512);
  for (auto& [n, list] : *result.mutable_baselines()) {
    for (v1::BaselineTime& baseline : *list.mutable_baselines()) baseline.set_note(clean(baseline.note(), 1024));
  }
}

}  // namespace sparseditto
