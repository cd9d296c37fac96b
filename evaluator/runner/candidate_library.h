// A compiled candidate loaded into the runner process (the kernel ABI's entry points).
// Owns the dlopen handle; unloading is left to process exit (a candidate's static destructors and
// CUDA state are not trusted to unload cleanly). Not thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"

#define SPARSEDITTO_HARNESS
#include "sparseditto_kernel.h"

namespace sparseditto {

struct CandidateLibrary {
  void* handle = nullptr;
  decltype(&sparseditto_prepare) prepare = nullptr;
  decltype(&sparseditto_run) run = nullptr;
  decltype(&sparseditto_release) release = nullptr;
  int abi_version = 0;
};

// dlopen(RTLD_NOW | RTLD_LOCAL) and resolve the entry points. Errors: NotFound (dlopen failed or a
// symbol is missing, naming it), FailedPrecondition (compiled against another ABI version).
absl::StatusOr<CandidateLibrary> LoadCandidateLibrary(const std::string& path);

}  // namespace sparseditto
