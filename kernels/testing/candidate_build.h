// Test support: compile a candidate source with nvcc into a shared library and load it.
// (The evaluator has the production compiler with caching, limits and a worker pool; tests of the
// seed library use this small, dependency-free path.)
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

#define SPARSEDITTO_HARNESS
#include "sparseditto_kernel.h"

namespace sparseditto::testing {

// Compiles `source_path` with `nvcc` for every arch in `archs` ("sm_80", "sm_90", ...) into
// `output_path`. Returns the compile log (with ptxas -v resource lines) on success; InvalidArgument holding the log on failure.
absl::StatusOr<std::string> CompileCandidate(const std::string& nvcc, const std::string& source_path,
                                             const std::vector<std::string>& archs,
                                             const std::string& output_path);

// The entry points of a loaded candidate library.
struct CandidateLibrary {
  void* handle = nullptr;
  decltype(&sparseditto_prepare) prepare = nullptr;
  decltype(&sparseditto_run) run = nullptr;
  decltype(&sparseditto_release) release = nullptr;
  decltype(&sparseditto_abi_version) abi_version = nullptr;
  decltype(&sparseditto_layouts) layouts = nullptr;  // optional: null when the library does not export it
};

// dlopen()s the library and resolves the four symbols (and sparseditto_layouts where exported);
// NotFound naming the first missing one.
absl::StatusOr<CandidateLibrary> LoadCandidate(const std::string& library_path);

}  // namespace sparseditto::testing
