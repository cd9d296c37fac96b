// ScrubPrivate and PromptMarkdown (prompt_builder.h).
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "fmt/format.h"
#include "llm_mutator/prompt_builder.h"

namespace sparseditto::llm {
namespace {

bool PathChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
         c == '_' || c == '-' || c == '+' || c == '@' || c == '~';
}

bool WordChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Whole-word occurrences only, so a user named "cuda" does not eat "cudaMalloc".
void ReplaceWord(std::string& text, const std::string& word, std::string_view with) {
  if (word.size() < 2) return;
  size_t at = text.find(word);
  while (at != std::string::npos) {
    const size_t end = at + word.size();
    const bool whole = (at == 0 || !WordChar(text[at - 1])) && (end >= text.size() || !WordChar(text[end]));
    if (whole) {
      text.replace(at, word.size(), with);
      at = text.find(word, at + with.size());
    } else {
      at = text.find(word, at + 1);
    }
  }
}

std::vector<std::string> SystemIdentities(std::string* host) {
  std::vector<std::string> users;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) == 0) *host = name;
  for (const char* var : {"USER", "LOGNAME"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') users.emplace_back(v);
  }
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_name != nullptr) users.emplace_back(pw->pw_name);
  return users;
}

}  // namespace

std::string ScrubPrivate(std::string_view text, const std::vector<std::string>& extra) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const bool start = i == 0 || !PathChar(text[i - 1]);
    const bool slash = text[i] == '/' || (text[i] == '~' && i + 1 < text.size() && text[i + 1] == '/');
    if (start && slash) {
      size_t j = i + 1;
      int slashes = text[i] == '/' ? 1 : 0;
      while (j < text.size() && PathChar(text[j])) slashes += text[j++] == '/';
      const std::string_view word = text.substr(i, j - i);
      if (slashes >= 2 || (word.size() > 1 && text[i] == '~')) {  // "/tmp/x", "~/x"; not "a / b" or "//"
        out += "<path>";
        i = j;
        continue;
      }
    }
    out += text[i++];
  }
  std::string host;
  const std::vector<std::string> users = SystemIdentities(&host);
  ReplaceWord(out, host, "<host>");
  for (const std::string& user : users) ReplaceWord(out, user, "<user>");
  for (const std::string& word : extra) ReplaceWord(out, word, "<redacted>");
  return out;
}

std::string PromptMarkdown(const ChatRequest& request) {
  return fmt::format("# system\n\n{}\n\n# user\n\n{}\n", request.system, request.user);
}

}  // namespace sparseditto::llm
