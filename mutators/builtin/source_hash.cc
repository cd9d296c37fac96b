#include "mutators/builtin/source_hash.h"

#include <openssl/evp.h>

#include <cctype>
#include <cstdlib>
#include <memory>

#include "fmt/format.h"

namespace sparseditto {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string NormaliseSource(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  bool pending_newline = false;
  auto flush_space = [&] {
    if (!out.empty()) {
      if (pending_newline) {
        out += '\n';
      } else if (pending_space) {
        out += ' ';
      }
    }
    pending_space = pending_newline = false;
  };
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && next == '*') {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
      pending_space = true;
      continue;
    }
    if (IsSpace(c)) {
      if (c == '\n') pending_newline = true;
      pending_space = true;
      ++i;
      continue;
    }
    flush_space();
    if (c == '"' || c == '\'') {
      out += c;
      ++i;
      while (i < s.size() && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size()) out += s[i++];
        out += s[i++];
      }
      if (i < s.size() && s[i] == c) out += s[i++];
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::string SourceHash(std::string_view source) {
  const std::string normalised = NormaliseSource(source);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), normalised.data(), normalised.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest, &length) != 1) {
    std::abort();  // only on allocation failure inside OpenSSL; an empty hash would alias every source
  }
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace sparseditto
