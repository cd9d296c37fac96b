// Tokens per role in call metadata (DESIGN.md §3.7): every call of distributed mode carries
// "authorization: Bearer <token>", and the server maps the token to the caller's role (roles.h).
// Tokens are shared secrets; with TLS (tls.h) they are never on the wire in clear. Without TLS they
// are, so insecure channels are for loopback and tests only.
//
// No message, log line or status this file produces ever contains token text: a token file's errors
// name the file and line, an environment variable's name the variable, and a refused call says why
// without quoting what it presented.
#pragma once

#include <array>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/string_ref.h"
#include "rpc/roles.h"

namespace sparseditto::rpc {

// Tokens shorter than this are refused by FromFile, FromEnvironment and LoadClientToken: 16 random
// characters are beyond guessing over a network; fewer are likely a placeholder ("changeme").
inline constexpr size_t kMinTokenLength = 16;

// The environment variable FromEnvironment reads for `role`: SPARSEDITTO_TOKEN_EVALUATOR, ..._MUTATOR,
// ..._CLIENT, ..._ADMIN.
std::string TokenEnvironmentVariable(Role role);

// Server side: which token belongs to which role. Holds SHA-256 digests of the tokens, not the tokens.
// Thread-safety: const methods may be called from any number of threads at once (a server's handlers
// share one RoleTokens); Add must not run concurrently with anything else on the same object.
class RoleTokens {
 public:
  // Empty: no token is accepted (every call is Unauthenticated).
  RoleTokens() = default;

  // Reads a token file: one "<role> <token>" per line, separated by blanks; blank lines and lines whose
  // first non-blank character is '#' are ignored; a role may have several tokens (for rotation: add the
  // new one, move the callers, remove the old one). The file must be owner-only (read_file.h). Errors
  // name the file, and the line for a line's fault ("tokens.txt:3: ..."); none quotes a token:
  //   NotFound          no such file
  //   PermissionDenied  unreadable, or readable or writable by group or others (chmod 600 says ssh)
  //   InvalidArgument   not a regular file or over 1 MiB; a line that is not two words; an unknown role
  //                     (the word is quoted only when shorter than kMinTokenLength, so a token written
  //                     where the role belongs is not); a token shorter than kMinTokenLength or with a
  //                     byte that is not printable ASCII; a token on two lines (names both); no token at all
  static absl::StatusOr<RoleTokens> FromFile(const std::string& path);

  // From the environment variables TokenEnvironmentVariable(role), each optional: unset adds nothing
  // for that role; a value may hold several tokens separated by blanks (rotation). Every variable unset
  // gives an empty RoleTokens (check empty()). InvalidArgument naming the variable (never the value)
  // for a variable set but empty, and for a token that breaks FromFile's rules.
  static absl::StatusOr<RoleTokens> FromEnvironment();

  // Accepts `token` as `role` from now on. No checks (tests may use any token); FromFile's rules are
  // for configured tokens.
  void Add(Role role, std::string token);

  // True when no token is accepted.
  bool empty() const { return entries_.empty(); }

  // The role of the call whose metadata carries exactly one "authorization: Bearer <token>" (scheme in
  // any letter case, one or more spaces before the token) with a token of ours. Unauthenticated when
  // the header is missing, repeated or malformed, or the token is unknown; the message says which and
  // never contains what was presented. Every token is compared, in constant time for its digest
  // (CRYPTO_memcmp), so the time taken does not tell how much of a guess was right.
  absl::StatusOr<Role> Authenticate(
      const std::multimap<grpc::string_ref, grpc::string_ref>& client_metadata) const;

  // Authenticate(context.client_metadata()), then requires the role to be one of `allowed`:
  // PermissionDenied "an evaluator token cannot call <method>" otherwise. `method` names the call in
  // that message (e.g. "Coordinator/Drain"). Unauthenticated as Authenticate.
  absl::StatusOr<Role> Authorize(const grpc::ServerContext& context, std::initializer_list<Role> allowed,
                                 std::string_view method) const;
  // The same over headers held elsewhere (the HTTP front's, keys in lower case).
  absl::StatusOr<Role> Authorize(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                                 std::initializer_list<Role> allowed, std::string_view method) const;

 private:
  using Digest = std::array<unsigned char, 32>;
  struct Entry {
    Role role;
    Digest digest;
  };
  std::vector<Entry> entries_;
};

// Client side: the token to present. When `path` is non-empty, the file's content with leading and
// trailing blanks and newlines trimmed (the file must be owner-only, read_file.h); else the value of
// the environment variable `env_var` (e.g. "SPARSEDITTO_TOKEN"; nullptr: none), trimmed likewise.
// Errors name the file or the variable, never the token:
//   NotFound          `path` is empty and `env_var` is nullptr, unset or empty; or the file does not exist
//   PermissionDenied  the file is unreadable, or group or others may read or write it
//   InvalidArgument   the file is not regular; the file or variable holds only blanks; the token is shorter than
//                     kMinTokenLength or has a byte that is not printable ASCII (a space inside included)
absl::StatusOr<std::string> LoadClientToken(const std::string& path, const char* env_var);

// Adds "authorization: Bearer <token>" to the call's metadata. Call once per context, before the call.
void AttachToken(grpc::ClientContext& context, const std::string& token);

}  // namespace sparseditto::rpc
