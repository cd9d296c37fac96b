// Normalised-source hashing, the key of duplicate detection (Candidate.source_hash).
//
// Two sources that differ only in comments and in the amount of white space are the same kernel to
// nvcc, so they get the same hash. Normalisation (NormaliseSource):
//   - `// ...` comments are removed up to (not including) the end of the line;
//   - `/* ... */` comments are replaced by one space (as the C preprocessor does); an unterminated one
//     runs to the end of the source;
//   - string and character literals are copied verbatim (escapes honoured), so comment markers and
//     spaces inside them are kept;
//   - a run of white space becomes one '\n' when it contains a line break (line breaks end
//     preprocessor directives, so they stay significant) and one ' ' otherwise; white space at the
//     start and end is dropped.
// Not handled (documented limits; they only cost a re-evaluation, never a false duplicate): raw string
// literals R"(...)", and backslash-newline continuations inside // comments.
//
// SourceHash is the lower-case hex SHA-256 (OpenSSL EVP) of the normalised source: 64 characters,
// the same on every machine and every run.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sparseditto {

std::string NormaliseSource(std::string_view source);

// SHA-256 hex of NormaliseSource(source). Never empty (aborts only if OpenSSL cannot allocate).
std::string SourceHash(std::string_view source);

}  // namespace sparseditto
