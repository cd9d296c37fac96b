#include "rpc/role_tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "common/status_format.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "rpc/read_file.h"

namespace sparseditto::rpc {
namespace {

constexpr std::string_view kBlanks = " \t";
constexpr std::string_view kAuthorizationKey = "authorization";
constexpr std::string_view kBearer = "bearer";

std::array<unsigned char, 32> DigestOf(std::string_view token) {
  std::array<unsigned char, 32> digest{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate; a zero digest would match nothing a caller
  // could present (no known preimage), so the failure refuses rather than accepts.
  if (EVP_Digest(token.data(), token.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) digest.fill(0);
  return digest;
}

// Empty when `token` may be configured; else why not, without quoting it.
std::string TokenProblem(std::string_view token) {
  if (token.size() < kMinTokenLength) {
    return fmt::format("a token of {} characters; at least {} are needed", token.size(), kMinTokenLength);
  }
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) return "a token with a byte that is not printable ASCII";
  }
  return "";
}

std::string_view Trim(std::string_view text, std::string_view blanks) {
  const size_t first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(blanks);
  return text.substr(first, last - first + 1);
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (true) {
    const size_t start = text.find_first_not_of(kBlanks, at);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(text.find_first_of(kBlanks, start), text.size());
    words.push_back(text.substr(start, end - start));
    at = end;
  }
  return words;
}

// Collects configured tokens with where each came from ("tokens.txt:3", "$SPARSEDITTO_TOKEN_ADMIN"),
// so that a token given twice is refused naming both places.
class TokenCollector {
 public:
  absl::Status Add(Role role, std::string_view token, std::string where) {
    if (std::string problem = TokenProblem(token); !problem.empty()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", where, problem));
    }
    const auto digest = DigestOf(token);
    for (const Seen& seen : seen_) {
      if (CRYPTO_memcmp(seen.digest.data(), digest.data(), digest.size()) == 0) {
        return absl::InvalidArgumentError(
            fmt::format("{}: the same token as {}; each token must be given once", where, seen.where));
      }
    }
    seen_.push_back({digest, std::move(where)});
    tokens_.Add(role, std::string(token));
    return absl::OkStatus();
  }
  RoleTokens Take() && { return std::move(tokens_); }

 private:
  struct Seen {
    std::array<unsigned char, 32> digest;
    std::string where;
  };
  std::vector<Seen> seen_;
  RoleTokens tokens_;
};

}  // namespace

std::string TokenEnvironmentVariable(Role role) {
  std::string name = fmt::format("SPARSEDITTO_TOKEN_{}", RoleName(role));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

absl::StatusOr<RoleTokens> RoleTokens::FromFile(const std::string& path) {
  SD_ASSIGN_OR_RETURN(const std::string content, ReadFileContent(path, {.owner_only = true}));
  TokenCollector collector;
  std::string_view rest = content;
  int line_number = 0;
  int tokens = 0;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view line = Trim(rest.substr(0, end), " \t\r");
    rest.remove_prefix(std::min(end + 1, rest.size()));
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", path, line_number);
    const std::vector<std::string_view> words = Words(line);
    if (words.size() != 2) {
      return absl::InvalidArgumentError(
          fmt::format("{}: expected '<role> <token>', found {} words", where, words.size()));
    }
    absl::StatusOr<Role> role = ParseRole(words[0]);
    if (!role.ok()) {
      // A long word may be a token written where the role belongs: say its length, not its text.
      if (words[0].size() >= kMinTokenLength) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: the first word ({} characters) is not a role (expected '<role> <token>')", where, words[0].size()));
      }
      return absl::InvalidArgumentError(fmt::format("{}: {}", where, role.status().message()));
    }
    SD_RETURN_IF_ERROR(collector.Add(*role, words[1], where));
    ++tokens;
  }
  if (tokens == 0) return absl::InvalidArgumentError(fmt::format("{}: no token in the file", path));
  return std::move(collector).Take();
}

