// SHA-256 of bytes as lower-case hex (OpenSSL EVP). The one hash of the project's content keys: the
// compile cache's keys (evaluator/compile/compile_cache.h) and the normalised source hash of the
// duplicate index (mutators/builtin/source_hash.h).
// Aborts when OpenSSL cannot allocate its context: an empty or partial hash would make different
// contents share one key. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sparseditto {

std::string Sha256Hex(std::string_view data);

}  // namespace sparseditto
