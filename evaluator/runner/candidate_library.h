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
  // sparseditto_layouts()'s mask, read once at load; SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) for a library
  // that does not export it. The candidate's claim: a wrong one is caught by the judge's check.
  uint32_t layouts = SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN);
};

// dlopen(RTLD_NOW | RTLD_LOCAL) and resolve the entry points. Errors: NotFound (dlopen failed or a
// symbol is missing, naming it), FailedPrecondition (compiled against another ABI version).
absl::StatusOr<CandidateLibrary> LoadCandidateLibrary(const std::string& path);

// OK when `library.layouts` names `layout` (enum sd_layout). FailedPrecondition otherwise, naming the
// layout and the mask: the harness never hands a kernel a layout its mask lacks (sparseditto_kernel.h).
absl::Status CheckLayoutSupported(const CandidateLibrary& library, int32_t layout);

}  // namespace sparseditto