absl::StatusOr<RoleTokens> RoleTokens::FromEnvironment() {
  TokenCollector collector;
  for (Role role : kAllRoles) {
    const std::string variable = TokenEnvironmentVariable(role);
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr) continue;
    const std::vector<std::string_view> words = Words(value);
    if (words.empty()) return absl::InvalidArgumentError(fmt::format("${} is set but empty", variable));
    for (std::string_view token : words) SD_RETURN_IF_ERROR(collector.Add(role, token, "$" + variable));
  }
  return std::move(collector).Take();
}

void RoleTokens::Add(Role role, std::string token) {
  entries_.push_back({role, DigestOf(token)});
}

absl::StatusOr<Role> RoleTokens::Authenticate(
    const std::multimap<grpc::string_ref, grpc::string_ref>& client_metadata) const {
  const auto [first, last] = client_metadata.equal_range(grpc::string_ref(kAuthorizationKey.data(), kAuthorizationKey.size()));
  if (first == last) {
    return absl::UnauthenticatedError("no authorization header (expected 'authorization: Bearer <token>')");
  }
  if (std::next(first) != last) return absl::UnauthenticatedError("more than one authorization header");
  const std::string_view value(first->second.data(), first->second.size());
  const bool bearer = value.size() > kBearer.size() && strncasecmp(value.data(), kBearer.data(), kBearer.size()) == 0 &&
                      (value[kBearer.size()] == ' ');
  const std::string_view token = bearer ? Trim(value.substr(kBearer.size()), " ") : std::string_view();
  if (!bearer || token.empty() || token.find(' ') != std::string_view::npos) {
    return absl::UnauthenticatedError("the authorization header is not 'Bearer <token>'");
  }
  if (entries_.empty()) return absl::UnauthenticatedError("this server accepts no token (none is configured)");
  const Digest presented = DigestOf(token);
  bool found = false;
  Role role = Role::kClient;
  for (const Entry& entry : entries_) {  // every entry, also after a match
    const bool match = CRYPTO_memcmp(entry.digest.data(), presented.data(), presented.size()) == 0;
    if (match && !found) role = entry.role;
    found = found || match;
  }
  if (!found) return absl::UnauthenticatedError("unknown token");
  return role;
}

absl::StatusOr<Role> RoleTokens::Authorize(const grpc::ServerContext& context, std::initializer_list<Role> allowed,
                                           std::string_view method) const {
  return Authorize(context.client_metadata(), allowed, method);
}

absl::StatusOr<Role> RoleTokens::Authorize(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                                           std::initializer_list<Role> allowed, std::string_view method) const {
  SD_ASSIGN_OR_RETURN(const Role role, Authenticate(metadata));
  for (Role ok : allowed) {
    if (ok == role) return role;
  }
  const std::string_view name = RoleName(role);
  const bool vowel = !name.empty() && std::string_view("aeiou").find(name.front()) != std::string_view::npos;
  return absl::PermissionDeniedError(fmt::format("{} {} token cannot call {}", vowel ? "an" : "a", name, method));
}

absl::StatusOr<std::string> LoadClientToken(const std::string& path, const char* env_var) {
  std::string content;
  std::string where;
  if (!path.empty()) {
    SD_ASSIGN_OR_RETURN(content, ReadFileContent(path, {.owner_only = true}));
    where = path;
  } else {
    const char* value = env_var != nullptr ? std::getenv(env_var) : nullptr;
    if (value == nullptr || *value == '\0') {
      return absl::NotFoundError(env_var != nullptr
                                     ? fmt::format("no token: no token file given and ${} is not set", env_var)
                                     : std::string("no token: no token file given"));
    }
    content = value;
    where = fmt::format("${}", env_var);
  }
  const std::string token(Trim(content, " \t\r\n"));
  if (token.empty()) return absl::InvalidArgumentError(fmt::format("{}: empty (no token)", where));
  if (std::string problem = TokenProblem(token); !problem.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", where, problem));
  }
  return token;
}

void AttachToken(grpc::ClientContext& context, const std::string& token) {
  context.AddMetadata(std::string(kAuthorizationKey), "Bearer " + token);
}

}  // namespace sparseditto::rpc
