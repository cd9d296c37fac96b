// The compile stage's check of what a candidate library exports: the static screen cannot see
// through macros, but the linker's output cannot hide. A candidate's library is loaded into the
// runner, so an exported C symbol such as `malloc`, `clock_gettime` or `cudaEventElapsedTime`, an
// ifunc, or a strong definition inside namespace std could interpose on what the harness calls.
// Candidates are built with -fvisibility=hidden, so only what they mark default-visible shows up.
// Pure functions (ReadExportedSymbols reads one file); thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseditto {

struct ExportedSymbol {
  std::string name;
  bool weak = false;   // STB_WEAK or STB_GNU_UNIQUE (template instantiations, inline functions)
  bool ifunc = false;  // STT_GNU_IFUNC: resolved by code at load time
};

// The defined, default- or protected-visibility global/weak symbols of an ELF64 shared library's
// dynamic symbol table. NotFound if the file cannot be opened; InvalidArgument if it is not a
// little-endian ELF64 shared object or its tables are out of bounds.
absl::StatusOr<std::vector<ExportedSymbol>> ReadExportedSymbols(const std::string& library_path);

// What is wrong with a candidate's exports, one sentence each; empty when it is fine. Allowed:
// sparseditto_* (and sparseditto_prepare, _run, _release, _abi_version must all be there), C++
// (mangled _Z) names outside namespace std, and weak std:: instantiations. Refused: any other C-linkage
// name, ifuncs, strong definitions in namespace std.
std::vector<std::string> CandidateExportProblems(const std::vector<ExportedSymbol>& symbols);

}  // namespace sparseditto
